"""The reference's config.txt: reading, writing, the shipped files, and one test per kind of bad input."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError
from wormhole_lab.ns3_config import Ns3Config, read_ns3_config, write_ns3_config

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
REFERENCE = SHARED / "reference"
needs_shared = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference files not found at {SHARED}")
BENCH_CONFIG = REFERENCE / "bench" / "fat_perm64" / "config.txt"
SHIPPED_DCQCN = sorted(REFERENCE.glob("validation/*/config_dcqcn.txt")) + [BENCH_CONFIG]
SHIPPED_HPCC = sorted(REFERENCE.glob("validation/*/config_hpcc.txt"))
MB, G, M = 1024 * 1024, 10**9, 10**6
HPCC_KEYS = ("FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK")


def read_preset(*args, **kwargs):
    """A preset as read from a config.txt: with the reference's own random draws (rng "ns3")."""
    return preset(*args, **kwargs).with_(rng="ns3")


@pytest.fixture
def base(tmp_path):
    """Text of a valid DCQCN config, as run.py --cc dcqcn --bw 100 would write it."""
    return write_ns3_config(preset("dcqcn"), tmp_path / "base.txt", "topology.txt", "flow.txt").read_text()


@pytest.fixture
def hp_base(tmp_path):
    """Text of a valid HPCC config, as run.py --cc hp --bw 100 would write it."""
    return write_ns3_config(preset("hp"), tmp_path / "hp_base.txt", "topology.txt", "flow.txt").read_text()


def _edit(tmp_path, text, key, line):
    """Replace the line of ``key`` by ``line`` (None deletes it); returns (path, 1-based line number)."""
    lines = text.splitlines()
    index = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [key])
    if line is None:
        del lines[index]
    else:
        lines[index] = line
    path = tmp_path / "config.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, index + 1


def _append(tmp_path, text, line):
    path = tmp_path / "config.txt"
    path.write_text(text + line + "\n")
    return path, len(text.splitlines()) + 1


RUN_PY_STOP_PS = 4 * 10**12  # the shipped configs' SIMULATOR_STOP_TIME 4.00; presets have none (until completion)


# ---- the shipped files ------------------------------------------------------------------------------------------


@needs_shared
@pytest.mark.parametrize("path", SHIPPED_DCQCN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_dcqcn_config_equals_preset(path):
    cfg = read_ns3_config(path)
    assert cfg.engine == read_preset("dcqcn", 100).with_(stop_time_ps=RUN_PY_STOP_PS)
    assert (cfg.topology_file, cfg.flow_file, cfg.trace_file) == ("topology.txt", "flow.txt", "trace.txt")
    assert (cfg.fct_output_file, cfg.pfc_output_file, cfg.trace_output_file) == ("fct.txt", "pfc.txt", "mix.tr")
    assert (cfg.qlen_mon_file, cfg.qlen_mon_start_ns, cfg.qlen_mon_end_ns) == ("qlen.txt", 9_000_000_000, 9_000_000_001)
    assert cfg.enable_trace is False
    assert cfg.raw["U_TARGET"] == "0.95" and cfg.raw["KMAX_MAP"] == "2 100000000000 1600 400000000000 6400"


@needs_shared
@pytest.mark.parametrize("path", SHIPPED_DCQCN + SHIPPED_HPCC, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_config_rewrites_byte_identically(tmp_path, path):
    cfg = read_ns3_config(path)
    out = write_ns3_config(cfg, tmp_path / "config.txt")
    assert out.read_text() == path.read_text()
    assert read_ns3_config(out) == cfg


@needs_shared
@pytest.mark.parametrize("path", SHIPPED_HPCC, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_hpcc_config_equals_preset(path):
    cfg = read_ns3_config(path)  # run.py --cc hp --hpai 50 --bw 100
    assert cfg.engine == read_preset("hp", 100, hpai_mbps=50).with_(stop_time_ps=RUN_PY_STOP_PS)
    assert cfg.engine.cca == "hpcc" and cfg.engine.rate_ai_bps == 50 * M and cfg.engine.int_multi == 4
    assert (cfg.topology_file, cfg.flow_file, cfg.trace_file) == ("topology.txt", "flow.txt", "trace.txt")
    assert (cfg.fct_output_file, cfg.pfc_output_file, cfg.trace_output_file) == ("fct.txt", "pfc.txt", "mix.tr")
    assert cfg.enable_trace is False


# ---- values and units -------------------------------------------------------------------------------------------


def test_units(tmp_path, base):
    path, _ = _edit(tmp_path, base, "RP_TIMER", "RP_TIMER 2.5")
    text = path.read_text().replace("BUFFER_SIZE 32", "BUFFER_SIZE 12").replace("RATE_AI 20Mb/s", "RATE_AI 1.5Gbps")
    text = re.sub(r"SIMULATOR_STOP_TIME \S+", "SIMULATOR_STOP_TIME 0.01", text)
    path.write_text(text)
    e = read_ns3_config(path).engine
    assert e.rp_timer_ps == 2_500_000 and e.buffer_bytes == 12 * MB and e.rate_ai_bps == 1_500_000_000
    assert e.stop_time_ps == 10**10
    assert e.kmin_bytes[100 * G] == 400_000 and e.pmax[400 * G] == 0.2


def test_keys_in_any_order_with_blank_lines(tmp_path, base):
    lines = [ln for ln in base.splitlines() if ln]
    path = tmp_path / "config.txt"
    path.write_text("\n\n".join(reversed(lines)) + "\n")
    assert read_ns3_config(path).engine == read_preset("dcqcn")


def test_dctcp_mode(tmp_path):
    path = write_ns3_config(preset("dctcp"), tmp_path / "config.txt", "t.txt", "f.txt")
    assert read_ns3_config(path).engine == read_preset("dctcp")


@pytest.mark.parametrize(("mode", "cca"), [(1, "dcqcn"), (3, "hpcc"), (7, "timely"), (8, "dctcp")])
def test_cc_mode_chooses_the_algorithm(tmp_path, mode, cca):
    text = write_ns3_config(preset("dcqcn_vwin"), tmp_path / "vwin.txt", "t.txt", "f.txt").read_text()
    path, _ = _edit(tmp_path, text, "CC_MODE", f"CC_MODE {mode}")
    e = read_ns3_config(path).engine
    assert e.cca == cca and e.cc_mode == mode
    assert e.with_(cca="dcqcn") == read_preset("dcqcn_vwin")  # every other value is the file's


def test_engine_rules_name_the_line(tmp_path, hp_base):
    path, lineno = _edit(tmp_path, hp_base, "HAS_WIN", "HAS_WIN 0")  # HPCC needs a window
    with pytest.raises(InputError, match=f"config.txt:{lineno}: HAS_WIN: "):
        read_ns3_config(path)


def test_timely_config_round_trips(tmp_path):
    for name in ("timely", "timely_vwin"):
        path = write_ns3_config(preset(name), tmp_path / f"{name}.txt", "t.txt", "f.txt")
        text = path.read_text()
        assert "CC_MODE 7\n" in text and "RATE_AI 100Mb/s\n" in text and "RATE_HAI 500Mb/s\n" in text
        assert "FAST_REACT 0\n" in text and "INT_MULTI 1\n" in text
        cfg = read_ns3_config(path)
        assert cfg.engine == read_preset(name)
        again = write_ns3_config(cfg, tmp_path / f"{name}_again.txt")
        assert again.read_text() == text and read_ns3_config(again) == cfg


def test_hpcc_config_round_trips(tmp_path, hp_base):
    text = write_ns3_config(preset("hp", 100, hpai_mbps=50), tmp_path / "hp.txt", "t.txt", "f.txt").read_text()
    for line in ("CC_MODE 3", "RATE_AI 50Mb/s", "RATE_HAI 50Mb/s", "FAST_REACT 1", "U_TARGET 0.95", "INT_MULTI 4"):
        assert f"\n{line}\n" in text
    engine = preset("hp", 200).with_(
        u_target=0.9, mi_thresh=5, int_multi=2, multi_rate=True, sample_feedback=True, fast_react=False
    )
    back = read_ns3_config(write_ns3_config(engine, tmp_path / "changed.txt", "t.txt", "f.txt"))
    assert back.engine == engine.with_(rng="ns3")  # reading gives the reference's draws
    assert read_ns3_config(write_ns3_config(back, tmp_path / "again.txt")) == back


def test_hpcc_keys_are_optional_outside_cc_mode_3(tmp_path, base):
    text = "\n".join(ln for ln in base.splitlines() if ln.split()[:1] not in [[k] for k in HPCC_KEYS]) + "\n"
    path = tmp_path / "config.txt"
    path.write_text(text)
    cfg = read_ns3_config(path)
    assert cfg.engine == read_preset("dcqcn")  # absent: what run.py writes for DCQCN
    out = write_ns3_config(cfg, tmp_path / "again.txt")
    assert out.read_text() == text and read_ns3_config(out) == cfg
    # a value the file did not have is written when it changed
    changed = replace(cfg, engine=cfg.engine.with_(u_target=0.5))
    assert read_ns3_config(write_ns3_config(changed, tmp_path / "changed.txt")).engine.u_target == 0.5


def test_hpcc_keys_are_read_in_every_mode(tmp_path, base):
    path, _ = _edit(tmp_path, base, "FAST_REACT", "FAST_REACT 1")
    cfg = read_ns3_config(path)
    assert cfg.engine == read_preset("dcqcn").with_(fast_react=True)
    assert read_ns3_config(write_ns3_config(cfg, tmp_path / "again.txt")) == cfg


def test_python3_style_buffer_size_is_accepted(tmp_path, base):
    path, _ = _edit(tmp_path, base, "BUFFER_SIZE", "BUFFER_SIZE 32.0")
    assert read_ns3_config(path).engine.buffer_bytes == 32 * MB


@pytest.mark.parametrize("line", ["L2_ACK_INTERVAL 1000", "LINK_DOWN 0 5 6"])
def test_accepted_equivalents(tmp_path, base, line):
    path, _ = _edit(tmp_path, base, line.split()[0], line)
    assert read_ns3_config(path).engine == read_preset("dcqcn")


def test_legacy_and_hpcc_keys_are_kept_in_raw(tmp_path, base):
    path, _ = _append(tmp_path, base, "PAUSE_TIME 5\nDATA_RATE 100Gbps\nLINK_DELAY 1us")
    cfg = read_ns3_config(path)
    assert cfg.engine == read_preset("dcqcn")
    assert cfg.raw["PAUSE_TIME"] == "5" and cfg.raw["MI_THRESH"] == "0" and cfg.raw["PINT_LOG_BASE"] == "1.01"
    assert read_ns3_config(write_ns3_config(cfg, tmp_path / "again.txt")) == cfg


# ---- round trips ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("bw", [25, 100, 400])
def test_every_preset_round_trips(tmp_path, name, bw):
    path = write_ns3_config(preset(name, bw), tmp_path / "config.txt", "topo.txt", "flow.txt")
    cfg = read_ns3_config(path)
    assert cfg.engine == read_preset(name, bw)
    assert (cfg.topology_file, cfg.flow_file, cfg.fct_output_file, cfg.pfc_output_file) == (
        "topo.txt",
        "flow.txt",
        "fct.txt",
        "pfc.txt",
    )
    assert read_ns3_config(write_ns3_config(cfg, tmp_path / "again.txt")) == cfg


def test_changed_values_round_trip(tmp_path):
    engine = preset("dcqcn").with_(
        rp_timer_ps=123_456_789,
        ewma_gain=0.3,
        stop_time_ps=1_234_567_891,
        pmax={100 * G: 0.125, 400 * G: 0.2},
        rate_hai_bps=123_456_789,
    )
    cfg = Ns3Config(
        engine=engine,
        topology_file="t.txt",
        flow_file="f.txt",
        enable_trace=True,
        trace_file="trace.txt",
        trace_output_file="out.tr",
        qlen_mon_file="q.txt",
        qlen_mon_start_ns=5,
        qlen_mon_end_ns=6,
    )
    back = read_ns3_config(write_ns3_config(cfg, tmp_path / "config.txt"))
    assert back.engine == engine.with_(rng="ns3")  # reading gives the reference's draws
    assert replace(back, raw={}) == replace(cfg, engine=back.engine, raw={})


def test_modified_read_config_writes_new_values(tmp_path, base):
    path = tmp_path / "config.txt"
    path.write_text(base)
    cfg = read_ns3_config(path)
    changed = replace(cfg, engine=cfg.engine.with_(rp_timer_ps=55 * 10**6))
    back = read_ns3_config(write_ns3_config(changed, tmp_path / "out.txt", flow_file="other.txt"))
    assert back.engine.rp_timer_ps == 55 * 10**6 and back.flow_file == "other.txt"
    assert back.raw["RP_TIMER"] == "55"


def test_write_needs_file_names_for_an_engine_config(tmp_path):
    with pytest.raises(InputError, match="topology_file"):
        write_ns3_config(preset("dcqcn"), tmp_path / "config.txt")


def test_write_rejects_values_the_format_cannot_hold(tmp_path):
    with pytest.raises(InputError, match="buffer_bytes"):
        write_ns3_config(preset("dcqcn").with_(buffer_bytes=MB + 1), tmp_path / "c.txt", "t.txt", "f.txt")
    kmin = {100 * G: 400_500, 400 * G: 1_600_000}
    with pytest.raises(InputError, match="whole number of KB"):
        write_ns3_config(preset("dcqcn").with_(kmin_bytes=kmin), tmp_path / "c.txt", "t.txt", "f.txt")
    with pytest.raises(InputError, match="trace_file"):
        write_ns3_config(preset("dcqcn"), tmp_path / "c.txt", "t.txt", "f.txt", enable_trace=True)


# ---- bad input: each error names the file and line (or the missing key) -----------------------------------------

BAD_LINES = [
    # (key whose line is replaced, new line, text the message must contain)
    ("RP_TIMER", "RP_TIMR 300", "did you mean RP_TIMER"),
    ("RP_TIMER", "MON_START 300", "unknown key 'MON_START'"),
    ("CC_MODE", "CC_MODE 10", "CC_MODE 10 (HPCC-PINT) is not supported yet"),
    ("CC_MODE", "CC_MODE 5", "unknown CC_MODE 5"),
    ("CC_MODE", "CC_MODE dcqcn", "not a non-negative integer"),
    ("RP_TIMER", "RP_TIMER", "expected one value"),
    ("RP_TIMER", "RP_TIMER 300 us", "expected one value"),
    ("RP_TIMER", "RP_TIMER -5", "-5.0 us is negative"),
    ("RP_TIMER", "RP_TIMER 0", "RP_TIMER: must be positive"),
    ("EWMA_GAIN", "EWMA_GAIN 0", "EWMA_GAIN: must be in (0, 1]"),
    ("EWMA_GAIN", "EWMA_GAIN nan", "not a finite number"),
    ("RATE_AI", "RATE_AI 20", "cannot read rate"),
    ("MIN_RATE", "MIN_RATE 0Mb/s", "must be positive"),
    ("HAS_WIN", "HAS_WIN 2", "'2' is not 0 or 1"),
    ("PACKET_PAYLOAD_SIZE", "PACKET_PAYLOAD_SIZE 100000", "does not fit a packet"),
    ("SIMULATOR_STOP_TIME", "SIMULATOR_STOP_TIME -1", "-1.0 s is out of range"),
    ("BUFFER_SIZE", "BUFFER_SIZE 3.5", "not a positive whole number"),
    ("BUFFER_SIZE", "BUFFER_SIZE 0", "not a positive whole number"),
    ("KMAX_MAP", "KMAX_MAP 3 100000000000 1600 400000000000 6400", "declares 3 entries but gives 2"),
    ("KMAX_MAP", "KMAX_MAP 2 100000000000 1600 400000000000", "declares 2 entries but gives 1.5"),
    ("KMAX_MAP", "KMAX_MAP two", "entry count"),
    ("KMAX_MAP", "KMAX_MAP 2 100000000000 1600.5 400000000000 6400", "not a whole number of KB"),
    ("KMAX_MAP", "KMAX_MAP 2 100Gbps 1600 400000000000 6400", "not a positive integer"),
    ("KMAX_MAP", "KMAX_MAP 2 100000000000 1600 100000000000 6400", "appears twice"),
    ("KMIN_MAP", "KMIN_MAP 1 100000000000 400", "must name the same link speeds"),
    ("KMIN_MAP", "KMIN_MAP 2 100000000000 2000 400000000000 1600", "need 0 <= Kmin <= Kmax"),
    ("PMAX_MAP", "PMAX_MAP 2 100000000000 1.5 400000000000 0.2", "not a probability"),
    ("L2_BACK_TO_ZERO", "L2_BACK_TO_ZERO 1", "L2_BACK_TO_ZERO 1"),
    ("ERROR_RATE_PER_LINK", "ERROR_RATE_PER_LINK 0.001", "not supported yet"),
    ("LINK_DOWN", "LINK_DOWN 100 1 2", "link failures"),
    ("LINK_DOWN", "LINK_DOWN 0 0", "t_us nodeA nodeB"),
    ("L2_ACK_INTERVAL", "L2_ACK_INTERVAL 0", "L2_ACK_INTERVAL 0 is not supported"),
    ("L2_ACK_INTERVAL", "L2_ACK_INTERVAL 1001", "need 1..1000"),
    ("TOPOLOGY_FILE", "TOPOLOGY_FILE my topo.txt", "expected one value"),
    ("U_TARGET", "U_TARGET high", "not a finite number"),
]


@pytest.mark.parametrize(("key", "line", "message"), BAD_LINES)
def test_bad_line_names_file_and_line(tmp_path, base, key, line, message):
    path, lineno = _edit(tmp_path, base, key, line)
    with pytest.raises(InputError) as info:
        read_ns3_config(path)
    assert f"{path}:{lineno}" in str(info.value)
    assert message in str(info.value)


BAD_HPCC_LINES = [
    ("U_TARGET", "U_TARGET 0", "U_TARGET: must be in (0, 1]"),
    ("U_TARGET", "U_TARGET 1.5", "U_TARGET: must be in (0, 1]"),
    ("INT_MULTI", "INT_MULTI 0", "INT_MULTI: must be positive"),
    ("INT_MULTI", "INT_MULTI 2.5", "not a non-negative integer"),
    ("MI_THRESH", "MI_THRESH -1", "not a non-negative integer"),
    ("FAST_REACT", "FAST_REACT 2", "'2' is not 0 or 1"),
    ("MULTI_RATE", "MULTI_RATE yes", "'yes' is not 0 or 1"),
]


@pytest.mark.parametrize(("key", "line", "message"), BAD_HPCC_LINES)
def test_bad_hpcc_line_names_file_and_line(tmp_path, hp_base, key, line, message):
    path, lineno = _edit(tmp_path, hp_base, key, line)
    with pytest.raises(InputError) as info:
        read_ns3_config(path)
    assert f"{path}:{lineno}" in str(info.value)
    assert message in str(info.value)


def test_unsupported_cc_mode_lists_the_supported_ones(tmp_path, base):
    path, _ = _edit(tmp_path, base, "CC_MODE", "CC_MODE 10")
    with pytest.raises(InputError) as info:
        read_ns3_config(path)
    assert "use a supported CC_MODE: 1 (DCQCN), 3 (HPCC), 7 (TIMELY), 8 (DCTCP)" in str(info.value)


def test_duplicate_key(tmp_path, base):
    path, lineno = _append(tmp_path, base, "RP_TIMER 55")
    first = next(i for i, ln in enumerate(base.splitlines(), 1) if ln.startswith("RP_TIMER "))
    with pytest.raises(InputError, match=f"config.txt:{lineno}: RP_TIMER is given twice \\(also on line {first}\\)"):
        read_ns3_config(path)


@pytest.mark.parametrize(
    ("key", "run_py"),
    [
        ("RP_TIMER", "'RP_TIMER 300'"),
        ("EWMA_GAIN", "'EWMA_GAIN 0.00390625'"),
        ("RATE_AI", "'RATE_AI 20Mb/s'"),
        ("KMIN_MAP", "'KMIN_MAP 2 100000000000 400 400000000000 1600'"),
        ("BUFFER_SIZE", "'BUFFER_SIZE 32'"),
        ("L2_ACK_INTERVAL", "'L2_ACK_INTERVAL 1'"),
        ("ENABLE_TRACE", "'ENABLE_TRACE 1'"),
        ("FLOW_FILE", "'FLOW_FILE mix/<trace>.txt'"),
        ("CC_MODE", "'CC_MODE 1'"),
    ],
)
def test_missing_key_names_it_and_run_py_value(tmp_path, base, key, run_py):
    path, _ = _edit(tmp_path, base, key, None)
    with pytest.raises(InputError) as info:
        read_ns3_config(path)
    assert str(path) in str(info.value) and f"missing key {key}" in str(info.value) and run_py in str(info.value)


@pytest.mark.parametrize(
    ("key", "run_py"),
    [
        ("FAST_REACT", "'FAST_REACT 1'"),
        ("U_TARGET", "'U_TARGET 0.95'"),
        ("MI_THRESH", "'MI_THRESH 0'"),
        ("INT_MULTI", "'INT_MULTI 4'"),
        ("MULTI_RATE", "'MULTI_RATE 0'"),
        ("SAMPLE_FEEDBACK", "'SAMPLE_FEEDBACK 0'"),
        ("RATE_AI", "'RATE_AI 40Mb/s'"),
    ],
)
def test_hpcc_config_needs_the_hpcc_keys(tmp_path, hp_base, key, run_py):
    path, _ = _edit(tmp_path, hp_base, key, None)
    with pytest.raises(InputError) as info:
        read_ns3_config(path)
    message = str(info.value)
    assert f"missing key {key} " in message and "run.py --cc hp --bw 100" in message and run_py in message


def test_missing_keys_in_a_dctcp_config_suggest_dctcp_values(tmp_path):
    text = write_ns3_config(preset("dctcp"), tmp_path / "d.txt", "t.txt", "f.txt").read_text()
    path, _ = _edit(tmp_path, text, "EWMA_GAIN", None)
    with pytest.raises(InputError, match="'EWMA_GAIN 0.0625'"):
        read_ns3_config(path)


def test_several_missing_keys_are_all_named(tmp_path, base):
    text = "\n".join(ln for ln in base.splitlines() if not ln.startswith(("RATE_AI", "RATE_HAI")))
    path = tmp_path / "config.txt"
    path.write_text(text)
    with pytest.raises(InputError, match="missing keys RATE_AI, RATE_HAI"):
        read_ns3_config(path)


def test_trace_files_required_when_tracing(tmp_path, base):
    path, _ = _edit(tmp_path, base, "ENABLE_TRACE", "ENABLE_TRACE 1")
    with pytest.raises(InputError, match="missing keys TRACE_FILE, TRACE_OUTPUT_FILE"):
        read_ns3_config(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        read_ns3_config(tmp_path / "nope.txt")
