"""Several jobs on one fabric: placements, iterations, merging, and the errors for bad jobs."""

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology.builders import fat_tree, rail_optimized, star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.generators import training
from wormhole_lab.workload.hpcc_flow_format import write_flows
from wormhole_lab.workload.jobs import Background, FlowFile, Job, Training, jobs_flows, place_jobs
from wormhole_lab.workload.validate import check_flows

TINY = Training("GPT-7B", 16, scale=0.001)  # TP8 x PP2: two servers, pipeline traffic only


def servers(hosts, size=8):
    return sorted({int(h) // size for h in hosts})


def test_packed_takes_the_first_free_servers_in_order():
    topo = rail_optimized(6, 8)
    a, b = place_jobs(topo, [Job("a", TINY), Job("b", TINY)])
    assert a.tolist() == list(range(16)) and b.tolist() == list(range(16, 32))


def test_interleaved_spreads_each_job_over_every_other_server():
    topo = rail_optimized(4, 8)
    a, b = place_jobs(topo, [Job("a", TINY, "interleaved"), Job("b", TINY, "interleaved")])
    assert servers(a) == [0, 2] and servers(b) == [1, 3]
    assert a.tolist() == [*range(0, 8), *range(16, 24)]  # rank i on the i-th host, whole servers


def test_random_placement_is_the_seeded_draw_and_changes_with_the_seed():
    topo = rail_optimized(8, 8)
    one = place_jobs(topo, [Job("a", TINY, "random", seed=3)])[0]
    again = place_jobs(topo, [Job("a", TINY, "random", seed=3)])[0]
    other = place_jobs(topo, [Job("a", TINY, "random", seed=4)])[0]
    expected = sorted(np.random.default_rng(3).choice(8, 2, replace=False).tolist())
    assert servers(one) == expected and np.array_equal(one, again)
    assert not np.array_equal(one, other)


def test_policies_avoid_explicit_lists_whatever_their_order():
    topo = rail_optimized(4, 8)
    listed = tuple(range(8, 24))
    packed, explicit = place_jobs(topo, [Job("p", TINY), Job("e", TINY, listed)])
    assert explicit.tolist() == list(listed) and servers(packed) == [0, 3]


def test_a_job_that_is_not_whole_servers_is_placed_gpu_by_gpu():
    topo = star(7)
    a, b = place_jobs(topo, [Job("a", FlowFile("x", 3), "interleaved"), Job("b", FlowFile("x", 2))])
    assert a.tolist() == [0, 2, 4] and b.tolist() == [1, 3]


def test_a_sharing_job_spans_the_cluster_and_takes_no_gpu_away():
    topo = rail_optimized(2, 8)
    bg = Job("bg", Background("cdf.txt", 0.3, 10**6), shares_gpus=True)
    a, shared = place_jobs(topo, [Job("a", TINY), bg])
    assert a.tolist() == list(range(16)) and shared.tolist() == list(range(16))


def test_one_job_in_the_list_makes_the_single_workload_table():
    topo = rail_optimized(2, 8)
    alone, merged = training(topo, "GPT-7B", 16), jobs_flows(topo, [Job("a", Training("GPT-7B", 16))])
    for name in ("src", "dst", "size", "start_ps", "sport", "dep_offset", "dep_ids", "gap_ps", "phase"):
        assert np.array_equal(getattr(merged, name), getattr(alone, name)), name
    assert merged.tail_ps == alone.tail_ps


def test_iterations_chain_each_copy_after_the_last_flows_of_the_one_before():
    topo = rail_optimized(2, 8)
    one = jobs_flows(topo, [Job("a", TINY)])
    three = jobs_flows(topo, [Job("a", TINY, iterations=3)])
    n = len(one)
    assert len(three) == 3 * n and np.array_equal(three.src, np.tile(one.src, 3))
    check_flows(three, topo)
    counts = np.diff(one.dep_offset)
    roots = np.flatnonzero(counts == 0)
    sinks = np.setdiff1d(np.arange(n), one.dep_ids)
    for k in (1, 2):
        for r in roots:
            assert three.deps(k * n + r).tolist() == (sinks + (k - 1) * n).tolist()
            assert three.gap_ps[k * n + r] == one.tail_ps  # the optimizer step before the next iteration
        others = np.setdiff1d(np.arange(n), roots)
        for f in others[:5]:
            assert three.deps(k * n + f).tolist() == (one.deps(f) + k * n).tolist()
    layout = three.meta["jobs"]
    assert layout.iteration_of_flow().tolist() == [0] * n + [1] * n + [2] * n


def test_jobs_are_mapped_to_their_hosts_and_shifted_by_their_start(tmp_path):
    path = tmp_path / "pair.txt"
    write_flows(make_flows([0, 1], [1, 0], [5000, 7000], [0, 1000]), path)
    topo = star(6)
    flows = jobs_flows(topo, [Job("a", FlowFile(str(path)), [4, 5], start_ps=3_000_000), Job("b", FlowFile(str(path)))])
    assert flows.src.tolist() == [4, 5, 0, 1] and flows.dst.tolist() == [5, 4, 1, 0]
    assert flows.start_ps.tolist() == [3_000_000, 3_001_000, 0, 1000]
    assert flows.meta["jobs"].job_of_flow().tolist() == [0, 0, 1, 1]


def test_two_jobs_on_one_host_pair_get_distinct_source_ports(tmp_path):
    path = tmp_path / "one.txt"
    write_flows(make_flows([0], [1], [5000], [0]), path)
    topo = star(3)
    flows = jobs_flows(topo, [Job("a", FlowFile(str(path))), Job("b", FlowFile(str(path)), shares_gpus=True)])
    assert flows.sport.tolist() == [10000, 10001]


@pytest.mark.parametrize(
    ("jobs", "where", "words"),
    [
        ([Job("a", Training("GPT-7B", 64))], "jobs[0] (a)", "asks for 64 GPUs but the cluster has 32"),
        ([Job("a", TINY), Job("b", TINY), Job("c", TINY)], "jobs[2] (c).placement", "only 0 of the cluster's 32"),
        ([Job("a", TINY, tuple(range(16))), Job("b", TINY, tuple(range(8, 24)))], "jobs[1] (b).placement",
         "host 8 is also used by job 'a'"),
        ([Job("a", TINY, "spread")], "jobs[0] (a).placement", "unknown placement 'spread'"),
        ([Job("a", TINY, start_ps=-1)], "jobs[0] (a).start", "negative"),
        ([Job("a", TINY, iterations=0)], "jobs[0] (a).iterations", "0 iterations"),
        ([Job("a", Background("cdf.txt", 0, 10**6))], "jobs[0] (a).poisson.load", "not in (0, 1]"),
        ([Job("a", TINY), Job("a", TINY)], "jobs[1] (a).name", "used twice"),
        ([Job("a", TINY, tuple(range(15)))], "jobs[0] (a).placement", "lists 15 hosts for a job of 16"),
        ([Job("a", TINY, (*range(15), 40))], "jobs[0] (a).placement", "node 40 is not a host"),
        ([], "jobs", "empty"),
    ],
)  # fmt: skip
def test_bad_jobs_name_the_job_and_the_fix(jobs, where, words):
    with pytest.raises(InputError) as err:
        jobs_flows(rail_optimized(4, 8), jobs)
    assert err.value.where == where and words in err.value.problem and err.value.fix


def test_a_topology_without_servers_places_training_on_groups_of_eight():
    topo = fat_tree(4)  # 16 hosts, no gpus_per_server: a DGX's 8
    flows = jobs_flows(topo, [Job("a", TINY, "interleaved")])
    assert sorted(set(flows.src) | set(flows.dst)) <= list(range(16))
