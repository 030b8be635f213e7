"""The flow table: what every other layer consumes as "the traffic", with optional dependencies."""

from dataclasses import dataclass, field, replace
from itertools import chain

import numpy as np

from wormhole_lab.errors import InputError


@dataclass(frozen=True)
class FlowTable:
    """One row per flow (an RDMA queue pair). Times are picoseconds, sizes bytes.

    ``sport`` is assigned as the reference does: 10000 + k for the k-th flow of a (src, dst) pair.
    ``pg`` is the priority group from the flow file (3 in every shipped file).

    Dependencies (for training workloads): flow ``i`` starts once every flow in
    ``dep_ids[dep_offset[i]:dep_offset[i + 1]]`` has completed, plus ``gap_ps[i]`` of compute, and not
    before ``start_ps[i]``. ``phase`` labels what the flow is for ("dp", "pp", "ep", "tp", ...);
    ``tail_ps`` is compute after the last flow, counted in the iteration time.

    ``dep_gap_ps``: a delay per dependency edge (int64, aligned with ``dep_ids``; None: every edge 0), for a flow
    that waits for several things each followed by its own delay (a collective's last message, then endpoint delay;
    an older one, then compute): flow ``i`` is ready at the latest over its edges ``e`` of ``dep_ids[e]``'s
    completion plus ``dep_gap_ps[e]``, plus ``gap_ps[i]``.

    ``release_on_delivery``: "completed", for the flows waiting, means the last byte has reached the receiver (in
    order), as a collective's next step starts in ASTRA-sim and NCCL, rather than the sender having its ACK (False,
    the reference's completion; the ACK's way back is ~1 us on two hops). ``fct`` ends at the ACK either way.
    """

    src: np.ndarray  # int64[n]
    dst: np.ndarray  # int64[n]
    size: np.ndarray  # int64[n] bytes
    start_ps: np.ndarray  # int64[n]
    pg: np.ndarray  # int64[n]
    dport: np.ndarray  # int64[n]
    sport: np.ndarray  # int64[n]
    dep_offset: np.ndarray = None  # int64[n+1]; None: no dependencies
    dep_ids: np.ndarray = None  # int32 flow ids (4 B per edge: an MoE iteration has ~13 per flow)
    gap_ps: np.ndarray = None  # int64[n]
    phase: np.ndarray = None  # str[n]
    tail_ps: int = 0
    dep_gap_ps: np.ndarray = None  # int64 per edge, or None (no per-edge gaps: no memory spent on them)
    release_on_delivery: bool = False
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.src)
        if self.dep_offset is None:
            object.__setattr__(self, "dep_offset", np.zeros(n + 1, dtype=np.int64))
            object.__setattr__(self, "dep_ids", np.zeros(0, dtype=np.int32))
        if self.gap_ps is None:
            object.__setattr__(self, "gap_ps", np.zeros(n, dtype=np.int64))
        if self.phase is None:
            object.__setattr__(self, "phase", np.full(n, "", dtype="<U8"))
        if not isinstance(self.release_on_delivery, bool | np.bool_):
            raise InputError(
                "FlowTable.release_on_delivery", f"must be True or False, got {self.release_on_delivery!r}",
                "pass release_on_delivery=True (dependants start at delivery) or False (at the last ACK)",
            )  # fmt: skip
        object.__setattr__(self, "release_on_delivery", bool(self.release_on_delivery))
        if self.dep_gap_ps is not None:
            object.__setattr__(self, "dep_gap_ps", _edge_gap_column(self.dep_gap_ps))

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @property
    def nbytes(self) -> int:
        """Memory held by the table's arrays."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    @property
    def has_dependencies(self) -> bool:
        return len(self.dep_ids) > 0

    def deps(self, i: int) -> np.ndarray:
        return self.dep_ids[self.dep_offset[i] : self.dep_offset[i + 1]]

    def dependant_offset(self) -> np.ndarray:
        """int64[n+1]: grouped by the flow waited for, those waiting for ``f`` sit at ``[offset[f], offset[f + 1])``.
        Read only once the ids are checked."""
        offset = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.dep_ids, minlength=len(self)), out=offset[1:])
        return offset


def assign_sports(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """10000 + k for the k-th flow of each (src, dst) pair, in table order (the reference's portNumder)."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    if not len(src):
        return np.empty(0, dtype=np.int64)
    pair = (src - src.min()) * (int(dst.max()) - int(dst.min()) + 1) + (dst - dst.min())
    order = np.argsort(pair, kind="stable")  # each pair's flows together, in table order
    first = np.flatnonzero(np.r_[True, pair[order][1:] != pair[order][:-1]])
    rank = np.arange(len(src)) - np.repeat(first, np.diff(np.r_[first, len(src)]))
    sport = np.empty(len(src), dtype=np.int64)
    sport[order] = 10000 + rank
    return sport


PG = 3  # the priority group of every shipped flow file
DPORT = 100  # the reference's destination port


def make_flows(
    src, dst, size, start_ps, pg=PG, dport=DPORT, deps=None, gap_ps=0, phase="", tail_ps=0, *,
    release_on_delivery: bool = False, dep_gaps=None,
) -> FlowTable:  # fmt: skip
    """Build a FlowTable from array-likes; pg, dport, gap_ps and phase broadcast. ``deps`` is a list (one
    entry per flow) of the flow ids it waits for, ``dep_gaps`` (optional) the same shape: each edge's delay
    (``FlowTable.dep_gap_ps``). Validation lives in ``workload.validate``."""
    n = len(src)
    dep_lists = deps if deps is not None else [()] * n
    if len(dep_lists) != n:
        raise ValueError(f"deps has {len(dep_lists)} entries for {n} flows")
    counts, dep_ids = _dep_arrays(dep_lists)
    edge_gaps = None
    if dep_gaps is not None:
        if len(dep_gaps) != n:
            raise ValueError(f"dep_gaps has {len(dep_gaps)} entries for {n} flows")
        gap_counts = np.fromiter(map(len, dep_gaps), dtype=np.int64, count=n)
        edge_gaps = _edge_gap_column(list(chain.from_iterable(dep_gaps)))
        bad = np.flatnonzero(gap_counts != counts)
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"dep_gaps[{i}]", f"has {gap_counts[i]} delays for flow {i}'s {counts[i]} dependencies",
                "give one delay per dependency, in the order of deps",
            )  # fmt: skip
    start_ps, pg, dport, gap_ps = (_column(a, n, np.int64) for a in (start_ps, pg, dport, gap_ps))
    phase = _column(phase, n, "<U8")
    return _table(
        src, dst, size, start_ps, pg, dport, counts, dep_ids, gap_ps, phase, tail_ps, release_on_delivery, edge_gaps
    )


def _column(value, n: int, dtype) -> np.ndarray:
    """``value`` (one per flow, or one for all) as a column of its own: the table does not share the caller's array."""
    return np.broadcast_to(np.asarray(value, dtype=dtype), (n,)).copy()


def _dep_arrays(dep_lists) -> tuple[np.ndarray, np.ndarray]:
    """(count per flow, the ids one after another) of a list of id sequences."""
    counts = np.fromiter(map(len, dep_lists), dtype=np.int64, count=len(dep_lists))
    return counts, np.fromiter(chain.from_iterable(dep_lists), dtype=np.int64, count=int(counts.sum()))


def _edge_gap_column(values) -> np.ndarray:
    """Per-edge delays as int64; values that are not integers keep their dtype, for ``workload.validate`` to name."""
    gaps = np.asarray(values)
    if gaps.size == 0:
        return np.zeros(gaps.shape, dtype=np.int64)
    return gaps.astype(np.int64, copy=False) if gaps.dtype.kind in "iu" else gaps


def _flow_ids(ids) -> np.ndarray:
    """Dependency ids as int32 (``workload.validate`` checks them against the table); one that does not fit in 32 bits
    is out of range for any table the engine runs, and would wrap."""
    ids = np.asarray(ids)
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    if ids.dtype != np.int32 and len(ids) and (ids.min() < lo or ids.max() > hi):
        j = int(np.argmax((ids < lo) | (ids > hi)))
        raise InputError(f"deps (edge {j})", f"flow id {int(ids[j])} is out of range", "list ids of flows in the table")
    return ids.astype(np.int32, copy=False)


def _table(
    src, dst, size, start_ps, pg, dport, dep_counts, dep_ids, gap_ps, phase, tail_ps, release_on_delivery=False,
    dep_gap_ps=None,
) -> FlowTable:  # fmt: skip
    """The FlowTable of per-flow columns (``phase`` one string per flow) and dependencies as counts and ids (and
    delays per edge, or None)."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    dep_offset = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(dep_counts, out=dep_offset[1:])
    return FlowTable(
        src=src,
        dst=dst,
        size=np.asarray(size, dtype=np.int64),
        start_ps=start_ps,
        pg=pg,
        dport=dport,
        sport=assign_sports(src, dst),
        dep_offset=dep_offset,
        dep_ids=_flow_ids(dep_ids),
        gap_ps=gap_ps,
        phase=phase,
        tail_ps=int(tail_ps),
        dep_gap_ps=dep_gap_ps,
        release_on_delivery=release_on_delivery,
    )


MIN_SCALED_BYTES = 1000  # a scaled flow keeps at least this many bytes (a packet's worth)


def check_scale(scale, where: str) -> float:
    """A size scale in (0, 1], or an InputError naming ``where``."""
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale <= 1:
        raise InputError(where, f"must be in (0, 1], got {scale!r}", "e.g. 0.01 for a hundredth of the bytes")
    return float(scale)


def scaled_sizes(flows: FlowTable, scale: float) -> FlowTable:
    """``flows`` with every size times ``scale``, at least MIN_SCALED_BYTES: a workload shrunk to run quickly. With
    its compute times shrunk by the same scale (a GPU faster by 1/scale), the ratio of communication to compute
    stays."""
    return replace(flows, size=np.maximum(MIN_SCALED_BYTES, (flows.size * scale).astype(np.int64)))


def stack_tables(tables: list[FlowTable], tail_ps: int = 0) -> FlowTable:
    """One table of ``tables`` one after another: each one's dependency ids moved by the flows before it, source
    ports assigned afresh over the whole table (a host pair used by two tables gets distinct ones, as one flow file
    holding both would). Tables with dependencies must agree on ``release_on_delivery`` (the merged table has one
    rule); one without any has nobody to release, so its flag does not count. Per-edge delays are kept (0 for the
    edges of tables without them); None when no table has any."""
    rule = _release_rule(tables)
    edge_gaps = None
    if any(t.dep_gap_ps is not None for t in tables):
        edge_gaps = np.concatenate([_edge_gaps(t) for t in tables])

    def column(name):
        return np.concatenate([getattr(t, name) for t in tables])

    firsts = np.cumsum([0] + [len(t) for t in tables[:-1]])
    dep_ids = np.concatenate([t.dep_ids.astype(np.int64) + first for t, first in zip(tables, firsts, strict=True)])
    counts = np.concatenate([np.diff(t.dep_offset) for t in tables])
    return _table(
        column("src"), column("dst"), column("size"), column("start_ps"), column("pg"), column("dport"), counts,
        dep_ids, column("gap_ps"), column("phase"), tail_ps, rule, edge_gaps,
    )  # fmt: skip


def _edge_gaps(table: FlowTable) -> np.ndarray:
    """``table.dep_gap_ps``, zeros (one per edge) when None."""
    return np.zeros(len(table.dep_ids), dtype=np.int64) if table.dep_gap_ps is None else table.dep_gap_ps


def _release_rule(tables: list[FlowTable]) -> bool:
    """The ``release_on_delivery`` of ``tables`` stacked: that of those with dependencies, which must agree."""
    waiting = [i for i, t in enumerate(tables) if t.has_dependencies]
    on = [i for i in waiting or range(len(tables)) if tables[i].release_on_delivery]
    off = [i for i in waiting if not tables[i].release_on_delivery]
    if on and off:
        raise InputError(
            "stack_tables: FlowTable.release_on_delivery",
            f"tables {on} release dependants when the last byte is delivered, tables {off} when its ACK is back",
            "give every table with dependencies the same flag: dataclasses.replace(table, release_on_delivery=...)",
        )
    return bool(on)


class FlowBuilder:
    """Accumulates flows and their dependencies; ``build()`` returns the FlowTable.

    Collective generators and workload readers append one flow at a time through ``add``, or many at once as
    arrays through ``add_many``, and chain steps by the flow ids they return. Flows are kept as blocks of arrays:
    MoE-32x22B on 1024 GPUs has 1.4 M flows and 18 M dependency edges, which a Python tuple per flow held at
    ~3 s of its flow making. Per-edge delays (``dep_gaps``) are kept only for blocks that have some: a table none
    of whose flows has any gets ``dep_gap_ps`` None."""

    def __init__(self):
        # src, dst, size, start, gap, dep counts and ids, phase, and the edges' delays (None: all 0)
        self._blocks: list[tuple] = []
        self._one: list[tuple] = []  # flows added one at a time since the last block
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def add(
        self, src: int, dst: int, size: int, deps=(), gap_ps: int = 0, phase: str = "", start_ps: int = 0,
        dep_gaps=None,
    ) -> int:  # fmt: skip
        """Append one flow; returns its id. ``dep_gaps``: a delay per dependency, in the order of ``deps``
        (``FlowTable.dep_gap_ps``)."""
        deps = deps if type(deps) is tuple else tuple(map(int, deps))  # _flush makes them int64
        if dep_gaps is not None:
            dep_gaps = tuple(dep_gaps)
            if len(dep_gaps) != len(deps):
                raise InputError(
                    f"FlowBuilder.add (flow {self._n}): dep_gaps", f"has {len(dep_gaps)} delays for {len(deps)} deps",
                    "give one delay per dependency, in the order of deps",
                )  # fmt: skip
        self._one.append((int(src), int(dst), int(size), int(start_ps), int(gap_ps), deps, phase, dep_gaps))
        self._n += 1
        return self._n - 1

    def add_many(self, src, dst, size, dep_counts, dep_ids, gap_ps, phase: str, dep_gaps=None) -> int:
        """Append flows from arrays: flow k waits for the next ``dep_counts[k]`` of ``dep_ids`` (each after the delay
        at the same place of ``dep_gaps``, when given). Returns the first one's id."""
        self._flush()
        n = len(src)
        ints = [np.asarray(a, dtype=np.int64) for a in (src, dst, size, np.zeros(n), gap_ps, dep_counts, dep_ids)]
        if dep_gaps is not None:
            dep_gaps = _edge_gap_column(dep_gaps)
            if dep_gaps.shape != ints[-1].shape:
                raise InputError(
                    f"FlowBuilder.add_many (flows {self._n}..): dep_gaps",
                    f"has {dep_gaps.size} delays for {ints[-1].size} dependency ids", "give one delay per id",
                )  # fmt: skip
        self._blocks.append((*ints, np.full(n, phase, dtype="<U8"), dep_gaps))
        first = self._n
        self._n += n
        return first

    def _flush(self) -> None:
        if not self._one:
            return
        src, dst, size, start, gap, deps, phase, dep_gaps = zip(*self._one, strict=True)
        counts, ids = _dep_arrays(deps)
        edge_gaps = None
        if dep_gaps.count(None) != len(dep_gaps):  # a C-speed scan: most tables have no per-edge delays
            per_flow = (g if g is not None else (0,) * len(d) for d, g in zip(deps, dep_gaps, strict=True))
            edge_gaps = _edge_gap_column(list(chain.from_iterable(per_flow)))
        ints = (np.array(c, dtype=np.int64) for c in (src, dst, size, start, gap))
        self._blocks.append((*ints, counts, ids, np.array(phase, dtype="<U8"), edge_gaps))
        self._one = []

    def build(self, tail_ps: int = 0, *, release_on_delivery: bool = False) -> FlowTable:
        """The FlowTable of the flows added (``release_on_delivery``: see FlowTable)."""
        self._flush()
        blocks = self._blocks or [(*[np.zeros(0, dtype=np.int64)] * 7, np.zeros(0, dtype="<U8"), None)]
        src, dst, size, start, gap, counts, ids, phase = (
            np.concatenate(column) for column in zip(*(b[:8] for b in blocks), strict=True)
        )
        edge_gaps = None
        if any(b[8] is not None for b in blocks):
            edge_gaps = np.concatenate([np.zeros(len(b[6]), np.int64) if b[8] is None else b[8] for b in blocks])
        n = len(src)
        pg, dport = np.full(n, PG), np.full(n, DPORT)
        return _table(
            src, dst, size, start, pg, dport, counts, ids, gap, phase, tail_ps, release_on_delivery, edge_gaps
        )
