"""HPCC's flow file (``FLOW_FILE`` of the reference's config.txt), read into and written from a FlowTable.

Format: line 1 ``flow_num``; then ``flow_num`` lines ``src dst pg dport size_bytes start_time_seconds``,
sorted by start time (the reference reads them one at a time and schedules each at its start,
so an earlier start after a later one cannot be honoured). Start times become integer picoseconds,
rounded to the reference clock's 1 ns.

Parsing is bulk (``numpy.loadtxt``'s C reader) so multi-million-line files load in seconds; only when
something is wrong do we rescan line by line to name the offending line exactly.
"""

import math
import re
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import FlowTable, make_flows

MAX_SIZE_BYTES = 2**53  # beyond this sizes stop being exact in the float64 arithmetic downstream
MAX_FLOWS = 2**32 - 1  # the reference reads flow_num as uint32
N_PRIORITY_GROUPS = 8  # the reference's switches and NICs have 8 queues; pg indexes them
_PS_PER_S = 10**12
_MAX_START_S = 9.0e6  # seconds (~104 days): keeps start in ps well inside int64 after float rounding

_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_COLUMNS = ("src", "dst", "pg", "dport", "size_bytes", "start_time_seconds")
_DTYPE = np.dtype([("src", "i8"), ("dst", "i8"), ("pg", "i8"), ("dport", "i8"), ("size", "i8"), ("start", "f8")])
_LINE_FIX = "write 'src dst pg dport size_bytes start_time_seconds', e.g. '0 1 3 100 10000000 0.0'"


def format_seconds(ps: int) -> str:
    """Picoseconds as an exact decimal number of seconds ('0.0', '2.000001'), so reading it back is lossless."""
    whole, frac = divmod(int(ps), _PS_PER_S)
    return f"{whole}.0" if frac == 0 else f"{whole}.{frac:012d}".rstrip("0")


def read_flows(path) -> FlowTable:
    """Read an HPCC flow file; every malformed line is an InputError naming ``<path>:<line>``."""
    path = Path(path)
    flow_num = _read_header(path)
    if flow_num == 0:
        return make_flows([], [], [], [])
    n_lines = _count_lines(path)
    # Checked before parsing so a header claiming billions of flows costs one pass over the bytes, no allocation.
    if n_lines - 1 < flow_num:
        raise _truncated(path, flow_num, n_lines - 1, n_lines)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # loadtxt warns that blank lines don't count toward max_rows
            rows = np.loadtxt(
                path, dtype=_DTYPE, comments=None, skiprows=1, max_rows=flow_num, ndmin=1, encoding="utf-8"
            )
    except (ValueError, OverflowError, UnicodeDecodeError) as exc:
        _rescan(path, flow_num)  # raises the precise error
        raise InputError(str(path), f"cannot parse flow file: {exc}", _LINE_FIX) from exc
    if len(rows) < flow_num:
        raise _truncated(path, flow_num, len(rows), n_lines)
    bad = _first_bad_row(rows)
    if bad is not None:
        _rescan(path, flow_num, only=bad, prev_start=float(rows["start"][bad - 1]) if bad > 0 else None)
        raise InputError(str(path), f"flow {bad} is invalid", _LINE_FIX)  # unreachable unless the checks disagree
    start_ps = seconds_to_reference_ps(rows["start"])
    return make_flows(rows["src"], rows["dst"], rows["size"], start_ps, pg=rows["pg"], dport=rows["dport"])


def write_flows(flows: FlowTable, path) -> None:
    """Write ``flows`` as an HPCC flow file; read_flows gives the same table back."""
    n = len(flows)
    start = np.asarray(flows.start_ps, dtype=np.int64)
    if n and int(start.min()) < 0:
        i = int(np.argmax(start < 0))
        raise InputError(
            f"FlowTable.start_ps[{i}]", f"negative start time {int(start[i])} ps", "start flows at 0 or later"
        )
    if n > 1 and bool(np.any(start[1:] < start[:-1])):
        i = int(np.argmax(start[1:] < start[:-1])) + 1
        raise InputError(
            f"FlowTable.start_ps[{i}]",
            "flows are not sorted by start time, which the reference requires",
            "sort the table by start_ps (stable) before writing",
        )
    cols = [np.asarray(a, dtype=np.int64).tolist() for a in (flows.src, flows.dst, flows.pg, flows.dport, flows.size)]
    starts = start.tolist()
    seconds = {t: _readable_seconds(t) for t in set(starts)}  # flows often share start times; format each once
    lines = [f"{s} {d} {p} {dp} {sz} {seconds[t]}\n" for s, d, p, dp, sz, t in zip(*cols, starts, strict=True)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{n}\n")
        f.writelines(lines)


def _read_header(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError as exc:
        raise InputError(
            str(path), f"cannot open flow file: {exc.strerror}", "give the path of an HPCC flow file"
        ) from exc
    tokens = first.decode("utf-8", errors="replace").split()
    where = f"{path}:1"
    if not tokens:
        raise InputError(where, "line 1 must hold the number of flows, found nothing", "start the file with 'flow_num'")
    if len(tokens) != 1 or not _INT_RE.match(tokens[0]):
        raise InputError(
            where, f"line 1 must be a single flow count, found {' '.join(tokens)!r}", "start the file with 'flow_num'"
        )
    flow_num = int(tokens[0])
    if flow_num < 0 or flow_num > MAX_FLOWS:
        raise InputError(
            where, f"flow count {flow_num} is out of range", f"use 0..{MAX_FLOWS} (the reference reads a uint32)"
        )
    return flow_num


def _count_lines(path: Path) -> int:
    """Number of lines (a last line without newline counts), at the speed of reading the file."""
    count, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def _truncated(path: Path, flow_num: int, found: int, n_lines: int) -> InputError:
    return InputError(
        f"{path}:1",
        f"line 1 declares {flow_num} flows but only {found} flow lines follow (the file ends at line {n_lines})",
        "fix the count on line 1 or restore the missing flow lines",
    )


def seconds_to_reference_ps(seconds: np.ndarray) -> np.ndarray:
    """ns-3's Seconds(double) on a 1 ns clock: the double becomes 64.64 fixed point (fraction below 2^-64
    dropped), is multiplied by 10^9 and truncated, so 1.5e-6 s starts at 1499 ns, as in the reference."""
    values, inverse = np.unique(np.asarray(seconds, dtype=np.float64), return_inverse=True)
    ns = [(Fraction(v) * 2**64 // 1 * 10**9 // 2**64) for v in values.tolist()]
    return (np.asarray(ns, dtype=np.int64) * 1000)[inverse]


def _readable_seconds(ps: int) -> str:
    """A start time that the reference (and ``read_flows``) truncates back to ``ps``: when the exact decimal
    falls just below its nanosecond as a double, half a nanosecond more is written."""
    text = format_seconds(ps)
    if ps % 1000 == 0 and int(seconds_to_reference_ps(np.array([float(text)]))[0]) != ps:
        text = format_seconds(ps + 500)
    return text


def _first_bad_row(rows: np.ndarray) -> int | None:
    """Index of the first row breaking any rule, or None. Vectorized: runs on millions of rows."""
    start = rows["start"]
    with np.errstate(invalid="ignore"):
        masks = [
            rows["src"] < 0,
            rows["dst"] < 0,
            rows["src"] == rows["dst"],
            (rows["pg"] < 0) | (rows["pg"] >= N_PRIORITY_GROUPS),
            (rows["dport"] < 0) | (rows["dport"] > 65535),
            rows["size"] <= 0,
            rows["size"] > MAX_SIZE_BYTES,
            ~(start >= 0),
            ~(start <= _MAX_START_S),
        ]
        bad = np.logical_or.reduce(masks)
        if len(rows) > 1:
            ps = np.rint(np.where(bad, 0.0, start) * _PS_PER_S)
            bad[1:] |= ps[1:] < ps[:-1]
    return int(np.argmax(bad)) if bad.any() else None


def _rescan(path: Path, flow_num: int, only: int | None = None, prev_start: float | None = None) -> None:
    """Walk the flow lines and raise on the first bad one (or only on flow ``only``); slow, used on errors only."""
    prev_ps = None if prev_start is None else round(prev_start * _PS_PER_S)
    with open(path, encoding="utf-8", errors="replace") as f:
        f.readline()
        k = 0
        for lineno, line in enumerate(f, start=2):
            tokens = line.split()
            if not tokens:
                continue  # the reference reads whitespace-separated tokens, so blank lines are harmless
            if k == flow_num:
                return  # the reference ignores anything after the declared flows
            if only is None or k == only:
                prev_ps = _check_line(tokens, f"{path}:{lineno}", prev_ps)
                if k == only:
                    return
            k += 1


def flow_line(path, index: int) -> int:
    """The line number of flow ``index`` (0-based) in a flow file (blank lines skipped as the reader does)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        f.readline()
        k = 0
        for lineno, line in enumerate(f, start=2):
            if line.split():
                if k == index:
                    return lineno
                k += 1
    return 0


def _check_line(tokens: list[str], where: str, prev_ps: int | None) -> int:
    """Validate one flow line; returns its start in ps (for the sort check of the next line)."""
    if len(tokens) != 6:
        raise InputError(where, f"expected 6 columns, found {len(tokens)}: {' '.join(tokens)!r}", _LINE_FIX)
    values = []
    for name, tok in zip(_COLUMNS[:5], tokens[:5], strict=True):
        if not _INT_RE.match(tok):
            raise InputError(where, f"{name} {tok!r} is not an integer", _LINE_FIX)
        values.append(int(tok))
    src, dst, pg, dport, size = values
    for name, v in (("src", src), ("dst", dst)):
        if v < 0:
            raise InputError(where, f"{name} node id {v} is negative", "use a host id from the topology")
    if src == dst:
        raise InputError(where, f"flow from node {src} to itself", "give different src and dst hosts")
    if not 0 <= pg < N_PRIORITY_GROUPS:
        raise InputError(
            where, f"pg {pg} is not a priority group", f"use 0..{N_PRIORITY_GROUPS - 1}; shipped files use 3"
        )
    if not 0 <= dport <= 65535:
        raise InputError(where, f"dport {dport} does not fit 16 bits", "use 0..65535; shipped files use 100")
    if size <= 0:
        raise InputError(where, f"size {size} B must be positive", "give the flow size in bytes, at least 1")
    if size > MAX_SIZE_BYTES:
        raise InputError(where, f"size {size} B is too large", f"use at most 2**53 = {MAX_SIZE_BYTES} bytes")
    tok = tokens[5]
    if tok.lower() in ("nan", "+nan", "-nan"):
        raise InputError(where, "start time is NaN", "give the start time in seconds, e.g. 0.0 or 2.000001")
    start = float(tok) if _FLOAT_RE.match(tok) or tok.lower().lstrip("+-") in ("inf", "infinity") else None
    if start is None:
        raise InputError(where, f"start time {tok!r} is not a number", "give the start time in seconds, e.g. 0.0")
    if start < 0:
        raise InputError(where, f"start time {tok} s is negative", "start flows at 0 or later")
    if not math.isfinite(start) or start > _MAX_START_S:
        raise InputError(where, f"start time {tok} s is too large", f"use at most {_MAX_START_S:.0f} s")
    ps = round(start * _PS_PER_S)
    if prev_ps is not None and ps < prev_ps:
        raise InputError(
            where,
            f"start time {tok} s is earlier than the previous flow's "
            f"({format_seconds(prev_ps)} s); the reference reads flows in order",
            "sort the flow lines by start time",
        )
    return ps
