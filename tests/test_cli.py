"""The wormhole-lab command as a user types it."""

import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import tqdm
import xarray as xr

from wormhole_lab.cli import main
from wormhole_lab.errors import InputError


def test_run_prints_a_summary_and_writes_the_fct_table(tmp_path, capsys):
    assert main(["run", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for field in (
        "flows           128 completed of 128",
        "FCT             mean",
        "p99",
        "slowdown",
        "events",
        "wall time",
        "B per flow",
    ):
        assert field in out
    lines = (tmp_path / "fct.txt").read_text().splitlines()
    assert len(lines) == 128 and len(lines[0].split()) == 8
    ds = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert int(ds["completed"].sum()) == 128


def test_ns3_subcommand_runs_a_reference_config_unchanged(tmp_path, data_dir, monkeypatch, capsys):
    work = tmp_path / "s1"
    shutil.copytree(data_dir / "validation" / "s1_single_flow", work)
    monkeypatch.chdir(work)
    assert main(["ns3", "config_dcqcn.txt", "--mode", "packet"]) == 0
    assert (work / "fct.txt").read_text().split()[6] == "834091"
    assert (work / "pfc.txt").exists()


def test_errors_are_one_clear_line_and_a_nonzero_exit(tmp_path, capsys):
    assert main(["ns3", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wormhole-lab: error:") and "missing.txt" in err and "Traceback" not in err
    assert main(["run", "--out", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_console_script_help_lists_examples():
    exe = shutil.which("wormhole-lab")
    cmd = [exe] if exe else [sys.executable, "-m", "wormhole_lab.cli"]
    out = subprocess.run([*cmd, "ns3", "--help"], capture_output=True, text=True, check=True).stdout
    assert "examples:" in out and "config.txt" in out


def test_ns3_subcommand_in_wormhole_mode_writes_the_same_files_and_statistics(tmp_path, data_dir, monkeypatch, capsys):
    work = tmp_path / "s1"
    shutil.copytree(data_dir / "validation" / "s1_single_flow", work)
    monkeypatch.chdir(work)
    assert main(["ns3", "config_hpcc.txt", "--mode", "wormhole", "--audit", "1"]) == 0
    captured = capsys.readouterr()
    assert "events executed" in captured.err and "skipped" in captured.err
    assert "audit:    1 fast-forwards and 0 memo hits re-simulated" in captured.err
    fct = int((work / "fct.txt").read_text().split()[6])
    assert abs(fct - 921013) / 921013 < 0.01


SCENARIOS = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "scenarios"


def console(*args, cwd=None):
    exe = shutil.which("wormhole-lab")
    cmd = [exe] if exe else [sys.executable, "-m", "wormhole_lab.cli"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd)


def test_run_a_scenario_file_to_a_netcdf_store(tmp_path):
    done = console("run", str(SCENARIOS / "incast_dctcp.yaml"), "--mode", "wormhole", "--out", str(tmp_path / "r.nc"))
    assert done.returncode == 0, done.stderr
    assert "flows           8 completed of 8" in done.stdout and "events executed" in done.stderr
    ds = xr.open_dataset(tmp_path / "r.nc", engine="h5netcdf")
    assert ds.attrs["complete"] == 1
    assert len((tmp_path / "r.fct.txt").read_text().splitlines()) == 8


def test_compare_prints_speedup_and_errors():
    done = console("compare", str(SCENARIOS / "incast_hpcc.yaml"))
    assert done.returncode == 0, done.stderr
    for field in ("speedup", "fewer events", "FCT error       mean", "iteration time"):
        assert field in done.stdout


def test_memo_info_merge_and_clear(tmp_path):
    from dataclasses import replace

    from wormhole_lab.engine.presets import preset
    from wormhole_lab.simulation import Scenario, Simulation
    from wormhole_lab.topology.builders import star
    from wormhole_lab.workload.flows import make_flows
    from wormhole_lab.wormhole.settings import WormholeConfig

    deps = [(), (), (0, 1), (0, 1)]
    flows = make_flows([1, 2, 1, 2], [0, 0, 0, 0], [4_000_000] * 4, 0, deps=deps)
    scenario = Scenario(star(3), flows, preset("dctcp"))
    for name in ("a", "b"):
        Simulation(
            replace(scenario, wormhole=WormholeConfig(memo=str(tmp_path / f"{name}.sqlite"))), mode="wormhole"
        ).run()
    info = console("memo", "info", str(tmp_path / "a.sqlite"))
    assert info.returncode == 0 and "entries" in info.stdout and "intact" in info.stdout
    merged = console(
        "memo", "merge", str(tmp_path / "all.sqlite"), str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")
    )
    assert merged.returncode == 0 and "added 1" in merged.stdout and "duplicates 1" in merged.stdout
    cleared = console("memo", "clear", str(tmp_path / "all.sqlite"))
    assert cleared.returncode == 0 and "removed 1 entries" in cleared.stdout


def test_bad_scenario_files_give_one_error_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "topology: {builder: star, n_hosts: 3}\nflows: {incast: {senders: [1, 2], receiver: 0, size: 10}}\n"
        "cca: hp\nconfgi: {}\n"
    )
    done = console("run", str(bad))
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("wormhole-lab:")]
    assert len(lines) == 1 and "confgi" in lines[0] and "config" in lines[0] and "Traceback" not in done.stderr
    assert console("run", str(tmp_path / "missing.yaml")).returncode == 2
    assert console("memo", "info", str(tmp_path / "missing.sqlite")).returncode == 2


def test_sweep_command_runs_a_sweep_file_on_a_local_dask_cluster(tmp_path):
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text((SCENARIOS.parent / "sweeps" / "incast_hpcc.yaml").read_text() + "results: done\n")
    first = console("sweep", str(sweep_file))
    assert first.returncode == 0, first.stderr
    assert "cases 6, failed 0" in first.stdout and "rate_ai_bps" in first.stdout
    assert len(list((tmp_path / "done").glob("*.json"))) == 6
    bad = tmp_path / "bad.yaml"
    bad.write_text("topology: {builder: star, n_hosts: 3}\ncca: hp\n")
    done = console("sweep", str(bad))
    assert done.returncode == 2 and "axes" in done.stderr


def test_a_run_that_stops_early_says_so_on_stderr_once(tmp_path, capsys):
    scenario = tmp_path / "chain.yaml"
    scenario.write_text(
        "topology: {builder: star, n_hosts: 3}\nflows: {file: flows.txt}\ncca: hp\nconfig: {stop_time_ps: 20us}\n"
    )
    (tmp_path / "flows.txt").write_text("2\n0 1 3 100 1000000 0.0\n1 2 3 100 1000000 0.0\n")
    assert main(["run", str(scenario), "--out", str(tmp_path), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "flows           0 completed of 2" in captured.out
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "2 of 2 flows did not finish by the stop time" in warning[0]
    assert "it/s" not in captured.err and "flow/s" not in captured.err  # --quiet: no progress bar


def test_the_progress_bar_redraws_by_wall_time_not_by_simulated_time(monkeypatch):
    """A callback every 100 us of simulated time must not redraw more than about 10 times a second."""
    from wormhole_lab import cli
    from wormhole_lab.scenarios import default_scenario
    from wormhole_lab.simulation import Simulation

    calls = []
    original = Simulation.__init__

    def record(self, scenario, mode="packet", progress=None, progress_step_ps=10**8):
        def counting(p):
            calls.append(p)
            progress(p)

        original(self, scenario, mode, counting if progress else None, progress_step_ps=10**6)

    redraws = []
    monkeypatch.setattr(Simulation, "__init__", record)
    monkeypatch.setattr(tqdm.tqdm, "set_postfix_str", lambda self, text, **_: redraws.append(text))
    t0 = time.monotonic()
    cli._simulate(default_scenario(), "packet")
    wall = time.monotonic() - t0
    assert len(calls) > 50  # the engine reported every simulated microsecond ...
    assert len(redraws) <= wall / cli.PROGRESS_REDRAW_S + 2  # ... and the bar redrew at most 10 times a second


def test_traffic_writes_a_flow_file_the_ns3_drop_in_reads(tmp_path, data_dir, capsys):
    from wormhole_lab.workload.hpcc_flow_format import read_flows

    out = tmp_path / "flow.txt"
    cdf = data_dir / "cdf" / "ten_point.txt"
    args = ["traffic", "--cdf", str(cdf), "--load", "0.3", "--hosts", "16", "--bw", "100G", "--time", "0.001"]
    assert main([*args, "--seed", "7", "-o", str(out)]) == 0
    flows = read_flows(out)
    assert f"{len(flows):,} flows" in capsys.readouterr().out and len(flows) > 50
    assert flows.start_ps.min() >= 2 * 10**12 and np.all(flows.src != flows.dst) and flows.src.max() < 16
    again = tmp_path / "again.txt"
    assert main([*args, "--seed", "7", "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    assert main([*args[:-2], "--time", "-1", "-o", str(out)]) == 2
    assert "duration" in capsys.readouterr().err


ROUNDS_YAML = """
topology: {builder: star, n_hosts: 3}
flows: {file: rounds.txt}
cca: dctcp
telemetry: off
"""


def rounds_files(folder):
    """Six rounds of a 2-to-1 incast, 4 MB each, started 1 ms apart: a pattern that repeats."""
    lines = [f"{k} 0 3 100 4000000 {r / 1000:.3f}" for r in range(6) for k in (1, 2)]
    (folder / "rounds.txt").write_text(f"{len(lines)}\n" + "\n".join(lines) + "\n")
    (folder / "s.yaml").write_text(ROUNDS_YAML)
    return folder / "s.yaml"


def test_wormhole_mode_memoizes_within_the_run_by_default_and_leaves_no_file(tmp_path, capsys, monkeypatch):
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where the run's own memo DB goes, then is removed
    scenario = rounds_files(tmp_path)
    base = ["run", str(scenario), "--mode", "wormhole", "--quiet", "--out", str(tmp_path)]
    assert main(base) == 0
    ds = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert ds.attrs["memo"] == "run" and ds.attrs["memo_hits"] > 0 and ds.attrs["memo_inserts"] >= 1
    assert "within this run only" in capsys.readouterr().err
    assert list((tmp_path / "tmp").iterdir()) == []
    assert main([*base, "--no-memo"]) == 0
    off = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert off.attrs["memo"] == "off" and "memo_lookups" not in off.attrs
    assert "memo:     off" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: not both
        main([*base, "--memo", "m.sqlite", "--no-memo"])
    assert main(["run", str(scenario), "--no-memo", "--out", str(tmp_path)]) == 2  # packet mode
    assert "Wormhole mode only" in capsys.readouterr().err


def test_memo_flag_keeps_the_memo_in_a_file_and_a_second_run_hits(tmp_path, capsys):
    scenario = rounds_files(tmp_path)
    memo = tmp_path / "memo.sqlite"
    base = ["run", str(scenario), "--mode", "wormhole", "--quiet", "--out", str(tmp_path)]
    assert main([*base, "--memo", str(memo)]) == 0
    first = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert main([*base, "--memo", str(memo)]) == 0
    second = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert memo.is_file() and first.attrs["memo_inserts"] >= 1 and first.attrs["memo"] == str(memo)
    assert second.attrs["memo_hits"] > first.attrs["memo_hits"] and second.attrs["memo_inserts"] == 0
    assert f"kept in {memo}" in capsys.readouterr().err
    assert main(["run", str(scenario), "--memo", str(memo), "--out", str(tmp_path)]) == 2  # packet mode
    assert "Wormhole mode only" in capsys.readouterr().err


def test_the_scenario_file_sets_the_memo_and_the_steady_test(tmp_path):
    from wormhole_lab.scenario_io import load_scenario

    scenario = rounds_files(tmp_path)
    scenario.write_text(ROUNDS_YAML + "wormhole: {memo: memo.sqlite, theta: 0.1, window: 20}\n")
    loaded = load_scenario(scenario)
    assert loaded.wormhole.memo == str(tmp_path / "memo.sqlite")
    assert (loaded.wormhole.steady.theta, loaded.wormhole.steady.window) == (0.1, 20)
    assert main(["run", str(scenario), "--mode", "wormhole", "--quiet", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "memo.sqlite").is_file()
    scenario.write_text(ROUNDS_YAML + "wormhole: {memo: false}\n")
    assert load_scenario(scenario).wormhole.memo_kind == "off"
    scenario.write_text(ROUNDS_YAML + "wormhole: {audit: 0}\n")
    assert load_scenario(scenario).wormhole.memo_kind == "run"
    scenario.write_text(ROUNDS_YAML + "wormhole: {memo: null}\n")
    with pytest.raises(InputError, match=r"s\.yaml:6: wormhole\.memo: has no value.*write false"):
        load_scenario(scenario)
    scenario.write_text(ROUNDS_YAML + "wormhole: {theta: 2}\n")
    with pytest.raises(InputError, match=r"s\.yaml:6: wormhole\.theta: must be in \(0, 1\)"):
        load_scenario(scenario)


def test_the_scenario_file_sets_the_dcqcn_steady_tests(tmp_path):
    from wormhole_lab.scenario_io import load_scenario
    from wormhole_lab.scenario_save import save_scenario

    scenario = rounds_files(tmp_path)
    scenario.write_text(ROUNDS_YAML + "wormhole: {line_window: 0, cycles: 2}\n")
    steady = load_scenario(scenario).wormhole.steady
    assert (steady.line_window, steady.cycles) == (0, 2)
    back = load_scenario(save_scenario(load_scenario(scenario), tmp_path / "back.yaml")).wormhole.steady
    assert (back.line_window, back.cycles) == (0, 2)
    scenario.write_text(ROUNDS_YAML + "wormhole: {cycles: 9}\n")
    with pytest.raises(InputError, match=r"s\.yaml:6: wormhole\.cycles: must be 0 \(off\) to 3"):
        load_scenario(scenario)


def test_audit_flag_prints_the_error_estimate_and_keeps_the_audited_windows(tmp_path, capsys):
    scenario = rounds_files(tmp_path)
    base = ["run", str(scenario), "--mode", "wormhole", "--quiet", "--out", str(tmp_path)]
    assert main([*base, "--audit", "2"]) == 0
    err = capsys.readouterr().err
    assert "audit:" in err and "estimated FCT error mean" in err
    ds = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    assert ds.attrs["audit_k"] == 2 and 1 <= ds.sizes["audit"] <= 4
    assert set(ds["audit_kind"].values) <= {"fastforward", "memo"} and "fct_error_estimate" in ds
    assert main(["run", str(scenario), "--audit", "2", "--out", str(tmp_path)]) == 2  # packet mode
    assert "--audit is for Wormhole mode only" in capsys.readouterr().err
    assert main([*base, "--audit", "-1"]) == 2
    assert "--audit: must be 0 or more" in capsys.readouterr().err


def test_the_scenario_file_sets_the_audit(tmp_path):
    from wormhole_lab.scenario_io import load_scenario

    scenario = rounds_files(tmp_path)
    scenario.write_text(ROUNDS_YAML + "wormhole: {audit: 3}\n")
    assert load_scenario(scenario).wormhole.audit == 3
    scenario.write_text(ROUNDS_YAML + "wormhole: {audit: many}\n")
    with pytest.raises(InputError, match=r"s\.yaml:6: wormhole\.audit"):
        load_scenario(scenario)


def test_the_scenario_file_sets_the_tail_left_to_the_packets(tmp_path):
    from wormhole_lab.scenario_io import load_scenario
    from wormhole_lab.wormhole.settings import WormholeConfig

    scenario = rounds_files(tmp_path)
    scenario.write_text(ROUNDS_YAML + "wormhole: {tail_packets: 4}\n")
    assert load_scenario(scenario).wormhole.tail_packets == 4
    scenario.write_text(ROUNDS_YAML + "wormhole: {tail_packets: 0}\n")
    with pytest.raises(InputError, match=r"s\.yaml:6: wormhole\.tail_packets: must be at least 1"):
        load_scenario(scenario)
    with pytest.raises(InputError, match=r"WormholeConfig\.tail_packets: must be a whole number, 1 or more"):
        WormholeConfig(tail_packets=0)


def test_the_command_line_offers_every_simulation_mode():
    from wormhole_lab.cli import MODE_CHOICES
    from wormhole_lab.simulation import MODES

    assert MODE_CHOICES == list(MODES)


def test_ns3_subcommand_in_flow_mode_writes_the_fct_file_and_says_what_it_skips(
    tmp_path, data_dir, monkeypatch, capsys
):
    work = tmp_path / "s1"
    shutil.copytree(data_dir / "validation" / "s1_single_flow", work)
    monkeypatch.chdir(work)
    assert main(["ns3", "config_dcqcn.txt", "--mode", "flow"]) == 0
    assert (work / "fct.txt").read_text().split()[6] == "834091"  # the reference's FCT of this lone flow
    assert (work / "pfc.txt").read_text() == "" and not (work / "qlen.txt").exists()
    err = capsys.readouterr().err
    assert "QLEN_MON_FILE" in err and "max-min recomputations" in err
    assert main(["ns3", "config_dcqcn.txt", "--mode", "flow", "--telemetry", str(tmp_path / "s.nc")]) == 2


def test_run_and_compare_in_flow_mode(tmp_path):
    done = console("run", str(SCENARIOS / "incast_dctcp.yaml"), "--mode", "flow", "--quiet", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "flows           8 completed of 8" in done.stdout and "max-min" in done.stderr
    assert len((tmp_path / "fct.txt").read_text().splitlines()) == 8
    done = console("compare", str(SCENARIOS / "incast_dctcp.yaml"), "--mode", "flow", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "FCT error       mean" in done.stdout and "flow " in done.stdout


def test_run_of_several_jobs_prints_one_line_per_job(tmp_path, capsys):
    scenario = tmp_path / "jobs.yaml"
    scenario.write_text(
        "topology: {builder: dumbbell, n_left: 2, n_right: 2}\ncca: dcqcn\ntelemetry: off\njobs:\n"
        "  - {name: left, file: f.txt, placement: [0, 2]}\n"
        "  - {name: right, file: f.txt, placement: [1, 3], start: 10us}\n"
        "alone: packet\n"
    )
    (tmp_path / "f.txt").write_text("1\n0 1 3 100 300000 0\n")  # local GPU 0 to 1: across the bottleneck
    assert main(["run", str(scenario), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("job ")]
    assert [line.split()[1] for line in lines] == ["left", "right"]
    ds = xr.load_dataset(tmp_path / "flows.nc", engine="h5netcdf")
    for line, slowdown in zip(lines, ds.job_slowdown.values, strict=True):
        assert "iterations 1" in line and f"slowdown {slowdown:.3f}" in line and slowdown > 1
    assert "each job run by itself on the same GPUs, in packet mode" in out
