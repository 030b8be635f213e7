"""Flows that wait for others: a flow starts when its dependencies completed plus its compute gap."""

from dataclasses import replace

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import ACK_WIRE_BYTES
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, Simulation, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

GAP = 5_000_000  # 5 us of compute


def run(flows):
    return Simulation(Scenario(star(4), flows, preset("dcqcn"))).run()


def test_chain_starts_after_completion_plus_gap():
    flows = make_flows([0, 1, 2], [1, 2, 3], [50_000, 50_000, 50_000], 0, deps=[(), (0,), (1,)], gap_ps=[0, GAP, 0])
    ds = run(flows)
    end = ds["start"].values + ds["fct"].values
    assert ds["start"].values[1] == end[0] + GAP
    assert ds["start"].values[2] == end[1]
    assert ds.attrs["iteration_time_ps"] == end[2]


def test_flows_may_wait_for_later_ids():
    """The chain of ``test_chain_starts_after_completion_plus_gap`` listed last flow first: same times."""
    forward = run(make_flows([0, 1, 2], [1, 2, 3], [50_000] * 3, 0, deps=[(), (0,), (1,)], gap_ps=[0, GAP, 0]))
    backward = run(make_flows([2, 1, 0], [3, 2, 1], [50_000] * 3, 0, deps=[(1,), (2,), ()], gap_ps=[0, GAP, 0]))
    for column in ("start", "fct"):
        assert np.array_equal(backward[column].values[::-1], forward[column].values)


def test_join_waits_for_the_last_dependency_and_never_starts_early():
    sizes = [10_000, 400_000, 10_000]
    flows = make_flows([0, 1, 2], [3, 3, 0], sizes, 0, deps=[(), (), (0, 1)], gap_ps=[0, 0, GAP])
    ds = run(flows)
    end = ds["start"].values + ds["fct"].values
    assert ds["start"].values[2] == max(end[0], end[1]) + GAP
    for child, parents in [(2, [0, 1])]:
        assert all(ds["start"].values[child] >= end[p] for p in parents)


def test_iteration_summary_counts_each_phase_and_the_trailing_compute():
    flows = make_flows([0, 1], [1, 2], [50_000, 50_000], 0, deps=[(), (0,)], phase=["pp", "dp"], tail_ps=GAP)
    ds = run(flows)
    end = ds["start"].values + ds["fct"].values
    assert ds.attrs["iteration_time_ps"] == end[1] + GAP
    assert ds.attrs["pp_comm_time_ps"] == ds["fct"].values[0]
    assert ds.attrs["dp_bytes"] == 50_000
    assert list(ds["phase"].values) == ["pp", "dp"]


@pytest.mark.parametrize(
    "deps, match",
    [([(), (5,), ()], "does not exist"), ([(), (1,), ()], "itself"), ([(2,), (0,), (1,)], "cycle")],
)
def test_bad_dependencies_are_clear_errors(deps, match):
    flows = make_flows([0, 1, 2], [1, 2, 3], [1000] * 3, 0, deps=deps)
    with pytest.raises(InputError, match=match):
        run(flows)


def test_negative_gap_is_rejected():
    flows = make_flows([0, 1], [1, 2], [1000] * 2, 0, deps=[(), (0,)], gap_ps=[0, -1])
    with pytest.raises(InputError, match="negative"):
        run(flows)


def test_deterministic_with_dependencies():
    flows = make_flows([0, 1, 2, 3], [1, 2, 3, 0], [80_000] * 4, 0, deps=[(), (0,), (0,), (1, 2)], gap_ps=GAP)
    a, b = run(flows), run(flows)
    np.testing.assert_array_equal(a["fct"].values, b["fct"].values)
    np.testing.assert_array_equal(a["start"].values, b["start"].values)


RATE, DELAY = 100 * 10**9, 1_000_000  # star's 100 Gb/s host links, 1 us each
# the ACK of the last byte back over two unqueued hops: its 60 B at 100 Gb/s take 4.8 ns, truncated to the 1 ns
# clock (the reference's, and the engine's time quantum), plus each link's delay
ACK_RETURN = 2 * ((ACK_WIRE_BYTES * 8 * 10**12 // RATE) // 1000 * 1000 + DELAY)


def ends(flows, n_hosts):
    topo = star(n_hosts, host_rate_bps=RATE, host_delay_ps=DELAY)
    ds = Simulation(Scenario(topo, flows, preset("dcqcn"), telemetry=Telemetry.off())).run()
    return ds["start"].values, ds["start"].values + ds["fct"].values


@pytest.mark.parametrize("gap", [0, GAP])
def test_release_on_delivery_starts_the_dependant_when_the_last_byte_arrives(gap):
    """A 0 -> 1 (100 KB), B 1 -> 2 waits for A: with the flag B starts when A's last byte reaches host 1, the ACK's
    way back (2 x (4 ns + 1 us)) before A's completion; without it at the completion. The gap adds to both, and
    A's FCT is start to last ACK either way."""
    assert ACK_RETURN == 2_008_000
    flows = make_flows([0, 1], [1, 2], [100_000, 100_000], 0, deps=[(), (0,)], gap_ps=[0, gap])
    start, end = ends(flows, 3)
    early_start, early_end = ends(replace(flows, release_on_delivery=True), 3)
    assert start[1] == end[0] + gap
    assert early_start[1] == early_end[0] - ACK_RETURN + gap
    assert early_end[0] == end[0]


def test_release_on_delivery_waits_for_the_last_dependency_delivered_once():
    """C waits for A (short) and B (long) on other hosts: released at B's delivery. Released again at A's
    completion, C would have started then (its count of dependencies left run out early)."""
    flows = make_flows(
        [0, 2, 3], [1, 3, 0], [20_000, 200_000, 10_000], 0, deps=[(), (), (0, 1)], gap_ps=[0, 0, GAP],
        release_on_delivery=True,
    )  # fmt: skip
    start, end = ends(flows, 4)
    assert end[0] < end[1] - ACK_RETURN
    assert start[2] == end[1] - ACK_RETURN + GAP


EDGE_GAP = 5_000_000  # 5 us after A (flow 0) on C's edge to it; 0 after B (flow 1)


def join_with_edge_gaps(a_size, b_size=100_000, b_start=0):
    """A 0 -> 1 and B 2 -> 3; C 1 -> 0 waits for B (edge delay 0) and A (``EDGE_GAP``) plus its own ``GAP``. Listed
    (B, A): grouped by the flow waited for, the engine holds A's edge first, so delays taken in the order of C's
    deps rather than of its dependants list would swap."""
    return make_flows(
        [0, 2, 1], [1, 3, 0], [a_size, b_size, 10_000], [0, b_start, 0], deps=[(), (), (1, 0)], gap_ps=[0, 0, GAP],
        dep_gaps=[(), (), (0, EDGE_GAP)],
    )  # fmt: skip


@pytest.mark.parametrize(
    "a_size, a_binds",
    [(20_000, False), (90_000, True), (200_000, True)],  # A ~6.6 us before B, ~0.8 us before it, ~8 us after it
)
def test_each_dependency_edge_adds_its_own_delay(a_size, a_binds):
    """C starts at max(end A + 5 us, end B) + its gap: with one gap per flow it could only be max(end A, end B) + gap.
    The sizes make each edge the binding one in turn, so the test fails if the delay is dropped, put on the other
    edge or on both."""
    start, end = ends(join_with_edge_gaps(a_size), 4)
    assert (end[0] + EDGE_GAP > end[1]) == a_binds
    assert start[2] == max(end[0] + EDGE_GAP, end[1]) + GAP


def test_edge_delays_of_zero_change_nothing():
    """A table with per-edge delays all 0 runs exactly as the same table without them (``dep_gap_ps`` None)."""
    flows = join_with_edge_gaps(90_000)
    zero = replace(flows, dep_gap_ps=np.zeros(len(flows.dep_ids), dtype=np.int64))
    plain = replace(flows, dep_gap_ps=None)
    for column in ("start", "fct"):
        np.testing.assert_array_equal(run(zero)[column].values, run(plain)[column].values)


def test_negative_edge_delay_is_rejected_before_the_run():
    flows = make_flows([0, 1], [1, 2], [1000] * 2, 0, deps=[(), (0,)], dep_gaps=[(), (-1,)])
    with pytest.raises(InputError, match=r"\[1\]\.dep_gap_ps.*delay -1 ps after flow 0 \(edge 0\) is negative"):
        run(flows)


def test_edge_delays_reach_the_engine_beside_the_dependants_and_only_when_the_table_has_some():
    """``child_gaps`` is aligned with ``children`` (grouped by the flow waited for: A's edge, then B's) when the table
    has per-edge delays, and empty otherwise: a table without them costs the engine nothing more."""
    flows = join_with_edge_gaps(90_000)
    state = prepare(Scenario(star(4), flows, preset("dcqcn"))).state
    assert state.children.tolist() == [2, 2] and state.child_gaps.tolist() == [EDGE_GAP, 0]
    plain = prepare(Scenario(star(4), replace(flows, dep_gap_ps=None), preset("dcqcn"))).state
    assert plain.child_gaps.shape == (0,) and plain.per_flow_nbytes() == state.per_flow_nbytes() - 2 * 8


@pytest.mark.parametrize("a_size", [20_000, 90_000, 200_000])
def test_edge_delays_count_from_the_delivery_with_release_on_delivery(a_size):
    """The join of ``test_each_dependency_edge_adds_its_own_delay`` released at deliveries: C starts at
    max(A's delivery + 5 us, B's delivery) + its gap, the deliveries being the run's ``delivery_time``s."""
    flows = replace(join_with_edge_gaps(a_size), release_on_delivery=True)
    topo = star(4, host_rate_bps=RATE, host_delay_ps=DELAY)
    ds = Simulation(Scenario(topo, flows, preset("dcqcn"), telemetry=Telemetry.off())).run()
    start = ds["start"].values
    delivered = start + ds["delivery_time"].values
    assert start[2] == max(delivered[0] + EDGE_GAP, delivered[1]) + GAP
