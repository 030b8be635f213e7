"""Presets mirror run.py of the reference at every bandwidth."""

from pathlib import Path

import pytest

from wormhole_lab.engine.config import EngineConfig
from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.errors import InputError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REFERENCE = SHARED / "reference"
MB, G, M, US = 1024 * 1024, 10**9, 10**6, 10**6


def test_names():
    assert PRESETS == ("dcqcn", "dcqcn_paper", "dcqcn_vwin", "dcqcn_paper_vwin", "dctcp")


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("bw", [25, 50, 100, 400])
def test_every_preset_builds(name, bw):
    cfg = preset(name, bw)
    assert isinstance(cfg, EngineConfig)
    assert set(cfg.kmin_bytes) == {bw * G, 4 * bw * G}
    assert cfg.buffer_bytes == 16 * bw // 50 * MB
    assert cfg.min_rate_bps == 1000 * M and cfg.fast_recovery_times == 1 and not cfg.clamp_target_rate
    assert cfg.stop_time_ps == 4 * 10**12 and cfg.payload_bytes == 1000
    assert cfg.global_t and cfg.rate_bound and cfg.enable_ecn and cfg.pfc_dynamic_threshold


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


def test_unknown_name_lists_valid_ones():
    with pytest.raises(InputError) as info:
        preset("cubic")
    assert all(name in str(info.value) for name in PRESETS)


@pytest.mark.parametrize(("name", "cc"), [("hp", "HPCC"), ("timely", "TIMELY"), ("hpccPint", "HPCC-PINT")])
def test_reference_presets_not_yet_supported(name, cc):
    with pytest.raises(InputError, match=f"{cc} .*not supported yet.*dcqcn, dcqcn_paper"):
        preset(name)


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
        assert read_ns3_config(path).engine == preset("dcqcn", 100), path
