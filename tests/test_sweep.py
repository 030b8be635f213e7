"""Sweeps on a real Dask LocalCluster: results equal single runs, memo DBs merge, reruns resume."""

import json
import sqlite3

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.sweep import case_fingerprint, case_scenario, sweep
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def rounds():
    """Four rounds of a 2-to-1 incast, each after the previous: memo hits from the second round on."""
    src, dst, size, deps = [], [], [], []
    for r in range(4):
        for k in (1, 2):
            src.append(k)
            dst.append(0)
            size.append(3_000_000)
            deps.append(tuple(range(2 * (r - 1), 2 * r)) if r else ())
    flows = make_flows(src, dst, size, 0, deps=deps)
    return Scenario(star(3), flows, preset("dctcp"), telemetry=Telemetry.off(), name="rounds")


def test_sweep_results_equal_running_each_case_alone(client, rounds):
    axes = {"mode": ["packet", "wormhole"], "config.dctcp_rate_ai_bps": [615_000_000, 1_000_000_000]}
    ds = sweep(rounds, axes, client=client)
    assert ds.attrs["failed"] == 0
    for mode in axes["mode"]:
        for ai in axes["config.dctcp_rate_ai_bps"]:
            scenario, m = case_scenario(rounds, {"mode": mode, "config.dctcp_rate_ai_bps": ai})
            alone = Simulation(scenario, mode=m).run()
            cell = ds.sel(mode=mode, **{"config.dctcp_rate_ai_bps": ai})
            assert cell["iteration_time"] == alone.attrs["iteration_time_ps"]
            assert cell["events"] == alone.attrs["events_executed"]


def test_memo_entries_merge_and_later_batches_start_warmer(client, rounds, tmp_path):
    memo = tmp_path / "shared.sqlite"
    axes = {"mode": ["wormhole"], "config.seed": [1, 2, 3, 4]}  # the seed is not part of the memo key
    ds = sweep(rounds, axes, client=client, memo=str(memo), batch_size=2)
    rates = ds["batch_memo_hit_rate"].values
    assert rates[1] > rates[0]
    rows = sqlite3.connect(memo).execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert rows >= 1


def test_a_rerun_computes_only_the_missing_cases(client, rounds, tmp_path):
    axes = {"mode": ["packet"], "config.dctcp_rate_ai_bps": [400_000_000, 615_000_000, 900_000_000]}
    sweep(rounds, axes, client=client, results=str(tmp_path))
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 3
    missing = tmp_path / f"{case_fingerprint(rounds, {'mode': 'packet', 'config.dctcp_rate_ai_bps': 615_000_000})}.json"
    missing.unlink()
    for f in files:
        if f.exists():
            f.write_text(json.dumps({**json.loads(f.read_text()), "events": -1}))  # marks results not recomputed
    seen = []
    ds = sweep(rounds, axes, client=client, results=str(tmp_path), progress=lambda *a: seen.append(a))
    assert len(seen) == 1  # one case ran
    events = ds["events"].values.ravel()
    assert list(events == -1) == [True, False, True]


def test_a_failing_case_is_reported_and_does_not_sink_the_sweep(client, rounds):
    ds = sweep(rounds, {"config.buffer_bytes": [100, 32 * 2**20]}, client=client)
    errors = ds["error"].values.ravel()
    assert "InputError" in errors[0] and errors[1] == ""
    assert np.isfinite(ds["iteration_time"].values.ravel()[1])


def test_a_sweep_of_jobs_reports_the_worst_slowdown(client, tmp_path):
    from wormhole_lab.topology.builders import dumbbell
    from wormhole_lab.workload.hpcc_flow_format import write_flows
    from wormhole_lab.workload.jobs import FlowFile, Job, jobs_flows

    path = tmp_path / "cross.txt"
    write_flows(make_flows([0, 1], [2, 3], [300_000, 300_000], [0, 0]), path)
    topo = dumbbell(4, 4)
    jobs = [Job("a", FlowFile(str(path)), (0, 1, 4, 5)), Job("b", FlowFile(str(path)), (2, 3, 6, 7))]
    base = Scenario(topo, jobs_flows(topo, jobs), preset("dcqcn"), telemetry=Telemetry.off(), alone_mode="packet")
    table = sweep(base, {"mode": ["packet"]}, client=client)
    alone_run = Simulation(base).run()
    assert float(table["job_slowdown_max"].values[0]) == float(alone_run.job_slowdown.max()) > 1
