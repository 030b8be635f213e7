"""The reference simulator's ``config.txt`` (HPCC ns-3, ``scratch/third``): read into an EngineConfig, and written back.

Format: one ``KEY value...`` per line, whitespace separated, any order, blank lines allowed. Units follow
``third.cc`` at commit 9f4be2a of alibaba-edu/High-Precision-Congestion-Control: DCQCN timers in
microseconds, BUFFER_SIZE in MB (x1024x1024), ECN thresholds in KB (x1000) per link rate in bit/s,
rates as ns-3 strings ("20Mb/s"), SIMULATOR_STOP_TIME in seconds. We are stricter than the reference:
unknown keys, duplicates, and absent keys it would silently default (often to 0 or "") are errors.
CC_MODE 1 (DCQCN), 3 (HPCC), 7 (TIMELY) and 8 (DCTCP) are read; 10 (HPCC-PINT) is not supported yet.
A config read here runs with ``EngineConfig.rng = "ns3"``, the reference's own random draws (its seed 1, run 1),
so DCQCN runs give the reference's outputs byte for byte; the file has no key for it (nor has the reference).
"""

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from wormhole_lab.engine.config import MAX_STOP_TIME_PS, EngineConfig
from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.units import parse_rate
from wormhole_lab.workload.hpcc_flow_format import format_seconds

_MB = 1024 * 1024
_KB = 1000
_PS_PER_US = 10**6
_PS_PER_S = 10**12
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")

CC_MODES = {1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}
"""CC_MODE values the engine runs."""
_CC_NOT_YET = {10: "HPCC-PINT"}
_PRESET_OF = {"dcqcn": "dcqcn", "hpcc": "hp", "timely": "timely", "dctcp": "dctcp"}
"""The run.py --cc whose values suggest a missing key (and fill absent HPCC keys) for each engine cca."""


@dataclass(frozen=True)
class Ns3Config:
    """A reference config.txt: the engine knobs plus the file names (relative to the working directory, as given)."""

    engine: EngineConfig
    topology_file: str
    flow_file: str
    fct_output_file: str = "fct.txt"  # third.cc's own defaults for the two outputs
    pfc_output_file: str = "pfc.txt"
    trace_file: str | None = None  # node list for the packet trace; needed only with enable_trace
    trace_output_file: str | None = None
    qlen_mon_file: str | None = None
    qlen_mon_start_ns: int | None = None
    qlen_mon_end_ns: int | None = None
    enable_trace: bool = False
    raw: dict = field(default_factory=dict)  # KEY -> value text exactly as read (tokens joined by one space)


# ---- value parsers: (tokens, where) -> value in engine units -------------------------------------------------


def _one(tokens, where, what):
    if len(tokens) != 1:
        found = "nothing" if not tokens else repr(" ".join(tokens))
        raise InputError(where, f"expected one value ({what}), found {found}", f"write the key followed by {what}")
    return tokens[0]


def _uint(tokens, where):
    tok = _one(tokens, where, "a non-negative integer")
    if not _INT_RE.match(tok) or int(tok) < 0:
        raise InputError(where, f"{tok!r} is not a non-negative integer", "write a whole number such as 1")
    return int(tok)


def _bool(tokens, where):
    tok = _one(tokens, where, "0 or 1")
    if tok not in ("0", "1"):
        raise InputError(where, f"{tok!r} is not 0 or 1", "write 0 (off) or 1 (on)")
    return tok == "1"


def _float_token(tok, where):
    if not _FLOAT_RE.match(tok):
        raise InputError(where, f"{tok!r} is not a finite number", "write a decimal number such as 0.95")
    return float(tok)


def _float(tokens, where):
    return _float_token(_one(tokens, where, "a number"), where)


def _us(tokens, where):
    v = _float(tokens, where)
    if v < 0:
        raise InputError(where, f"{v} us is negative", "write a positive number of microseconds")
    return round(v * _PS_PER_US)


def _seconds(tokens, where):
    v = _float(tokens, where)
    if v < 0 or v > 9.0e6:
        raise InputError(where, f"{v} s is out of range", "write a positive number of seconds such as 4.00")
    return round(v * _PS_PER_S)


def _rate(tokens, where):
    return parse_rate(_one(tokens, where, "a rate such as 20Mb/s"), where)


def _path(tokens, where):
    return _one(tokens, where, "a file name without spaces")


def _megabytes(tokens, where):
    tok = _one(tokens, where, "a whole number of MB")
    # Python 3's run.py writes "32.0"; third.cc reads a uint32, so only whole numbers mean what they say.
    v = _float_token(tok, where)
    if v <= 0 or v != int(v):
        raise InputError(
            where,
            f"buffer size {tok} MB is not a positive whole number",
            "third.cc reads BUFFER_SIZE as an integer number of MB, e.g. 32",
        )
    if v >= 4096:  # the reference's MMU holds the buffer in bytes as a uint32: 4096 MB would wrap to 0
        raise InputError(
            where,
            f"buffer size {tok} MB is too large",
            "BUFFER_SIZE is in MB (x1024x1024), e.g. 32; the reference's 32-bit byte count cannot hold 4096 MB or more",
        )
    return int(v) * _MB


def _map(tokens, where, value):
    if not tokens or not _INT_RE.match(tokens[0]) or int(tokens[0]) < 0:
        raise InputError(where, "the map must start with its entry count", "write 'n rate1 v1 ... raten vn'")
    n = int(tokens[0])
    if len(tokens) != 1 + 2 * n:
        raise InputError(
            where,
            f"declares {n} entries but gives {(len(tokens) - 1) / 2:g} rate/value pairs",
            "write 'n rate1 v1 ... raten vn' with exactly n pairs",
        )
    out = {}
    for i in range(n):
        rate_tok, v_tok = tokens[1 + 2 * i], tokens[2 + 2 * i]
        if not _INT_RE.match(rate_tok) or int(rate_tok) <= 0:
            raise InputError(
                where, f"link rate {rate_tok!r} is not a positive integer", "give rates in bit/s, e.g. 100000000000"
            )
        rate = int(rate_tok)
        if rate in out:
            raise InputError(where, f"link rate {rate} appears twice", "give each link rate once")
        out[rate] = value(v_tok, where)
    return out


def _kb(tok, where):
    if not _INT_RE.match(tok) or int(tok) < 0:
        raise InputError(
            where, f"threshold {tok!r} is not a whole number of KB", "third.cc reads K as an integer (KB x 1000)"
        )
    return int(tok) * _KB


def _prob(tok, where):
    p = _float_token(tok, where)
    if not 0.0 <= p <= 1.0:
        raise InputError(where, f"Pmax {tok} is not a probability", "use a value in [0, 1], e.g. 0.20")
    return p


def _kmap(tokens, where):
    return _map(tokens, where, _kb)


def _pmap(tokens, where):
    return _map(tokens, where, _prob)


def _link_down(tokens, where):
    if len(tokens) != 3 or not all(_INT_RE.match(t) and int(t) >= 0 for t in tokens):
        raise InputError(where, f"expected 't_us nodeA nodeB', found {' '.join(tokens)!r}", "write LINK_DOWN 0 0 0")
    return tuple(int(t) for t in tokens)


def _token(tokens, where):
    return _one(tokens, where, "one value")


# KEY -> (parser, required). "Required" = the engine uses it, or the reference's fallback would be unusable.
_SPECS = {
    "ENABLE_QCN": (_bool, True),
    "USE_DYNAMIC_PFC_THRESHOLD": (_bool, True),
    "PACKET_PAYLOAD_SIZE": (_uint, True),
    "TOPOLOGY_FILE": (_path, True),
    "FLOW_FILE": (_path, True),
    "TRACE_FILE": (_path, False),  # required when ENABLE_TRACE is 1
    "TRACE_OUTPUT_FILE": (_path, False),  # idem
    "FCT_OUTPUT_FILE": (_path, True),
    "PFC_OUTPUT_FILE": (_path, True),
    "SIMULATOR_STOP_TIME": (_seconds, True),
    "CC_MODE": (_uint, True),
    "ALPHA_RESUME_INTERVAL": (_us, True),
    "RATE_DECREASE_INTERVAL": (_us, True),
    "CLAMP_TARGET_RATE": (_bool, True),
    "RP_TIMER": (_us, True),  # third.cc leaves it uninitialised when absent
    "EWMA_GAIN": (_float, True),  # third.cc's fallback is the C++ integer 1 / 16 == 0
    "FAST_RECOVERY_TIMES": (_uint, True),
    "RATE_AI": (_rate, True),  # third.cc's fallback is the empty string
    "RATE_HAI": (_rate, True),
    "MIN_RATE": (_rate, True),
    "DCTCP_RATE_AI": (_rate, True),
    "ERROR_RATE_PER_LINK": (_float, False),
    "L2_CHUNK_SIZE": (_uint, False),
    "L2_ACK_INTERVAL": (_uint, True),  # third.cc's fallback 0 makes senders ignore every ACK
    "L2_BACK_TO_ZERO": (_bool, False),
    "HAS_WIN": (_bool, True),
    "GLOBAL_T": (_bool, True),
    "VAR_WIN": (_bool, True),
    "RATE_BOUND": (_bool, True),
    "ACK_HIGH_PRIO": (_bool, True),
    "LINK_DOWN": (_link_down, False),
    "ENABLE_TRACE": (_bool, True),  # third.cc's fallback is 1: a packet trace nobody asked for
    "KMAX_MAP": (_kmap, True),
    "KMIN_MAP": (_kmap, True),
    "PMAX_MAP": (_pmap, True),
    "BUFFER_SIZE": (_megabytes, True),
    "QLEN_MON_FILE": (_path, False),
    "QLEN_MON_START": (_uint, False),
    "QLEN_MON_END": (_uint, False),
    # HPCC knobs: required with CC_MODE 3 (see _HPCC_FIELD_KEY); other modes read them when given.
    "FAST_REACT": (_bool, False),
    "U_TARGET": (_float, False),
    "MI_THRESH": (_uint, False),
    "INT_MULTI": (_uint, False),
    "MULTI_RATE": (_bool, False),
    "SAMPLE_FEEDBACK": (_bool, False),
    # HPCC-PINT knobs: syntax-checked and kept in raw (CC_MODE 10 is not supported yet).
    "PINT_LOG_BASE": (_float, False),
    "PINT_PROB": (_float, False),
    # Legacy keys third.cc reads but never uses for anything that matters here.
    "PAUSE_TIME": (_token, False),
    "DATA_RATE": (_token, False),
    "LINK_DELAY": (_token, False),
}

# EngineConfig field -> config key (values are already in engine units after parsing, except CC_MODE).
_FIELD_KEY = {
    "cca": "CC_MODE",
    "payload_bytes": "PACKET_PAYLOAD_SIZE",
    "buffer_bytes": "BUFFER_SIZE",
    "kmin_bytes": "KMIN_MAP",
    "kmax_bytes": "KMAX_MAP",
    "pmax": "PMAX_MAP",
    "enable_ecn": "ENABLE_QCN",
    "pfc_dynamic_threshold": "USE_DYNAMIC_PFC_THRESHOLD",
    "has_win": "HAS_WIN",
    "var_win": "VAR_WIN",
    "global_t": "GLOBAL_T",
    "rate_bound": "RATE_BOUND",
    "ack_high_prio": "ACK_HIGH_PRIO",
    "alpha_resume_interval_ps": "ALPHA_RESUME_INTERVAL",
    "rate_decrease_interval_ps": "RATE_DECREASE_INTERVAL",
    "rp_timer_ps": "RP_TIMER",
    "ewma_gain": "EWMA_GAIN",
    "fast_recovery_times": "FAST_RECOVERY_TIMES",
    "clamp_target_rate": "CLAMP_TARGET_RATE",
    "rate_ai_bps": "RATE_AI",
    "rate_hai_bps": "RATE_HAI",
    "min_rate_bps": "MIN_RATE",
    "dctcp_rate_ai_bps": "DCTCP_RATE_AI",
    "stop_time_ps": "SIMULATOR_STOP_TIME",
}
# The HPCC knobs. third.cc falls back to FAST_REACT 1, U_TARGET 0.95, MI_THRESH 5, INT_MULTI 1, MULTI_RATE 1 and
# SAMPLE_FEEDBACK 0, where run.py always writes MI_THRESH 0 and MULTI_RATE 0: so CC_MODE 3 needs all six keys.
# The other modes ignore them; when absent there, they take what run.py writes for that mode (_absent_values).
_HPCC_FIELD_KEY = {
    "fast_react": "FAST_REACT",
    "u_target": "U_TARGET",
    "mi_thresh": "MI_THRESH",
    "int_multi": "INT_MULTI",
    "multi_rate": "MULTI_RATE",
    "sample_feedback": "SAMPLE_FEEDBACK",
}
_FIELD_KEY.update(_HPCC_FIELD_KEY)

# What run.py writes for the keys no EngineConfig field carries (its dcqcn row; see engine/presets.py for sources).
_RUN_PY_EXTRAS = {
    "ERROR_RATE_PER_LINK": "0.0000",
    "L2_CHUNK_SIZE": "4000",
    "L2_ACK_INTERVAL": "1",
    "L2_BACK_TO_ZERO": "0",
    "PINT_LOG_BASE": "1.01",
    "PINT_PROB": "1.0",
    "LINK_DOWN": "0 0 0",
    "ENABLE_TRACE": "1",
}
_RUN_PY_PATHS = {
    "TOPOLOGY_FILE": "mix/<topo>.txt",
    "FLOW_FILE": "mix/<trace>.txt",
    "TRACE_FILE": "mix/trace.txt",
    "TRACE_OUTPUT_FILE": "mix/mix_<topo>_<trace>_<cc>.tr",
    "FCT_OUTPUT_FILE": "mix/fct_<topo>_<trace>_<cc>.txt",
    "PFC_OUTPUT_FILE": "mix/pfc_<topo>_<trace>_<cc>.txt",
}

# Line layout of run.py's template, so a written config diffs cleanly against the reference's own.
_LAYOUT = (
    ("ENABLE_QCN", "USE_DYNAMIC_PFC_THRESHOLD"),
    ("PACKET_PAYLOAD_SIZE",),
    ("TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE"),
    ("SIMULATOR_STOP_TIME",),
    (
        "CC_MODE",
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "CLAMP_TARGET_RATE",
        "RP_TIMER",
        "EWMA_GAIN",
        "FAST_RECOVERY_TIMES",
        "RATE_AI",
        "RATE_HAI",
        "MIN_RATE",
        "DCTCP_RATE_AI",
    ),
    ("ERROR_RATE_PER_LINK", "L2_CHUNK_SIZE", "L2_ACK_INTERVAL", "L2_BACK_TO_ZERO"),
    (
        "HAS_WIN",
        "GLOBAL_T",
        "VAR_WIN",
        "FAST_REACT",
        "U_TARGET",
        "MI_THRESH",
        "INT_MULTI",
        "MULTI_RATE",
        "SAMPLE_FEEDBACK",
        "PINT_LOG_BASE",
        "PINT_PROB",
    ),
    ("RATE_BOUND",),
    ("ACK_HIGH_PRIO",),
    ("LINK_DOWN",),
    ("ENABLE_TRACE",),
    ("KMAX_MAP", "KMIN_MAP", "PMAX_MAP", "BUFFER_SIZE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END"),
    ("PAUSE_TIME", "DATA_RATE", "LINK_DELAY"),
)


def read_ns3_config(path) -> Ns3Config:
    """Read a reference config.txt; any problem is an InputError naming ``<path>:<line>`` (or the missing key)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(str(path), f"cannot open config: {exc.strerror}", "give the path of a config.txt") from exc
    entries: dict[str, tuple[int, list[str]]] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens:
            continue
        key, here = tokens[0], f"{path}:{lineno}"
        if key not in _SPECS:
            close = difflib.get_close_matches(key, _SPECS, n=3, cutoff=0.6)
            fix = f"did you mean {' or '.join(close)}?" if close else "see the key table in mix/config_doc.txt"
            raise InputError(here, f"unknown key {key!r}", fix)
        if key in entries:
            raise InputError(
                here,
                f"{key} is given twice (also on line {entries[key][0]})",
                "keep one line per key (the reference silently uses the last)",
            )
        entries[key] = (lineno, tokens[1:])

    def where(key):
        return f"{path}:{entries[key][0]}"

    # CC_MODE first: an HPCC-PINT config should hear "not supported yet", not a list of keys it lacks.
    # (When CC_MODE itself is missing, "dcqcn" only chooses which run.py values the error suggests.)
    cca = "dcqcn"
    if "CC_MODE" in entries:
        cca = _cc_name(_uint(entries["CC_MODE"][1], where("CC_MODE")), where("CC_MODE"))
    values = {key: _SPECS[key][0](tokens, where(key)) for key, (_, tokens) in entries.items()}
    required = [k for k, (_, req) in _SPECS.items() if req]
    if values.get("ENABLE_TRACE"):
        required += ["TRACE_FILE", "TRACE_OUTPUT_FILE"]
    if cca == "hpcc":
        required += list(_HPCC_FIELD_KEY.values())
    missing = [k for k in required if k not in entries]
    if missing:
        hints = _run_py_lines(cca)
        suggestion = "; ".join(f"'{k} {hints[k]}'" for k in missing)
        raise InputError(
            str(path),
            f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            "(the reference would silently fall back to built-in defaults, some of them 0 or empty)",
            f"add what run.py --cc {_PRESET_OF[cca]} --bw 100 writes: {suggestion}",
        )
    _check_unsupported(values, where)
    kwargs = {**_absent_values(cca), **{f: values[k] for f, k in _FIELD_KEY.items() if k in values}}
    kwargs["cca"] = cca
    kwargs["rng"] = "ns3"  # the reference's own ECN/PFC draws: a config run here gives the reference's outputs
    if kwargs["stop_time_ps"] >= MAX_STOP_TIME_PS:
        kwargs["stop_time_ps"] = None  # what write_ns3_config writes for "until every flow completes"
    try:
        engine = EngineConfig(**kwargs)
    except InputError as exc:
        m = re.match(r"EngineConfig\.(\w+)", exc.where)
        key = _FIELD_KEY.get(m.group(1)) if m else None
        if key not in entries:
            raise
        raise InputError(where(key), f"{key}: {exc.problem}", exc.fix) from exc
    return Ns3Config(
        engine=engine,
        topology_file=values["TOPOLOGY_FILE"],
        flow_file=values["FLOW_FILE"],
        fct_output_file=values["FCT_OUTPUT_FILE"],
        pfc_output_file=values["PFC_OUTPUT_FILE"],
        trace_file=values.get("TRACE_FILE"),
        trace_output_file=values.get("TRACE_OUTPUT_FILE"),
        qlen_mon_file=values.get("QLEN_MON_FILE"),
        qlen_mon_start_ns=values.get("QLEN_MON_START"),
        qlen_mon_end_ns=values.get("QLEN_MON_END"),
        enable_trace=values["ENABLE_TRACE"],
        raw={key: " ".join(tokens) for key, (_, tokens) in entries.items()},
    )


def _absent_values(cca: str) -> dict:
    """Engine values of the HPCC keys a non-HPCC config may leave out: what run.py writes for its mode.

    Those modes never use them; taking run.py's values keeps a config without them equal to its preset.
    """
    if cca == "hpcc":
        return {}
    ref = preset(_PRESET_OF[cca], 100)
    return {f: getattr(ref, f) for f in _HPCC_FIELD_KEY}


def _cc_name(mode: int, where: str) -> str:
    supported = ", ".join(f"{m} ({n.upper()})" for m, n in CC_MODES.items())
    if mode in _CC_NOT_YET:
        raise InputError(
            where, f"CC_MODE {mode} ({_CC_NOT_YET[mode]}) is not supported yet", f"use a supported CC_MODE: {supported}"
        )
    if mode not in CC_MODES:
        raise InputError(
            where,
            f"unknown CC_MODE {mode} (the reference knows 1, 3, 7, 8, 10)",
            f"use a supported CC_MODE: {supported}",
        )
    return CC_MODES[mode]


def _check_unsupported(values: dict, where) -> None:
    """Reject reference features the engine does not model, rather than silently running something else."""
    if values.get("L2_BACK_TO_ZERO"):
        raise InputError(
            where("L2_BACK_TO_ZERO"),
            "L2_BACK_TO_ZERO 1 (go-back-to-chunk ACK rounding) is not supported",
            "write L2_BACK_TO_ZERO 0, as run.py does",
        )
    if values.get("ERROR_RATE_PER_LINK", 0.0) != 0.0:
        raise InputError(
            where("ERROR_RATE_PER_LINK"),
            "random packet loss (ERROR_RATE_PER_LINK > 0) is not supported yet",
            "write ERROR_RATE_PER_LINK 0.0000",
        )
    # third.cc only schedules the link failure when its time is > 0, so '0 a b' means no failure at all.
    if values.get("LINK_DOWN", (0, 0, 0))[0] > 0:
        raise InputError(
            where("LINK_DOWN"),
            "link failures (LINK_DOWN with a time > 0) are not supported yet",
            "write LINK_DOWN 0 0 0",
        )
    # rdma-hw.cc ReceiveUdp sets m_milestone_rx = L2_ACK_INTERVAL on *every* data packet before
    # ReceiverCheckSeq compares the bytes received so far (ReceiverNextExpectedSeq) with it. So the milestone
    # never advances: every in-order packet is ACKed once the flow has delivered L2_ACK_INTERVAL bytes, and
    # any interval up to one payload ACKs every packet, exactly like 1. A larger interval would leave the
    # first packets unACKed except at L2_CHUNK_SIZE boundaries, which the engine does not model; 0 makes
    # the sender discard every ACK ("ERROR: shouldn't receive ack") so no flow ever finishes.
    interval, payload = values["L2_ACK_INTERVAL"], values["PACKET_PAYLOAD_SIZE"]
    if not 1 <= interval <= payload:
        raise InputError(
            where("L2_ACK_INTERVAL"),
            f"L2_ACK_INTERVAL {interval} is not supported (need 1..{payload}, "
            "the values for which the reference ACKs every packet)",
            "write L2_ACK_INTERVAL 1, as run.py does",
        )


# ---- writing ----------------------------------------------------------------------------------------------------


def _decimal(value: int, unit: int) -> str:
    """value/unit as an exact decimal ('300', '0.5')."""
    whole, frac = divmod(value, unit)
    return str(whole) if frac == 0 else f"{whole}.{frac:0{len(str(unit)) - 1}d}".rstrip("0")


def _fmt_rate(bps: int) -> str:
    return f"{bps // 10**6}Mb/s" if bps % 10**6 == 0 else f"{bps}b/s"


def _fmt_2f(x: float) -> str:
    """'%.2f' like run.py when that is exact, else the shortest exact repr."""
    return f"{x:.2f}" if float(f"{x:.2f}") == x else repr(float(x))


def _fmt_kmap(m: dict, key: str) -> str:
    bad = [r for r, b in m.items() if b % _KB]
    if bad:
        raise InputError(
            f"EngineConfig.{'kmin_bytes' if key == 'KMIN_MAP' else 'kmax_bytes'}[{bad[0]}]",
            f"{m[bad[0]]} B is not a whole number of KB (x1000), which {key} needs",
            "use a multiple of 1000 bytes",
        )
    return " ".join([str(len(m))] + [f"{r} {m[r] // _KB}" for r in sorted(m)])


def _engine_lines(e: EngineConfig) -> dict:
    """Config text of every engine-derived key, formatted as run.py writes it."""
    if e.buffer_bytes % _MB:
        raise InputError(
            "EngineConfig.buffer_bytes",
            f"{e.buffer_bytes} B is not a whole number of MB (x1024x1024)",
            "BUFFER_SIZE is an integer number of MB; use a multiple of 1048576 bytes",
        )
    # the reference always needs a stop time: "until every flow completes" becomes the longest we accept
    stop_ps = MAX_STOP_TIME_PS if e.stop_time_ps is None else e.stop_time_ps
    stop = _fmt_2f(stop_ps / _PS_PER_S)
    if round(float(stop) * _PS_PER_S) != stop_ps:
        stop = format_seconds(stop_ps)
    b = {True: "1", False: "0"}
    return {
        "ENABLE_QCN": b[e.enable_ecn],
        "USE_DYNAMIC_PFC_THRESHOLD": b[e.pfc_dynamic_threshold],
        "PACKET_PAYLOAD_SIZE": str(e.payload_bytes),
        "SIMULATOR_STOP_TIME": stop,
        "CC_MODE": str(e.cc_mode),
        "ALPHA_RESUME_INTERVAL": _decimal(e.alpha_resume_interval_ps, _PS_PER_US),
        "RATE_DECREASE_INTERVAL": _decimal(e.rate_decrease_interval_ps, _PS_PER_US),
        "CLAMP_TARGET_RATE": b[e.clamp_target_rate],
        "RP_TIMER": _decimal(e.rp_timer_ps, _PS_PER_US),
        "EWMA_GAIN": repr(float(e.ewma_gain)),
        "FAST_RECOVERY_TIMES": str(e.fast_recovery_times),
        "RATE_AI": _fmt_rate(e.rate_ai_bps),
        "RATE_HAI": _fmt_rate(e.rate_hai_bps),
        "MIN_RATE": _fmt_rate(e.min_rate_bps),
        "DCTCP_RATE_AI": _fmt_rate(e.dctcp_rate_ai_bps),
        "HAS_WIN": b[e.has_win],
        "GLOBAL_T": b[e.global_t],
        "VAR_WIN": b[e.var_win],
        "FAST_REACT": b[e.fast_react],
        "U_TARGET": repr(float(e.u_target)),
        "MI_THRESH": str(e.mi_thresh),
        "INT_MULTI": str(e.int_multi),
        "MULTI_RATE": b[e.multi_rate],
        "SAMPLE_FEEDBACK": b[e.sample_feedback],
        "RATE_BOUND": b[e.rate_bound],
        "ACK_HIGH_PRIO": b[e.ack_high_prio],
        "KMAX_MAP": _fmt_kmap(e.kmax_bytes, "KMAX_MAP"),
        "KMIN_MAP": _fmt_kmap(e.kmin_bytes, "KMIN_MAP"),
        "PMAX_MAP": " ".join([str(len(e.pmax))] + [f"{r} {_fmt_2f(e.pmax[r])}" for r in sorted(e.pmax)]),
        "BUFFER_SIZE": str(e.buffer_bytes // _MB),
    }


def _run_py_lines(cca: str) -> dict:
    """What run.py --cc <cca> --bw 100 writes for each key (used to suggest a value for a missing key)."""
    return {**_RUN_PY_PATHS, **_RUN_PY_EXTRAS, **_engine_lines(preset(_PRESET_OF[cca], 100))}


def write_ns3_config(
    cfg,
    path,
    topology_file=None,
    flow_file=None,
    *,
    fct_output_file=None,
    pfc_output_file=None,
    trace_file=None,
    trace_output_file=None,
    qlen_mon_file=None,
    enable_trace=None,
) -> Path:
    """Write an Ns3Config or EngineConfig as a config.txt that read_ns3_config reads back to the same Ns3Config.

    Keyword paths override those of an Ns3Config; an EngineConfig needs ``topology_file`` and ``flow_file``.
    Values whose raw text (from the file it was read from) still means the same thing are written verbatim.
    """
    if isinstance(cfg, EngineConfig):
        if topology_file is None or flow_file is None:
            raise InputError(
                "write_ns3_config",
                "an EngineConfig carries no file names",
                "pass topology_file= and flow_file= (paths relative to where the simulator runs)",
            )
        cfg = Ns3Config(engine=cfg, topology_file=topology_file, flow_file=flow_file)
    elif not isinstance(cfg, Ns3Config):
        raise InputError(
            "write_ns3_config", f"cannot write a {type(cfg).__name__}", "pass an Ns3Config or an EngineConfig"
        )
    overrides = dict(
        topology_file=topology_file,
        flow_file=flow_file,
        fct_output_file=fct_output_file,
        pfc_output_file=pfc_output_file,
        trace_file=trace_file,
        trace_output_file=trace_output_file,
        qlen_mon_file=qlen_mon_file,
        enable_trace=enable_trace,
    )
    cfg = replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    if cfg.enable_trace and (cfg.trace_file is None or cfg.trace_output_file is None):
        raise InputError(
            "write_ns3_config",
            "enable_trace is on but trace_file or trace_output_file is missing",
            "pass both file names, or enable_trace=False",
        )
    lines = _engine_lines(cfg.engine)
    if cfg.raw:
        # A config read from a file without HPCC keys (allowed outside CC_MODE 3) stays without them,
        # as long as the engine still holds the values reading it back would fill in.
        absent = _absent_values(cfg.engine.cca)
        for f, key in _HPCC_FIELD_KEY.items():
            if key not in cfg.raw and f in absent and getattr(cfg.engine, f) == absent[f]:
                del lines[key]
    fields = {
        "TOPOLOGY_FILE": cfg.topology_file,
        "FLOW_FILE": cfg.flow_file,
        "TRACE_FILE": cfg.trace_file,
        "TRACE_OUTPUT_FILE": cfg.trace_output_file,
        "FCT_OUTPUT_FILE": cfg.fct_output_file,
        "PFC_OUTPUT_FILE": cfg.pfc_output_file,
        "QLEN_MON_FILE": cfg.qlen_mon_file,
        "QLEN_MON_START": cfg.qlen_mon_start_ns,
        "QLEN_MON_END": cfg.qlen_mon_end_ns,
        "ENABLE_TRACE": "1" if cfg.enable_trace else "0",
    }
    lines.update({k: str(v) for k, v in fields.items() if v is not None})
    for key, default in _RUN_PY_EXTRAS.items():
        # A config read from a file keeps exactly the optional keys it had; a fresh one gets run.py's.
        if key not in lines and (key in cfg.raw or not cfg.raw or _SPECS[key][1]):
            lines[key] = cfg.raw.get(key, default)
    for key in ("PAUSE_TIME", "DATA_RATE", "LINK_DELAY"):
        if key in cfg.raw:
            lines[key] = cfg.raw[key]
    for key, text in lines.items():
        if any(ch.isspace() for ch in str(text)) and _SPECS[key][0] is _path:
            raise InputError(
                f"Ns3Config.{key.lower()}",
                f"file name {text!r} contains whitespace",
                "the reference reads whitespace-separated tokens; rename the file",
            )
        if key in cfg.raw and cfg.raw[key] != text and _same_meaning(key, cfg.raw[key], text):
            lines[key] = cfg.raw[key]
    groups = [[f"{k} {lines[k]}" for k in group if k in lines] for group in _LAYOUT]
    path = Path(path)
    path.write_text("\n\n".join("\n".join(g) for g in groups if g) + "\n", encoding="utf-8")
    return path


def _same_meaning(key: str, a: str, b: str) -> bool:
    parse = _SPECS[key][0]
    try:
        return parse(a.split(), key) == parse(b.split(), key)
    except InputError:
        return False
