"""The flow table: what every other layer consumes as "the traffic", with optional dependencies."""

from dataclasses import dataclass, field
from itertools import chain

import numpy as np


@dataclass(frozen=True)
class FlowTable:
    """One row per flow (an RDMA queue pair). Times are picoseconds, sizes bytes.

    ``sport`` is assigned as the reference does: 10000 + k for the k-th flow of a (src, dst) pair.
    ``pg`` is the priority group from the flow file (3 in every shipped file).

    Dependencies (for training workloads): flow ``i`` starts once every flow in
    ``dep_ids[dep_offset[i]:dep_offset[i + 1]]`` has completed, plus ``gap_ps[i]`` of compute, and not
    before ``start_ps[i]``. ``phase`` labels what the flow is for ("dp", "pp", "ep", "tp", ...);
    ``tail_ps`` is compute after the last flow, counted in the iteration time.
    """

    src: np.ndarray  # int64[n]
    dst: np.ndarray  # int64[n]
    size: np.ndarray  # int64[n] bytes
    start_ps: np.ndarray  # int64[n]
    pg: np.ndarray  # int64[n]
    dport: np.ndarray  # int64[n]
    sport: np.ndarray  # int64[n]
    dep_offset: np.ndarray = None  # int64[n+1]; None: no dependencies
    dep_ids: np.ndarray = None  # int64
    gap_ps: np.ndarray = None  # int64[n]
    phase: np.ndarray = None  # str[n]
    tail_ps: int = 0
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.src)
        if self.dep_offset is None:
            object.__setattr__(self, "dep_offset", np.zeros(n + 1, dtype=np.int64))
            object.__setattr__(self, "dep_ids", np.zeros(0, dtype=np.int64))
        if self.gap_ps is None:
            object.__setattr__(self, "gap_ps", np.zeros(n, dtype=np.int64))
        if self.phase is None:
            object.__setattr__(self, "phase", np.full(n, "", dtype="<U8"))

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


def make_flows(src, dst, size, start_ps, pg=3, dport=100, deps=None, gap_ps=0, phase="", tail_ps=0) -> FlowTable:
    """Build a FlowTable from array-likes; pg, dport, gap_ps and phase broadcast. ``deps`` is a list (one
    entry per flow) of the flow ids it waits for. Validation lives in ``workload.validate``."""
    src = np.asarray(src, dtype=np.int64)
    n = len(src)
    dep_lists = deps if deps is not None else [()] * n
    if len(dep_lists) != n:
        raise ValueError(f"deps has {len(dep_lists)} entries for {n} flows")
    counts = np.array([len(d) for d in dep_lists], dtype=np.int64)
    dep_ids = np.fromiter(chain.from_iterable(dep_lists), dtype=np.int64, count=int(counts.sum()))
    return FlowTable(
        src=src,
        dst=np.asarray(dst, dtype=np.int64),
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.broadcast_to(np.asarray(start_ps, dtype=np.int64), (n,)).copy(),
        pg=np.broadcast_to(np.asarray(pg, dtype=np.int64), (n,)).copy(),
        dport=np.broadcast_to(np.asarray(dport, dtype=np.int64), (n,)).copy(),
        sport=assign_sports(src, np.asarray(dst, dtype=np.int64)),
        dep_offset=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        dep_ids=dep_ids,
        gap_ps=np.broadcast_to(np.asarray(gap_ps, dtype=np.int64), (n,)).copy(),
        phase=np.broadcast_to(np.asarray(phase, dtype="<U8"), (n,)).copy(),
        tail_ps=int(tail_ps),
    )


class FlowBuilder:
    """Accumulates flows and their dependencies one at a time; ``build()`` returns the FlowTable.

    Collective generators and workload readers append through ``add`` and chain steps by the flow
    ids it returns."""

    def __init__(self):
        self._src, self._dst, self._size, self._start = [], [], [], []
        self._deps, self._gap, self._phase = [], [], []

    def __len__(self) -> int:
        return len(self._src)

    def add(self, src: int, dst: int, size: int, deps=(), gap_ps: int = 0, phase: str = "", start_ps: int = 0) -> int:
        """Append one flow; returns its id."""
        self._src.append(int(src))
        self._dst.append(int(dst))
        self._size.append(int(size))
        self._start.append(int(start_ps))
        self._deps.append(deps if type(deps) is tuple else tuple(map(int, deps)))  # build() makes them int64
        self._gap.append(int(gap_ps))
        self._phase.append(phase)
        return len(self._src) - 1

    def add_many(self, src, dst, size, deps: list, gap_ps, phase: str) -> int:
        """Append flows from arrays (``deps``: a tuple of ints per flow); returns the first one's id."""
        first = len(self._src)
        self._src.extend(np.asarray(src, dtype=np.int64).tolist())
        self._dst.extend(np.asarray(dst, dtype=np.int64).tolist())
        self._size.extend(np.asarray(size, dtype=np.int64).tolist())
        self._start.extend([0] * len(deps))
        self._deps.extend(deps)
        self._gap.extend(np.asarray(gap_ps, dtype=np.int64).tolist())
        self._phase.extend([phase] * len(deps))
        return first

    def build(self, tail_ps: int = 0) -> FlowTable:
        return make_flows(
            self._src,
            self._dst,
            self._size,
            self._start,
            deps=self._deps,
            gap_ps=self._gap,
            phase=self._phase,
            tail_ps=tail_ps,
        )
