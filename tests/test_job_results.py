"""Per-job results: a job alone is the single workload, jobs apart are their lone runs, jobs that meet slow down."""

from dataclasses import replace

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.job_results import job_lines
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import dumbbell, rail_optimized
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import write_flows
from wormhole_lab.workload.jobs import FlowFile, Job, Training, jobs_flows

TINY = Training("GPT-7B", 16, scale=0.001)  # TP8 x PP2 on two servers: pipeline traffic along the rails


def scenario(topo, jobs, cca="hp", alone_mode="packet") -> Scenario:
    flows = jobs_flows(topo, jobs)
    return Scenario(topo, flows, preset(cca), telemetry=Telemetry.off(), alone_mode=alone_mode)


def run(sc: Scenario, mode: str = "packet"):
    sim = Simulation(sc, mode=mode)
    ds = sim.run()
    return ds


@pytest.fixture(scope="module")
def apart():
    """Two tiny training jobs on alternate servers of a rail-optimised cluster: no port carries both."""
    topo = rail_optimized(4, 8)
    jobs = [Job("a", TINY, "interleaved", iterations=2), Job("b", TINY, "interleaved", iterations=2, start_ps=10**7)]
    return topo, jobs, run(scenario(topo, jobs))


def test_jobs_that_share_no_port_get_their_lone_results_exactly(apart):
    topo, jobs, ds = apart
    assert ds.sizes["shared_port"] == 0
    for j, job in enumerate(jobs):
        lone = run(scenario(topo, [replace(job, placement=tuple(_hosts(ds, j)))]))
        mine = ds.where(ds.flow_job == job.name, drop=True)
        assert np.array_equal(mine["fct"].values.astype(np.int64), lone["fct"].values)
        assert np.array_equal(mine["start"].values.astype(np.int64), lone["start"].values)
    assert np.array_equal(ds.job_iteration_time.values, ds.job_alone_iteration_time.values)
    assert ds.job_slowdown.values.tolist() == [1.0, 1.0]


def _hosts(ds, j):
    """The hosts job ``j`` ran on, read back from its flows."""
    mine = ds.flow_job.values == ds.job.values[j]
    return sorted(int(h) for h in set(ds.src.values[mine]) | set(ds.dst.values[mine]))


def test_iteration_times_follow_the_job_ends_and_the_trailing_compute(apart):
    topo, jobs, ds = apart
    tail = jobs_flows(topo, [jobs[0]]).meta["jobs"].jobs[0].tail_ps
    end = ds.start + ds.fct
    for j, job in enumerate(jobs):
        ends = [float(end.where((ds.flow_job == job.name) & (ds.iteration == k)).max()) for k in (0, 1)]
        first = float(ds.start.where(ds.flow_job == job.name).min())
        assert first == job.start_ps
        assert ds.job_iteration_time.values[j].tolist() == [ends[0] - first + tail, ends[1] - ends[0]]
        assert ds.job_completion_time.values[j] == ends[1] + tail - job.start_ps


def test_jobs_that_share_a_bottleneck_slow_down_and_their_flows_add_up(tmp_path):
    path = tmp_path / "cross.txt"
    write_flows(make_flows([0, 1], [2, 3], [400_000, 400_000], [0, 0]), path)  # local 0,1 left; 2,3 right
    topo = dumbbell(4, 4)
    jobs = [Job("a", FlowFile(str(path)), (0, 1, 4, 5)), Job("b", FlowFile(str(path)), (2, 3, 6, 7))]
    ds = run(scenario(topo, jobs, cca="dcqcn"))
    assert (ds.job_slowdown.values > 1.2).all()  # alone, a job has the 100 Gb/s bottleneck to itself
    assert ds.job_flows.values.sum() == ds.sizes["flow"] and ds.job_flows.values.tolist() == [2, 2]
    assert ds.sizes["shared_port"] >= 1
    bottleneck = ds.shared_port_bytes.sum("job")
    assert int(bottleneck.max()) == 4 * 400_000  # both jobs' bytes crossed the one bottleneck port
    marks = ds.shared_port_job_ecn_marks
    assert int(marks.sum()) > 0 and (marks.sum("job") == ds.shared_port_ecn_marks).all()  # every mark has its job
    assert (marks.max("shared_port") > 0).all()  # both jobs were marked at the bottleneck
    assert ds.job_kind.values.tolist() == ["training", "training"]
    lines = job_lines(ds)
    assert lines[0].startswith("job a") and f"slowdown {ds.job_slowdown.values[0]:.3f}" in lines[0]
    assert "packet mode" in lines[-1]


def test_the_memo_is_shared_across_jobs():
    """Job b repeats job a's pattern on other GPUs, later: every pattern of b is a hit on what a stored."""
    topo, small = rail_optimized(16, 8), Training("GPT-7B", 64, scale=0.01)  # DP4: long enough to settle
    a = Job("a", small, "interleaved")
    alone = run(scenario(topo, [a], alone_mode="off"), "wormhole")
    both = run(scenario(topo, [a, Job("b", small, "interleaved", start_ps=5 * 10**8)], alone_mode="off"), "wormhole")
    assert alone.attrs["memo_inserts"] > 0
    assert both.attrs["memo_inserts"] == alone.attrs["memo_inserts"]
    assert both.attrs["memo_hits"] > alone.attrs["memo_hits"]


def test_alone_off_leaves_the_slowdown_unknown_and_says_so(apart):
    topo, jobs, _ = apart
    ds = run(scenario(topo, jobs, alone_mode="off"))
    assert np.isnan(ds.job_slowdown.values).all() and np.isnan(ds.job_alone_completion_time.values).all()
    assert job_lines(ds)[-1].endswith("not run (alone: off)")


def test_an_unknown_alone_mode_is_an_input_error(apart):
    topo, jobs, _ = apart
    with pytest.raises(InputError, match="alone_mode"):
        run(scenario(topo, jobs, alone_mode="fast"))


def test_a_job_alone_in_a_list_runs_exactly_as_its_single_workload(tmp_path):
    from wormhole_lab.workload.hpcc_flow_format import read_flows

    path = tmp_path / "flows.txt"
    write_flows(make_flows([0, 1, 2, 3], [4, 4, 5, 5], [300_000, 200_000, 100_000, 50_000], [0, 0, 1000, 5000]), path)
    topo = dumbbell(4, 4)
    single = run(Scenario(topo, read_flows(path), preset("dcqcn"), telemetry=Telemetry.off()))
    listed = run(scenario(topo, [Job("only", FlowFile(str(path), 8))], cca="dcqcn"))
    for name in ("start", "fct", "completion_order", "cnps"):
        assert np.array_equal(listed[name].values, single[name].values), name
    assert listed.job_slowdown.values.tolist() == [1.0]  # one job ran alone: no other run needed
