"""check_flows: flows against the topology they run on."""

from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import FlowTable, make_flows
from wormhole_lab.workload.hpcc_flow_format import read_flows
from wormhole_lab.workload.validate import check_dependencies, check_flows

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REFERENCE = SHARED / "reference"


@pytest.fixture
def topo():
    """Hosts 0 and 1 on switch 2: the reference's s1_single_flow topology."""
    return Topology(
        is_switch=np.array([False, False, True]),
        link_a=np.array([0, 1]),
        link_b=np.array([2, 2]),
        link_rate_bps=np.array([100 * 10**9] * 2),
        link_delay_ps=np.array([10**6] * 2),
        link_error_rate=np.zeros(2),
    )


def test_good_flows_pass(topo):
    check_flows(make_flows([0, 1, 0], [1, 0, 1], [10, 20, 1], [0, 0, 5]), topo, "flows")
    check_flows(make_flows([], [], [], []), topo, "flows")


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference files not found at {SHARED}")
def test_shipped_single_flow_fits_its_topology(topo):
    check_flows(read_flows(REFERENCE / "validation" / "s1_single_flow" / "flow.txt"), topo, "flow.txt")


BAD = [
    # (src, dst, size, start_ps, pg, dport, message)
    (3, 1, 10, 0, 3, 100, "src node 3 is out of range (topology has nodes 0..2)"),
    (-1, 1, 10, 0, 3, 100, "src node -1 is out of range"),
    (0, 7, 10, 0, 3, 100, "dst node 7 is out of range"),
    (2, 1, 10, 0, 3, 100, "src node 2 is a switch"),
    (0, 2, 10, 0, 3, 100, "dst node 2 is a switch"),
    (1, 1, 10, 0, 3, 100, "flow from node 1 to itself"),
    (0, 1, 0, 0, 3, 100, "size 0 B must be positive"),
    (0, 1, -5, 0, 3, 100, "size -5 B must be positive"),
    (0, 1, 10, -1, 3, 100, "start -1 ps is negative"),
    (0, 1, 10, 0, 8, 100, "pg 8 is not a priority group"),
    (0, 1, 10, 0, 3, 65536, "dport 65536 does not fit"),
]


@pytest.mark.parametrize(("src", "dst", "size", "start", "pg", "dport", "message"), BAD)
def test_bad_flow_names_index_and_problem(topo, src, dst, size, start, pg, dport, message):
    # The bad flow is the second one, so the index in the message must be 1.
    flows = make_flows([0, src], [1, dst], [10, size], [0, start], pg=[3, pg], dport=[100, dport])
    with pytest.raises(InputError) as info:
        check_flows(flows, topo, "flow.txt")
    assert info.value.where == "flow.txt[1]"
    assert message in str(info.value)
    assert "flow 1 " in str(info.value)


def test_first_bad_flow_is_reported(topo):
    flows = make_flows([0, 1, 2, 0], [1, 1, 0, 5], [10, 10, 10, 0], [0, 0, 0, 0])
    with pytest.raises(InputError, match=r"flows\[1\]: flow 1 \(1 -> 1\): flow from node 1 to itself"):
        check_flows(flows, topo, "flows")


def test_columns_must_have_one_entry_per_flow(topo):
    good = make_flows([0, 1], [1, 0], [10, 10], [0, 0])
    broken = FlowTable(
        src=good.src,
        dst=good.dst,
        size=good.size[:1],
        start_ps=good.start_ps,
        pg=good.pg,
        dport=good.dport,
        sport=good.sport,
    )
    with pytest.raises(InputError, match=r"Scenario\.flows\.size: has shape \(1,\)"):
        check_flows(broken, topo, "Scenario.flows")


def _chain_flows(deps):
    n = len(deps)
    return make_flows([0] * n, [1] * n, [10] * n, [0] * n, deps=deps)


def test_deep_dags_with_repeated_dependencies_pass():
    n = 5000  # a chain 5000 generations deep, forward and backward, plus a fan-in that lists one parent twice
    check_dependencies(_chain_flows([()] + [(i - 1,) for i in range(1, n)]))
    check_dependencies(_chain_flows([(i + 1,) for i in range(n - 1)] + [()]))
    check_dependencies(_chain_flows([(), (), (0, 1, 0), (2,)]))
    check_dependencies(_chain_flows([(3, 1, 3), (), (1,), (2,)]))


@pytest.mark.parametrize(
    ("deps", "cycle"),
    [
        ([(), (2,), (1,)], {1, 2}),
        # the cycle sits behind a long chain and has a flow hanging off it: only the cycle is named
        ([()] + [(i - 1,) for i in range(1, 300)] + [(299, 301), (300,), (301,)], {300, 301}),
    ],
)
def test_dependency_cycle_names_its_flows(deps, cycle):
    with pytest.raises(InputError, match="dependency cycle") as info:
        check_dependencies(_chain_flows(deps), "w.yaml")
    named = str(info.value).split("flows ")[1].split(" would never start")[0].split(" -> ")
    assert named[0] == named[-1] and set(map(int, named)) == cycle


def test_a_million_dependency_edges_check_without_a_graph_library():
    """Every flow of a wave waits for every flow of the wave before: 200 x 5000 edges. networkx held such
    a table as ~5 GB of dicts at MoE-32x22B's 18 M edges; the array peel stays near the table's own size."""
    import tracemalloc

    width, waves = 200, 25
    n = width * waves
    forward = [()] * width + [tuple(range((w - 1) * width, w * width)) for w in range(1, waves) for _ in range(width)]
    # listed last wave first, so that flows wait for later ids and the peel runs (earlier ones cannot form a cycle)
    flows = _chain_flows([tuple(n - 1 - d for d in deps) for deps in reversed(forward)])
    edges = len(flows.dep_ids)
    tracemalloc.start()
    check_dependencies(flows)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert edges == (waves - 1) * width * width and n == len(flows)
    assert peak < 12 * 8 * edges  # a few int64 arrays per edge; networkx needed ~300 B per edge


@pytest.mark.parametrize(
    "gaps, match",
    [
        (np.array([1, 2, 3]), r"flows\.dep_gap_ps.*has shape \(3,\) for 2 dependency edges"),
        (np.array([1.5, 0.0]), r"flows\.dep_gap_ps.*holds float64 values, not integers"),
        (np.array([0, -7]), r"flows\[2\]\.dep_gap_ps.*delay -7 ps after flow 1 \(edge 1\) is negative"),
    ],
)
def test_bad_edge_delays_are_named(gaps, match):
    """One whole, non-negative number of ps per dependency edge; the error names the flow and the edge."""
    flows = make_flows([0, 1, 0], [1, 0, 1], [10, 10, 10], 0, deps=[(), (0,), (1,)])
    check_dependencies(flows)
    with pytest.raises(InputError, match=match):
        check_dependencies(FlowTable(**{**vars(flows), "dep_gap_ps": gaps}))
