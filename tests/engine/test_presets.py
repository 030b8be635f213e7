"""Presets mirror run.py of the reference at every bandwidth."""

from pathlib import Path

import pytest

from wormhole_lab.engine.config import EngineConfig
from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REFERENCE = SHARED / "reference"
MB, G, M, US = 1024 * 1024, 10**9, 10**6, 10**6


def read_preset(*args, **kwargs):
    """A preset as read from a config.txt: with the reference's own random draws (rng "ns3")."""
    return preset(*args, **kwargs).with_(rng="ns3")


ALL_NAMES = ("dcqcn", "dcqcn_paper", "dcqcn_vwin", "dcqcn_paper_vwin", "hp", "timely", "timely_vwin", "dctcp")


def test_names():
    assert PRESETS == ALL_NAMES


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("bw", [25, 50, 100, 400])
def test_every_preset_builds(name, bw):
    cfg = preset(name, bw)
    assert isinstance(cfg, EngineConfig)
    assert set(cfg.kmin_bytes) == {bw * G, 4 * bw * G}
    assert cfg.buffer_bytes == 16 * bw // 50 * MB
    assert cfg.min_rate_bps == 1000 * M and cfg.fast_recovery_times == 1 and not cfg.clamp_target_rate
    assert cfg.stop_time_ps is None and cfg.payload_bytes == 1000  # runs until every flow completes
    assert cfg.global_t and cfg.rate_bound and cfg.enable_ecn and cfg.pfc_dynamic_threshold
    # written by run.py for every --cc
    assert (cfg.u_target, cfg.mi_thresh, cfg.multi_rate, cfg.sample_feedback) == (0.95, 0, False, False)
    # rdma-hw.cc attribute defaults, never set by third.cc
    assert (cfg.timely_alpha, cfg.timely_beta) == (0.875, 0.8)
    assert (cfg.timely_t_low_ps, cfg.timely_t_high_ps, cfg.timely_min_rtt_ps) == (50 * US, 500 * US, 20 * US)


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "hp"])
def test_hpcc_knobs_of_other_presets_are_run_pys(name):
    cfg = preset(name, 400)
    assert (cfg.fast_react, cfg.int_multi) == (False, 1)  # run.py: us=0, int_multi=1 for every --cc but hp


def test_dcqcn_at_100g():
    cfg = preset("dcqcn")  # the paper's 100 Gb/s is the default
    assert cfg.cca == "dcqcn" and cfg.cc_mode == 1
    assert cfg.buffer_bytes == 32 * MB
    assert cfg.kmin_bytes == {100 * G: 400_000, 400 * G: 1_600_000}
    assert cfg.kmax_bytes == {100 * G: 1_600_000, 400 * G: 6_400_000}
    assert cfg.pmax == {100 * G: 0.2, 400 * G: 0.2}
    assert (cfg.alpha_resume_interval_ps, cfg.rate_decrease_interval_ps, cfg.rp_timer_ps) == (1 * US, 4 * US, 300 * US)
    assert cfg.ewma_gain == 1 / 256
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (20 * M, 200 * M)
    assert cfg.dctcp_rate_ai_bps == 1000 * M  # run.py writes 1000Mb/s for every non-DCTCP preset
    assert (cfg.has_win, cfg.var_win, cfg.ack_high_prio) == (False, False, True)
    assert cfg.rate_on_first_cnp == 1.0 and cfg.nack_interval_ps == 500 * US


def test_dcqcn_scales_with_bandwidth():
    cfg = preset("dcqcn", 50)  # run.py's default --bw
    assert cfg.buffer_bytes == 16 * MB
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (10 * M, 100 * M)
    assert cfg.kmin_bytes == {50 * G: 200_000, 200 * G: 800_000}


def test_python2_integer_division_is_mirrored():
    # run.py is Python 2: 16*10/50 == 3, 5*10/25 == 2, 100*10/25 == 40.
    cfg = preset("dcqcn", 10)
    assert cfg.buffer_bytes == 3 * MB
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (2 * M, 20 * M)
    assert cfg.kmin_bytes == {10 * G: 40_000, 40 * G: 160_000}
    assert cfg.kmax_bytes == {10 * G: 160_000, 40 * G: 640_000}


@pytest.mark.parametrize(
    ("name", "timers", "win"),
    [
        ("dcqcn_paper", (50, 50, 55), (False, False, True)),
        ("dcqcn_vwin", (1, 4, 300), (True, True, False)),
        ("dcqcn_paper_vwin", (50, 50, 55), (True, True, False)),
    ],
)
def test_dcqcn_variants(name, timers, win):
    cfg = preset(name)
    got = (cfg.alpha_resume_interval_ps, cfg.rate_decrease_interval_ps, cfg.rp_timer_ps)
    assert got == tuple(t * US for t in timers)
    assert (cfg.has_win, cfg.var_win, cfg.ack_high_prio) == win
    base = preset("dcqcn")
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps, cfg.kmin_bytes, cfg.ewma_gain) == (
        base.rate_ai_bps,
        base.rate_hai_bps,
        base.kmin_bytes,
        base.ewma_gain,
    )


def test_dctcp():
    cfg = preset("dctcp")
    assert cfg.cca == "dctcp" and cfg.cc_mode == 8
    assert cfg.kmin_bytes == cfg.kmax_bytes == {100 * G: 300_000, 400 * G: 1_200_000}
    assert cfg.pmax == {100 * G: 1.0, 400 * G: 1.0}
    assert cfg.ewma_gain == 1 / 16
    assert cfg.dctcp_rate_ai_bps == 615 * M
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (10 * M, 10 * M)  # unused, not scaled, as run.py writes
    assert (cfg.has_win, cfg.var_win, cfg.ack_high_prio) == (True, True, False)
    assert preset("dctcp", 50).kmin_bytes == {50 * G: 150_000, 200 * G: 600_000}


def test_hp_at_100g():
    cfg = preset("hp")
    assert cfg.cca == "hpcc" and cfg.cc_mode == 3
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (40 * M, 40 * M)  # 10*bw/25; HAI = AI
    assert (cfg.u_target, cfg.mi_thresh, cfg.int_multi) == (0.95, 0, 4)
    assert (cfg.fast_react, cfg.multi_rate, cfg.sample_feedback) == (True, False, False)
    assert (cfg.has_win, cfg.var_win, cfg.ack_high_prio) == (True, True, False)
    # the template's ECN maps, and the DCQCN knobs run.py writes although HPCC ignores them
    assert (cfg.kmin_bytes, cfg.kmax_bytes, cfg.pmax) == (
        preset("dcqcn").kmin_bytes,
        preset("dcqcn").kmax_bytes,
        preset("dcqcn").pmax,
    )
    assert (cfg.alpha_resume_interval_ps, cfg.rate_decrease_interval_ps, cfg.rp_timer_ps) == (1 * US, 4 * US, 300 * US)
    assert cfg.ewma_gain == 1 / 256 and cfg.dctcp_rate_ai_bps == 1000 * M
    assert cfg.buffer_bytes == 32 * MB and cfg.min_rate_bps == 1000 * M


def test_hp_with_hpai():
    cfg = preset("hp", 100, hpai_mbps=50)  # run.py --cc hp --hpai 50: the paper's and the validation configs'
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (50 * M, 50 * M)
    assert cfg == preset("hp").with_(rate_ai_bps=50 * M, rate_hai_bps=50 * M)
    assert preset("hp", 400, hpai_mbps=7).rate_ai_bps == 7 * M  # --hpai is not scaled by bw


@pytest.mark.parametrize(("bw", "ai", "multi"), [(25, 10, 1), (50, 20, 2), (200, 80, 8), (400, 160, 16)])
def test_hp_scales_with_bandwidth(bw, ai, multi):
    cfg = preset("hp", bw)
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps, cfg.int_multi) == (ai * M, ai * M, multi)


@pytest.mark.parametrize("bw", [4, 10, 24, 30, 75, 800])
def test_hp_needs_a_bandwidth_int_can_encode(bw):
    with pytest.raises(InputError, match=r"preset\(host_bw_gbps\).*INT cannot encode.*25, 50, 100, 200, 400"):
        preset("hp", bw)


@pytest.mark.parametrize("name", ["timely", "timely_vwin"])
def test_timely(name):
    cfg = preset(name)
    assert cfg.cca == "timely" and cfg.cc_mode == 7
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (100 * M, 500 * M)  # 10*bw/10 and 50*bw/10
    win = (name == "timely_vwin",) * 2
    assert (cfg.has_win, cfg.var_win) == win
    assert cfg.ack_high_prio  # run.py: ack_prio=1 for timely_vwin too
    assert not cfg.fast_react and cfg.int_multi == 1
    assert cfg.kmin_bytes == preset("dcqcn").kmin_bytes and cfg.ewma_gain == 1 / 256
    assert preset(name).with_(has_win=False, var_win=False) == preset("timely")


def test_timely_scales_with_bandwidth():
    cfg = preset("timely", 25)
    assert (cfg.rate_ai_bps, cfg.rate_hai_bps) == (25 * M, 125 * M)
    assert preset("timely", 4).rate_hai_bps == 20 * M  # timely works at any bandwidth, unlike hp


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "hp"])
def test_hpai_is_for_hp_only(name):
    with pytest.raises(InputError, match=r"preset\(hpai_mbps\).*hp preset only"):
        preset(name, hpai_mbps=50)


@pytest.mark.parametrize("hpai", [0, -5, 2.5, True, "50"])
def test_bad_hpai(hpai):
    with pytest.raises(InputError, match=r"preset\(hpai_mbps\).*positive integer"):
        preset("hp", hpai_mbps=hpai)


def test_unknown_name_lists_valid_ones():
    with pytest.raises(InputError) as info:
        preset("cubic")
    assert "choose one of " + ", ".join(ALL_NAMES) in str(info.value)


def test_hpcc_pint_not_yet_supported():
    with pytest.raises(InputError, match="HPCC-PINT .*not supported yet.*dcqcn, dcqcn_paper") as info:
        preset("hpccPint")
    assert ", ".join(ALL_NAMES) in str(info.value)


@pytest.mark.parametrize("bw", [0, 3, -100, 2.5, True, "100", None])
def test_bad_bandwidth(bw):
    with pytest.raises(InputError, match=r"preset\(host_bw_gbps\)"):
        preset("dcqcn", bw)


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference files not found at {SHARED}")
def test_matches_shipped_dcqcn_configs():
    from wormhole_lab.ns3_config import read_ns3_config

    paths = sorted(REFERENCE.glob("validation/*/config_dcqcn.txt"))
    paths.append(REFERENCE / "bench" / "fat_perm64" / "config.txt")
    assert len(paths) >= 3
    for path in paths:
        assert read_ns3_config(path).engine == read_preset("dcqcn", 100).with_(stop_time_ps=4 * 10**12), path


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference files not found at {SHARED}")
def test_matches_shipped_hpcc_configs():
    from wormhole_lab.ns3_config import read_ns3_config

    paths = sorted(REFERENCE.glob("validation/*/config_hpcc.txt"))  # run.py --cc hp --hpai 50 --bw 100
    assert len(paths) >= 2
    for path in paths:
        assert read_ns3_config(path).engine == read_preset("hp", 100, hpai_mbps=50).with_(stop_time_ps=4 * 10**12), path
