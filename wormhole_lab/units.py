"""Parsing of ns-3 style quantities ("100Gbps", "1000ns", "50Mb/s") into integers.

Rates become bit/s, times become picoseconds: the engine's clock unit.
"""

import re

from wormhole_lab.errors import InputError

_RATE_PREFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_TIME_PS = {"s": 10**12, "ms": 10**9, "us": 10**6, "ns": 10**3, "ps": 1}
_RATE_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)([kKMGT]?)(bps|b/s|Bps|B/s)$")
_TIME_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)(s|ms|us|ns|ps)$")
MAX_RATE_BPS = 10**15  # 1 Pbit/s: far above any link, far below where int64 bit/s arithmetic overflows
MAX_TIME_PS = 9 * 10**18  # 9e6 s (~104 days), as the flow and config readers allow: fits int64 picoseconds


def parse_rate(text: str, where: str) -> int:
    """'100Gbps' -> 100_000_000_000 (bit/s). Bytes per second ('B/s') are multiplied by 8."""
    m = _RATE_RE.match(text.strip())
    if not m:
        raise InputError(where, f"cannot read rate {text!r}", "write a number and a unit such as 100Gbps or 50Mb/s")
    value = float(m.group(1)) * _RATE_PREFIX[m.group(2)] * (8 if m.group(3).startswith("B") else 1)
    if value <= 0:
        raise InputError(where, f"rate {text!r} must be positive", "use a rate above 0, e.g. 100Gbps")
    if not value <= MAX_RATE_BPS:  # also inf, which float() gives for e.g. '1e400Gbps'
        raise InputError(where, f"rate {text!r} is too large", "use at most 1000Tbps (check the unit prefix)")
    return int(round(value))


def parse_time_ps(text: str, where: str) -> int:
    """'1000ns' -> 1_000_000 ps; '0.001ms' -> 1_000_000 ps. Negative times are rejected."""
    m = _TIME_RE.match(text.strip())
    if not m:
        raise InputError(where, f"cannot read time {text!r}", "write a number and a unit such as 1000ns or 1us")
    value = float(m.group(1)) * _TIME_PS[m.group(2)]
    if not value <= MAX_TIME_PS:  # also inf
        raise InputError(where, f"time {text!r} is too large", "use at most 9e6s (check the unit)")
    return int(round(value))


def format_rate(bps: int) -> str:
    """Inverse of parse_rate for whole multiples: 100_000_000_000 -> '100Gbps'."""
    for prefix in ("T", "G", "M", "K"):
        if bps % _RATE_PREFIX[prefix] == 0:
            return f"{bps // _RATE_PREFIX[prefix]}{prefix}bps"
    return f"{bps}bps"


def format_time_ps(ps: int) -> str:
    """Picoseconds as ns when whole (the reference's unit), else ps."""
    return f"{ps // 1000}ns" if ps % 1000 == 0 else f"{ps}ps"
