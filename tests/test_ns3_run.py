"""Agreement with the reference simulator on its own inputs, run the way its users run it."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from wormhole_lab.errors import InputError
from wormhole_lab.ns3_run import run_ns3_config


def load_fct(path):
    """{(sip, dip, sport, dport): fct_ns} from an fct.txt."""
    rows = {}
    for line in path.read_text().splitlines():
        f = line.split()
        rows[tuple(f[:4])] = int(f[6])
    return rows


@pytest.fixture
def case(tmp_path, data_dir, monkeypatch):
    """Copy a validation case and work inside it: the config's paths are relative to the working directory."""

    def make(name):
        work = tmp_path / name
        shutil.copytree(data_dir / "validation" / name, work)
        monkeypatch.chdir(work)
        return work

    return make


def test_s1_single_flow_dcqcn_matches_reference_within_0_1_percent(case):
    work = case("s1_single_flow")
    run_ns3_config("config_dcqcn.txt")
    ours, ref = load_fct(work / "fct.txt"), load_fct(work / "fct_dcqcn.txt")
    assert ours.keys() == ref.keys()
    for key, fct in ref.items():
        assert abs(ours[key] - fct) / fct < 0.001, (key, ours[key], fct)
    # the line is byte-compatible: same columns, hex IPs, same standalone value
    assert (work / "fct.txt").read_text().split()[:4] == (work / "fct_dcqcn.txt").read_text().split()[:4]
    assert (work / "fct.txt").read_text().split()[7] == "842560"
    assert (work / "pfc.txt").read_text() == ""


def test_s2_incast8_dcqcn_matches_reference_distribution(case):
    work = case("s2_incast8")
    ds, _ = run_ns3_config("config_dcqcn.txt")
    ours, ref = load_fct(work / "fct.txt"), load_fct(work / "fct_dcqcn.txt")
    assert ours.keys() == ref.keys()
    errors = np.array([abs(ours[k] - ref[k]) / ref[k] for k in ref])
    mean_err = abs(np.mean(list(ours.values())) - np.mean(list(ref.values()))) / np.mean(list(ref.values()))
    last_err = abs(max(ours.values()) - max(ref.values())) / max(ref.values())
    assert mean_err < 0.03
    assert last_err < 0.03
    assert errors.max() < 0.08
    assert ds.attrs["ecn_marks"] > 0 and ds["cnps"].sum() > 0


def test_s2_incast8_dcqcn_distribution_over_seeds(data_dir):
    """The reference's per-flow spread comes from its random ECN draws: across seeds our mean FCT averages
    within 2% of the reference's and every seed's last completion is within 3% (one seed may get a lucky
    flow that finishes early, as the reference's own generator could)."""
    from wormhole_lab.ns3_config import read_ns3_config
    from wormhole_lab.simulation import Scenario, Simulation
    from wormhole_lab.telemetry import Telemetry
    from wormhole_lab.topology.hpcc_format import read_topology
    from wormhole_lab.workload.hpcc_flow_format import read_flows

    folder = data_dir / "validation" / "s2_incast8"
    cfg = read_ns3_config(folder / "config_dcqcn.txt").engine
    topo, flows = read_topology(folder / "topology.txt"), read_flows(folder / "flow.txt")
    ref = np.array(list(load_fct(folder / "fct_dcqcn.txt").values()))
    mean_errors = []
    for seed in range(1, 7):
        ds = Simulation(Scenario(topo, flows, cfg.with_(seed=seed), telemetry=Telemetry.off())).run()
        fct_ns = ds["fct"].values / 1000
        mean_errors.append(fct_ns.mean() / ref.mean() - 1)
        assert abs(fct_ns.max() - ref.max()) / ref.max() < 0.03, seed
    assert abs(np.mean(mean_errors)) < 0.02


def test_unwritable_fct_output_is_reported_before_the_run(case):
    work = case("s1_single_flow")
    text = (
        (work / "config_dcqcn.txt").read_text().replace("FCT_OUTPUT_FILE fct.txt", "FCT_OUTPUT_FILE nosuchdir/fct.txt")
    )
    (work / "config_dcqcn.txt").write_text(text)
    with pytest.raises(InputError, match="FCT_OUTPUT_FILE.*nosuchdir"):
        run_ns3_config("config_dcqcn.txt")


def test_s2_incast8_hpcc_mean_and_last_completion_within_3_percent(case):
    """HPCC has no randomness; with the reference's frame sizes and clock every flow matches to the ns."""
    work = case("s2_incast8")
    run_ns3_config("config_hpcc.txt")
    ours, ref = load_fct(work / "fct.txt"), load_fct(work / "fct_hpcc.txt")
    assert ours.keys() == ref.keys()
    mean_ours, mean_ref = np.mean(list(ours.values())), np.mean(list(ref.values()))
    assert abs(mean_ours - mean_ref) / mean_ref < 0.03
    assert abs(max(ours.values()) - max(ref.values())) / max(ref.values()) < 0.03


def test_s1_single_flow_hpcc_close_to_reference(case):
    work = case("s1_single_flow")
    run_ns3_config("config_hpcc.txt")
    ours, ref = load_fct(work / "fct.txt"), load_fct(work / "fct_hpcc.txt")
    (key,) = ref
    assert abs(ours[key] - ref[key]) / ref[key] < 0.005


SHARED_MIX = Path(__file__).resolve().parents[2] / "shared" / "reference" / "validation" / "shipped_mix_example"
SHIPPED_PEAK_RSS_BOUND = 1 << 30  # the reference's own example took 10.2 GB when telemetry was always on


@pytest.mark.skipif(not (SHARED_MIX / "mix").is_dir(), reason="../shared/reference is not on this machine")
def test_the_reference_shipped_example_gives_its_outputs_byte_for_byte_within_a_memory_bound(tmp_path, data_dir):
    """simulation/mix/config.txt unchanged: fct.txt, pfc.txt and qlen.txt as the reference wrote them."""
    shutil.copytree(SHARED_MIX / "mix", tmp_path / "mix")
    run = subprocess.run(
        [sys.executable, "-c", PEAK_RSS_OF_NS3_RUN, "mix/config.txt"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    expected = data_dir / "validation" / "shipped_mix_example"
    for name in ("fct.txt", "pfc.txt", "qlen.txt"):
        assert (tmp_path / "mix" / name).read_bytes() == (expected / name).read_bytes(), name
    assert "the packet trace (mix/mix.tr) is not written" in run.stderr
    assert not (tmp_path / "mix" / "mix.tr").exists()
    assert int(run.stdout.split()[-1]) < SHIPPED_PEAK_RSS_BOUND


PEAK_RSS_OF_NS3_RUN = """
import resource, sys
from wormhole_lab.cli import main
code = main(["ns3", sys.argv[1]])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
sys.exit(code)
"""


def test_qlen_monitor_counts_every_100_ns_sample_of_its_window(case):
    """S2 incast with the monitor from 0 to 0.1 s: dumps at 0 and 0.1 s, every switch port with one count per
    sample so far, and the port into the receiver with its queue spread over many KB buckets."""
    work = case("s2_incast8")
    without_qlen_monitor(work / "config_hpcc.txt")
    with open(work / "config_hpcc.txt", "a") as config:
        config.write("QLEN_MON_FILE qlen.txt\nQLEN_MON_START 0\nQLEN_MON_END 100000000\n")
    run_ns3_config("config_hpcc.txt")
    lines = (work / "qlen.txt").read_text().splitlines()
    assert [lines[0], lines[10]] == ["time: 0", "time: 100000000"] and len(lines) == 20  # the switch's 9 ports
    assert lines[1:10] == [f"9 {port} 1" for port in range(1, 10)]  # the switch is node 9; at t = 0 all empty
    final = [[int(c) for c in line.split()[2:]] for line in lines[11:]]
    assert all(sum(counts) == 10**6 + 1 for counts in final)
    into_receiver = final[0]  # port 1 leads to host 0, the receiver
    assert len(into_receiver) > 20 and into_receiver[0] < 10**6
    assert all(len(counts) == 1 for counts in final[1:])  # ports into senders carry only ACKs, far below 1 KB


def without_qlen_monitor(config):
    config.write_text("".join(line for line in config.read_text().splitlines(True) if not line.startswith("QLEN_MON")))


def test_telemetry_is_opt_in_and_streamed_to_the_file_asked_for(case):
    """The validation configs, as run.py writes them, put the queue monitor at 9 s, after their stop time: the
    reference writes an empty file, and the telemetry sampler is free for --telemetry."""
    work = case("s1_single_flow")
    ds, written = run_ns3_config("config_hpcc.txt")
    assert "port_queue" not in ds and [p.name for p in written] == ["fct.txt", "pfc.txt", "qlen.txt"]
    assert (work / "qlen.txt").read_text() == ""
    ds, written = run_ns3_config("config_hpcc.txt", telemetry_out=work / "series.nc")
    assert written[-1] == work / "series.nc"
    series = xr.open_dataset(work / "series.nc", engine="h5netcdf")
    assert series.sizes["time"] > 100 and float(series["port_tx_rate"].max()) > 90e9


def test_telemetry_and_the_qlen_monitor_together_are_refused_before_the_run(case):
    work = case("s1_single_flow")
    config = work / "config_hpcc.txt"
    without_qlen_monitor(config)
    with open(config, "a") as text:  # a window the run reaches
        text.write("QLEN_MON_FILE qlen.txt\nQLEN_MON_START 0\nQLEN_MON_END 1000\n")
    with pytest.raises(InputError, match="QLEN_MON_FILE"):
        run_ns3_config("config_hpcc.txt", telemetry_out=work / "series.nc")
    assert not (work / "fct.txt").exists() or (work / "fct.txt").stat().st_size == 0
