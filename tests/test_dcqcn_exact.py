"""DCQCN byte-identical to the reference: its random ECN marks and PFC ids are replayed (EngineConfig.rng "ns3").

(And HPCC, TIMELY, DCTCP on a fat-tree incast whose pauses spread, data/validation_pfc/; and HPCC cases that
once diverged, data/validation_hpcc_*/.)

Cases in data/validation_dcqcn/ were built with make_cases.py there and run through the built reference,
whose fct.txt and pfc.txt are kept as fct_reference.txt and pfc_reference.txt. Every case puts queues in the
random band between Kmin and Kmax (hundreds of draws decide marks), and all but one make PFC fire.
"""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from wormhole_lab.ns3_run import ns3_scenario, run_ns3_config
from wormhole_lab.simulation import Simulation

DATA = Path(__file__).resolve().parent / "data"
CASES = sorted(p.name for p in (DATA / "validation_dcqcn").iterdir() if (p / "config.txt").exists())
OTHER_CCA_CASES = sorted(p.name for p in (DATA / "validation_pfc").iterdir() if (p / "config.txt").exists())
HPCC_CASES = sorted(p.name for p in DATA.glob("validation_hpcc_*") if (p / "config.txt").exists())
SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "reference" / "bench" / "fat_perm64"


def _inputs(src: Path, work: Path, config: str) -> Path:
    work.mkdir()
    for f in ("topology.txt", "flow.txt", "trace.txt", config):
        shutil.copy(src / f, work / f)
    return work


def _flows_by_key(lines):
    return {tuple(line.split()[:4]): line for line in lines}


def _assert_same(ours_fct: Path, ref_fct: Path, ours_pfc: Path, ref_pfc: Path):
    ours, ref = ours_fct.read_text().splitlines(), ref_fct.read_text().splitlines()
    by_key = _flows_by_key(ours)
    wrong = [line for line in ref if by_key.get(tuple(line.split()[:4])) != line]
    assert not wrong, f"{len(wrong)}/{len(ref)} flows differ, first: ref {wrong[0]!r}"
    assert ours == ref  # and in the same completion order
    ours_p, ref_p = ours_pfc.read_text().splitlines(), ref_pfc.read_text().splitlines()
    for i, (a, b) in enumerate(zip(ours_p, ref_p, strict=False)):
        assert a == b, f"pfc line {i + 1}: ours {a!r}, reference {b!r}"
    assert len(ours_p) == len(ref_p)


def _run_and_compare(inputs: Path, work: Path, config: str, fct: Path, pfc: Path, monkeypatch, mode="packet"):
    """Run ``config`` from a copy of ``inputs`` as the reference is run, and compare with its recorded outputs."""
    monkeypatch.chdir(_inputs(inputs, work, config))
    ds, _ = run_ns3_config(config, mode=mode)
    _assert_same(work / "fct.txt", fct, work / "pfc.txt", pfc)
    return ds


def _recorded(src: Path, monkeypatch, tmp_path, inputs: Path | None = None, mode="packet"):
    """A case of data/: its inputs (or ``inputs``) against its fct_reference.txt and pfc_reference.txt."""
    fct, pfc = src / "fct_reference.txt", src / "pfc_reference.txt"
    return _run_and_compare(inputs or src, tmp_path / src.name, "config.txt", fct, pfc, monkeypatch, mode)


@pytest.mark.parametrize("name", CASES)
def test_dcqcn_case_is_byte_identical_to_the_reference(name, tmp_path, monkeypatch):
    _recorded(DATA / "validation_dcqcn" / name, monkeypatch, tmp_path)


@pytest.mark.parametrize("name", OTHER_CCA_CASES)
def test_hpcc_timely_dctcp_with_pfc_are_byte_identical(name, tmp_path, monkeypatch):
    _recorded(DATA / "validation_pfc" / name, monkeypatch, tmp_path)


@pytest.mark.parametrize("name", HPCC_CASES)
def test_hpcc_regression_cases_are_byte_identical(name, tmp_path, monkeypatch):
    """See each folder's README.md for what the case once got wrong."""
    _recorded(DATA / name, monkeypatch, tmp_path)


@pytest.mark.parametrize("name", ["s1_single_flow", "s2_incast8"])
def test_validation_dcqcn_is_byte_identical(name, tmp_path, monkeypatch):
    src = DATA / "validation" / name
    fct, pfc = src / "fct_dcqcn.txt", src / "pfc_dcqcn.txt"
    _run_and_compare(src, tmp_path / name, "config_dcqcn.txt", fct, pfc, monkeypatch)


def test_the_cases_depend_on_the_draws(tmp_path, monkeypatch):
    """With the engine's own generator the same case is off the reference: the test above can fail."""
    src = DATA / "validation_dcqcn" / "incast8_staggered_buf1"
    monkeypatch.chdir(_inputs(src, tmp_path / "x", "config.txt"))
    scenario, _ = ns3_scenario("config.txt")
    assert scenario.config.rng == "ns3"
    ds = Simulation(replace(scenario, config=scenario.config.with_(rng="xorshift"))).run()
    ours = sorted((ds["fct"].values // 1000).tolist())
    ref = sorted(int(line.split()[6]) for line in (src / "fct_reference.txt").read_text().splitlines())
    assert ours != ref


def test_wormhole_mode_without_a_skip_is_byte_identical_too(tmp_path, monkeypatch):
    """Wormhole mode draws what packet mode draws until a skip (a skipped window draws nothing, see
    docs/wormhole-design.md); a DCQCN run this short never skips, so it is still the reference's."""
    ds = _recorded(DATA / "validation_dcqcn" / "leafspine_staggered", monkeypatch, tmp_path, mode="wormhole")
    assert ds.attrs["skips"] == 0


@pytest.mark.skipif(
    not SHARED_BENCH.exists() or not os.environ.get("WORMHOLE_LAB_BIG_CASES"),
    reason="about a minute of simulation: set WORMHOLE_LAB_BIG_CASES=1 (inputs from ../shared/reference/bench)",
)
def test_fat_perm64_dcqcn_is_byte_identical(tmp_path, monkeypatch):
    """The reference's fat_perm64 (320-host fat tree, 64 x 10 MB): its outputs are in data/, inputs in ../shared."""
    _recorded(DATA / "validation_dcqcn" / "fat_perm64", monkeypatch, tmp_path, inputs=SHARED_BENCH)


def test_seed_is_the_reference_rngseed(tmp_path, monkeypatch):
    """fct_reference_rngseed2.txt: the reference run with NS_GLOBAL_VALUE=RngSeed=2; ours with seed=2."""
    src = DATA / "validation_dcqcn" / "incast8_staggered_buf1"
    monkeypatch.chdir(_inputs(src, tmp_path / "s2", "config.txt"))
    scenario, _ = ns3_scenario("config.txt")
    ds = Simulation(replace(scenario, config=scenario.config.with_(seed=2))).run()
    ours = sorted((ds["fct"].values // 1000).tolist())
    ref = sorted(int(line.split()[6]) for line in (src / "fct_reference_rngseed2.txt").read_text().splitlines())
    seed1 = sorted(int(line.split()[6]) for line in (src / "fct_reference.txt").read_text().splitlines())
    assert ref != seed1 and ours == ref
