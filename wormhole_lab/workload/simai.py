"""SimAI/AICB workload files: a validating reader and their translation into dependent flows.

Format (see ``shared/workloads/simai/README.md``): line 1 is the run type and ``key: value``
pairs (any order; ``pp_comm`` with or without a colon; float-written integers such as
``8388608.0`` accepted; ``checkpoints:`` / ``checkpoint_initiates:`` take a count and that many
indices). A header without ``ep``/``pp``/``ga``/``all_gpus`` is the legacy AICB v1 header, which
needs only ``model_parallel_NPU_group``; a modern header must have all four (``vpp`` and
``pp_comm`` are optional). Missing fields default to ep=pp=vpp=ga=1, pp_comm=0. Line 2 is the row
count N, then N rows of 12 whitespace-separated columns, one row per line.

Comm tokens are ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, optionally with ``_EP`` or
``_DP_EP``, and NONE. Without a suffix, forward and input-gradient collectives run on the TP group
and weight-gradient ones on the DP group. Collective names SimAI does not simulate (BROADCAST,
REDUCE, ...) become NONE with a warning, as SimAI ignores them; any other token is an error, so a
typo never silently drops traffic. Every error names ``path:line`` and the fix.
"""

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.collectives import (
    RankClock,
    alltoall,
    ring_allgather,
    ring_allreduce,
    ring_reducescatter,
)
from wormhole_lab.workload.flows import FlowBuilder, FlowTable
from wormhole_lab.workload.placement import Placement

__all__ = [
    "COLUMNS",
    "SimaiRow",
    "SimaiWarning",
    "SimaiWorkload",
    "comm_group",
    "read_simai",
    "simai_flows",
    "total_bytes_by_type",
]

RUN_TYPES = (
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
    "HYBRID_TRANSFORMER",
    "MICRO",
    "DATA",
    "MODEL",
    "HYBRID_DLRM",
    "HYBRID_DLRM_ENHANCED",
    "HYBRID_DATA_MODEL",
    "HYBRID_MODEL_DATA",
    "HYBRID_CUSTOMIZED",
)
OPS = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL")
SUFFIXES = {"": None, "_EP": "EP", "_DP_EP": "DP_EP"}
VALID_TOKENS = ("NONE",) + tuple(op + s for op in OPS for s in SUFFIXES)
NOT_SIMULATED = ("BROADCAST", "REDUCE", "GATHER", "SCATTER", "BARRIER", "ALLREDUCEALLTOALL")
COLUMNS = (
    "name",
    "dependency",
    "fwd_compute_ns",
    "fwd_comm",
    "fwd_bytes",
    "ig_compute_ns",
    "ig_comm",
    "ig_bytes",
    "wg_compute_ns",
    "wg_comm",
    "wg_bytes",
    "update_ns",
)
_INT_KEYS = ("model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus", "pp_comm")
_LIST_KEYS = ("checkpoints", "checkpoint_initiates")
_MODERN = ("ep", "pp", "ga", "all_gpus")
MIN_FWD_BYTES = 4096  # SimAI raises a forward collective of 1..4095 bytes to 4096


class SimaiWarning(UserWarning):
    """Something SimAI tolerates silently: an unsimulated collective, ignored extra lines, ..."""


@dataclass(frozen=True)
class SimaiRow:
    """One layer row; ``line`` is its 1-based line in the file. Comm tokens are canonical (see module)."""

    line: int
    name: str
    dependency: int
    fwd_compute_ns: int
    fwd_comm: str
    fwd_bytes: int
    ig_compute_ns: int
    ig_comm: str
    ig_bytes: int
    wg_compute_ns: int
    wg_comm: str
    wg_bytes: int
    update_ns: int


@dataclass(frozen=True)
class SimaiWorkload:
    """A parsed workload file. ``tp == 0`` means "all GPUs" (SimAI's convention)."""

    path: str
    run_type: str
    tp: int
    ep: int
    pp: int
    vpp: int
    ga: int
    all_gpus: int | None
    pp_comm: int
    checkpoints: tuple[int, ...]
    checkpoint_initiates: tuple[int, ...]
    legacy: bool
    rows: tuple[SimaiRow, ...]
    header: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def dp(self) -> int | None:
        """DP = all_gpus / (TP*PP), as SimAI's report computes it (None without all_gpus)."""
        if not self.all_gpus:
            return None
        return self.all_gpus // ((self.tp or self.all_gpus) * self.pp)


def comm_group(token: str, column: str) -> tuple[str, str] | None:
    """``(op, group)`` of a canonical token in column ``"fwd"``, ``"ig"`` or ``"wg"``; None for NONE.

    Groups: ``"TP"`` / ``"DP"`` (no suffix; DP only in the weight-gradient column), ``"EP"``, ``"DP_EP"``."""
    if token == "NONE":
        return None
    for op in OPS:
        if token.startswith(op) and token[len(op) :] in SUFFIXES:
            group = SUFFIXES[token[len(op) :]]
            return op, group or ("DP" if column == "wg" else "TP")
    raise ValueError(f"not a canonical comm token: {token!r}")


MAX_BYTES = 2**53  # as for the other flow readers: sizes stay exact in float64 downstream
MAX_COMPUTE_NS = 10**12  # 1000 s of compute in one row; keeps every sum of compute well inside int64 picoseconds
MAX_GPUS = 10**7  # header counts (GPUs, parallel degrees): beyond this, building the groups exhausts memory


def _number(tok: str, where: str, what: str, minimum: int = 0, maximum: int | None = None) -> int:
    try:
        v = int(tok)
    except ValueError:
        try:
            f = float(tok)
        except ValueError:
            f = math.nan
        if not (math.isfinite(f) and f.is_integer()):
            raise InputError(
                where, f"{what} must be a whole number, got {tok!r}", "write an integer such as 4096"
            ) from None
        v = int(f)
    if v < minimum:
        raise InputError(where, f"{what} is {v}, below {minimum}", f"write an integer >= {minimum}")
    if maximum is not None and v > maximum:
        raise InputError(where, f"{what} {tok} is too large", f"write at most {maximum} (check the unit)")
    return v


def _comm(tok: str, where: str, column: str, notes: list[str]) -> str:
    if tok in VALID_TOKENS:
        return tok
    if tok in NOT_SIMULATED or any(tok == x + s for x in NOT_SIMULATED for s in SUFFIXES):
        notes.append(f"{where}: {column} comm type {tok} is not simulated by SimAI; treated as NONE")
        return "NONE"
    raise InputError(
        where,
        f"unknown {column} comm type {tok!r}",
        "use NONE or ALLREDUCE/ALLGATHER/REDUCESCATTER/ALLTOALL, optionally with _EP or _DP_EP",
    )


def _header(path: str, line: str, notes: list[str]) -> dict:
    where = f"{path}:1"
    toks = line.split()
    if not toks:
        raise InputError(
            where,
            "the header line is empty",
            "start with e.g. 'HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ...'",
        )
    if toks[0] not in RUN_TYPES:
        raise InputError(where, f"unknown run type {toks[0]!r}", f"use one of {', '.join(RUN_TYPES)}")
    head: dict = {"run_type": toks[0]}
    i = 1
    while i < len(toks):
        key = toks[i].rstrip(":")
        if key in head:
            raise InputError(where, f"header key {key!r} appears twice", "give each key once")
        if i + 1 >= len(toks):
            raise InputError(where, f"header key {key!r} has no value", f"write '{key}: <integer>'")
        if key in _LIST_KEYS:
            count = _number(toks[i + 1], where, key)
            vals = toks[i + 2 : i + 2 + count]
            if len(vals) < count:
                raise InputError(
                    where,
                    f"{key} announces {count} indices but lists {len(vals)}",
                    f"list {count} layer indices after '{key}: {count}'",
                )
            head[key] = tuple(_number(v, where, f"{key} index") for v in vals)
            i += 2 + count
        elif key in _INT_KEYS:
            head[key] = _number(toks[i + 1], where, key, maximum=MAX_BYTES if key == "pp_comm" else MAX_GPUS)
            i += 2
        elif toks[i].endswith(":"):
            notes.append(f"{where}: unknown header key {key!r} ignored")
            i += 2
        else:
            raise InputError(where, f"unexpected token {toks[i]!r} in the header", "write 'key: value' pairs")
    if "model_parallel_NPU_group" not in head:
        raise InputError(
            where,
            "header lacks 'model_parallel_NPU_group:' (the TP size)",
            "add 'model_parallel_NPU_group: <TP>' after the run type",
        )
    legacy = not any(k in head for k in _MODERN)
    if not legacy:
        missing = [k for k in _MODERN if k not in head]
        if missing:
            raise InputError(
                where,
                f"header lacks {', '.join(repr(k + ':') for k in missing)}",
                "write every AICB field: model_parallel_NPU_group, ep, pp, vpp, ga, all_gpus, "
                "checkpoints, checkpoint_initiates (and pp_comm when pp > 1)",
            )
        for k in ("ep", "pp", "ga", "all_gpus"):
            if head[k] < 1:
                raise InputError(where, f"{k} is 0", f"write '{k}: <integer >= 1>'")
    head["legacy"] = legacy
    pp, pp_comm = head.get("pp", 1), head.get("pp_comm", 0)
    if pp > 1 and pp_comm == 0:
        notes.append(f"{where}: pp is {pp} but pp_comm is missing or 0; no pipeline flows will be made")
    if pp == 1 and pp_comm:
        notes.append(f"{where}: pp_comm {pp_comm} given with pp 1; ignored")
    return head


def read_simai(path) -> SimaiWorkload:
    """Parse and validate a SimAI/AICB workload file; warnings are issued as ``SimaiWarning``."""
    path_s = str(path)
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path_s}:0", f"cannot read the workload file ({exc})", "check the path") from None
    if not lines:
        raise InputError(f"{path_s}:1", "the file is empty", "write the header line, the row count, then the rows")
    notes: list[str] = []
    head = _header(path_s, lines[0], notes)
    if len(lines) < 2 or not lines[1].split():
        raise InputError(f"{path_s}:2", "line 2 must hold the number of layer rows", "write the row count N")
    if len(lines[1].split()) != 1:
        raise InputError(f"{path_s}:2", f"line 2 has {len(lines[1].split())} fields", "write only the row count N")
    count = _number(lines[1].split()[0], f"{path_s}:2", "the row count")
    rows = []
    no = 2
    for no, text in enumerate(lines[2:], start=3):
        toks = text.split()
        if not toks:
            continue
        if len(rows) == count:
            notes.append(f"{path_s}:{no}: lines after the {count} counted rows are ignored (as SimAI does)")
            break
        where = f"{path_s}:{no}"
        if len(toks) != 12:
            raise InputError(where, f"row has {len(toks)} columns, expected 12", "write: " + " ".join(COLUMNS))
        ints = {
            c: _number(
                toks[k],
                where,
                c,
                minimum=-1 if c == "dependency" else 0,
                maximum=MAX_BYTES if c.endswith("_bytes") else MAX_COMPUTE_NS if c.endswith("_ns") else None,
            )
            for k, c in enumerate(COLUMNS)
            if c not in ("name", "fwd_comm", "ig_comm", "wg_comm")
        }
        comms = {
            c: _comm(toks[k], where, c.split("_")[0], notes)
            for k, c in enumerate(COLUMNS)
            if c in ("fwd_comm", "ig_comm", "wg_comm")
        }
        rows.append(SimaiRow(line=no, name=toks[0], **ints, **comms))
    if len(rows) < count:
        raise InputError(
            f"{path_s}:{no + 1}",
            f"the file ends after {len(rows)} of the {count} rows line 2 announces",
            "add the missing rows or correct the count on line 2",
        )
    for note in notes:
        warnings.warn(note, SimaiWarning, stacklevel=2)
    raw = {k: v for k, v in head.items() if k not in ("run_type", "legacy")}
    return SimaiWorkload(
        path=path_s,
        run_type=head["run_type"],
        tp=head["model_parallel_NPU_group"],
        ep=head.get("ep", 1),
        pp=head.get("pp", 1),
        vpp=head.get("vpp", 1),
        ga=head.get("ga", 1),
        all_gpus=head.get("all_gpus"),
        pp_comm=head.get("pp_comm", 0),
        checkpoints=head.get("checkpoints", ()),
        checkpoint_initiates=head.get("checkpoint_initiates", ()),
        legacy=head["legacy"],
        rows=tuple(rows),
        header=raw,
        warnings=tuple(notes),
    )


def total_bytes_by_type(workload: SimaiWorkload) -> dict[tuple[str, str], int]:
    """Bytes per ``(op, group)`` summed over the three comm columns of all rows (file values, before
    SimAI's 4096-byte minimum; NONE columns are not counted even when they carry a size)."""
    out: dict[tuple[str, str], int] = {}
    for row in workload.rows:
        for col in ("fwd", "ig", "wg"):
            key = comm_group(getattr(row, f"{col}_comm"), col)
            if key is not None:
                out[key] = out.get(key, 0) + getattr(row, f"{col}_bytes")
    return out


_FN = {
    "ALLREDUCE": ring_allreduce,
    "ALLGATHER": ring_allgather,
    "REDUCESCATTER": ring_reducescatter,
    "ALLTOALL": alltoall,
}
_PHASE = {"TP": "tp", "DP": "dp", "EP": "ep", "DP_EP": "dp"}
_KIND = {"TP": "tp", "DP": "dp", "EP": "ep", "DP_EP": "edp"}


def _placement(w: SimaiWorkload, target, gpus_per_server: int | None) -> Placement:
    if isinstance(target, Placement):
        want = {"tp": w.tp or target.n_gpus, "pp": w.pp, "ep": w.ep}
        for k, v in want.items():
            if getattr(target, k) != v:
                raise InputError(
                    f"simai_flows(placement).{k}",
                    f"placement has {k}={getattr(target, k)} but {w.path}:1 says {v}",
                    f"build the placement with {k}={v}",
                )
        return target
    if isinstance(target, Topology):
        hosts = target.hosts
        if len(hosts) == 0 or hosts[-1] != len(hosts) - 1:
            raise InputError(
                f"simai_flows({target.name})",
                "the GPUs are not nodes 0..G-1",
                "number the GPUs first, as SimAI's and rail_optimized topologies do",
            )
        n = len(hosts)
        gps = gpus_per_server or target.meta.get("gpus_per_server", 8)
        where = f"{w.path}:1 on {target.name}"
    elif target is None:
        if not w.all_gpus:
            raise InputError(
                f"{w.path}:1",
                "the header has no all_gpus (legacy AICB header)",
                "pass a Topology or Placement to simai_flows",
            )
        n, gps, where = w.all_gpus, gpus_per_server or 8, f"{w.path}:1"
    else:
        raise InputError(
            "simai_flows(target)",
            f"{target!r} is neither a Placement nor a Topology",
            "pass a Placement, a Topology or None (use all_gpus)",
        )
    try:
        return Placement(n, gps, tp=w.tp or n, pp=w.pp, ep=w.ep)
    except InputError as exc:
        raise InputError(
            where, f"TP{w.tp or n} PP{w.pp} EP{w.ep} does not fit {n} GPUs: {exc.problem}", exc.fix
        ) from None


def simai_flows(
    workload: SimaiWorkload,
    target: Placement | Topology | None = None,
    *,
    gpus_per_server: int | None = None,
    tp_traffic: bool = False,
    chunk_bytes: int | None = None,
) -> FlowTable:
    """Flows of one pass of a ``HYBRID_TRANSFORMER*`` workload on every rank, as SimAI runs it.

    Groups come from ``target`` (a Placement, or a Topology's GPUs with the header's TP/PP/EP and
    DP = GPUs/(TP*PP); None uses ``all_gpus``). Rows run forward in file order, then backward in
    reverse (input-gradient compute and blocking collective, then weight-gradient compute and a
    non-blocking collective on a per-rank FIFO stream). Compute columns are ns; ``update_ns`` is
    added after each blocking collective. Forward sizes of 1..4095 bytes become 4096 (SimAI). TP
    collectives make flows only with ``tp_traffic``.

    SimAI makes no pipeline traffic; here micro-batches start at each ``embedding_layer`` row (rows
    before the first one are the gradient/optimizer prelude) and every stage sends ``pp_comm`` bytes
    per TP rank to the next stage after each forward micro-batch and back after each backward one,
    in the file's order (all forwards, then all backwards, as SimAI runs the unrolled file). Every
    stage runs the same rows. ``tail_ps`` is the compute left after the last flow. Approximations:
    a weight-gradient collective applies its compute gap after both the main stream and the previous
    FIFO collective are done, and compute that overlaps the last FIFO collective counts in the tail.
    """
    w = workload
    if not w.run_type.startswith("HYBRID_TRANSFORMER"):
        raise InputError(
            f"{w.path}:1",
            f"run type {w.run_type} is not supported by simai_flows",
            "use a HYBRID_TRANSFORMER_FWD_IN_BCKWD workload (AICB's default)",
        )
    pl = _placement(w, target, gpus_per_server)
    P = pl.pp
    stage = [pl.stage_ranks(p) for p in range(P)]
    by_stage = {
        k: [[g for g in pl.groups(k) if pl.coords(g[0])[2] == p] for p in range(P)] for k in ("tp", "dp", "ep", "edp")
    }
    b = FlowBuilder()
    clock = RankClock(range(pl.n_gpus))
    fifo: dict[int, tuple[int, ...]] = {r: () for r in range(pl.n_gpus)}
    fifo_snap: dict[int, tuple] = {}  # rank -> main-stream (deps, gap) when its last FIFO collective started

    def issue(p: int, row: SimaiRow, col: str) -> None:
        clock.compute(stage[p], 1000 * getattr(row, f"{col}_compute_ns"))
        key = comm_group(getattr(row, f"{col}_comm"), col)
        if key is None or (key[1] == "TP" and not tp_traffic):
            return
        op, group = key
        size = getattr(row, f"{col}_bytes")
        if col == "fwd" and 0 < size < MIN_FWD_BYTES:
            size = MIN_FWD_BYTES
        groups = [g for g in by_stage[_KIND[group]][p] if len(g) > 1]
        if size == 0 or not groups:
            return
        for g in groups:
            if col == "wg":
                before = len(b)
                done = _FN[op](
                    b,
                    g,
                    size,
                    after={r: clock.deps[r] + fifo[r] for r in g},
                    gap_ps={r: clock.gap[r] for r in g},
                    phase=_PHASE[group],
                    chunk_bytes=chunk_bytes,
                )
                if len(b) > before:
                    fifo.update({r: done[r] for r in g})
                    fifo_snap.update({r: (clock.deps[r], clock.gap[r]) for r in g})
            else:
                clock.run(_FN[op], b, g, size, phase=_PHASE[group], chunk_bytes=chunk_bytes)
        if col != "wg":
            clock.compute([r for g in groups for r in g], 1000 * row.update_ns)

    starts = [i for i, r in enumerate(w.rows) if r.name == "embedding_layer"] or [0]
    prelude = list(w.rows[: starts[0]])
    blocks = [list(w.rows[a:z]) for a, z in zip(starts, starts[1:] + [len(w.rows)], strict=True)]
    pp_bytes = w.pp_comm if P > 1 else 0
    sent: dict[tuple[str, int, int], dict[int, tuple[int, ...]]] = {}

    def transfer(kind: str, p: int, m: int, dst_stage: int) -> None:
        if pp_bytes and 0 <= dst_stage < P:
            out = {}
            for r in stage[p]:
                t, d, _ = pl.coords(r)
                peer = pl.rank(t, d, dst_stage)
                out[peer] = clock.send(b, r, peer, pp_bytes, phase="pp", chunk_bytes=chunk_bytes)[peer]
            sent[(kind, p, m)] = out

    def receive(kind: str, p: int, m: int, src_stage: int) -> None:
        for r, ids in sent.get((kind, src_stage, m), {}).items():
            clock.wait(r, ids)

    for p in range(P):
        for row in prelude:
            issue(p, row, "fwd")
    for m, block in enumerate(blocks):
        for p in range(P):
            receive("F", p, m, p - 1)
            for row in block:
                issue(p, row, "fwd")
            transfer("F", p, m, p + 1)
    for m in reversed(range(len(blocks))):
        for p in reversed(range(P)):
            receive("B", p, m, p + 1)
            for row in reversed(blocks[m]):
                issue(p, row, "ig")
                issue(p, row, "wg")
            transfer("B", p, m, p - 1)
    for p in range(P):
        for row in reversed(prelude):
            issue(p, row, "ig")
            issue(p, row, "wg")

    # Compute left after the last flow; what a FIFO collective already waited for is not counted twice.
    left = [g - fifo_snap[r][1] if fifo_snap.get(r, (None,))[0] == clock.deps[r] else g for r, g in clock.gap.items()]
    table = b.build(tail_ps=max(left, default=0))
    table.meta.update(
        workload="simai",
        source=w.path,
        placement=str(pl),
        micro_batches=len(blocks),
        tp_traffic=bool(tp_traffic),
        chunk_bytes=chunk_bytes,
    )
    return table
