"""The wormhole-lab command as a user types it."""

import shutil
import subprocess
import sys

import xarray as xr

from wormhole_lab.cli import main


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
    assert main(["ns3", "config_hpcc.txt", "--mode", "wormhole"]) == 0
    captured = capsys.readouterr()
    assert "events executed" in captured.err and "skipped" in captured.err
    fct = int((work / "fct.txt").read_text().split()[6])
    assert abs(fct - 921013) / 921013 < 0.01
