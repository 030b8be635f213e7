"""The event loop: dependencies as the packet engine resolves them, incremental recomputation, stops."""

from dataclasses import replace

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel
from wormhole_lab.engine.presets import preset
from wormhole_lab.flowlevel import loop
from wormhole_lab.flowlevel.run import FlowLevel
from wormhole_lab.simulation import Scenario, Simulation, UnfinishedFlowsWarning, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree, star
from wormhole_lab.workload.flows import make_flows

GAP = 5_000_000  # 5 us of compute


def scenario(topo, flows, **config) -> Scenario:
    return Scenario(topo, flows, preset("dcqcn").with_(**config), telemetry=Telemetry.off())


def dag():
    """0 and 1 share host 3's link; 2 waits for both plus a gap; 3 waits for 2 but not before its own start time;
    4 waits for 0 alone, with a gap, and shares host 0's link with 2."""
    return make_flows(
        [0, 1, 0, 2, 1], [3, 3, 2, 1, 0], [200_000, 50_000, 100_000, 10_000, 30_000],
        [0, 0, 0, 400_000_000, 0], deps=[(), (), (0, 1), (2,), (0,)], gap_ps=[0, 0, GAP, 0, 2 * GAP],
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["flow", "packet"])
def test_dependencies_start_at_the_last_completion_plus_gap(mode):
    """The same rule in both modes (the flow loop calls the engine's own qp.complete)."""
    flows = dag()
    ds = Simulation(scenario(star(4), flows), mode=mode).run()
    start, end = ds["start"].values, ds["start"].values + ds["fct"].values
    for f in range(len(flows)):
        deps = flows.deps(f)
        ready = max((end[d] + flows.gap_ps[f] for d in deps), default=0)
        assert start[f] == max(ready, flows.start_ps[f]), f"flow {f}"
    assert start[3] == 400_000_000  # its dependency finished earlier
    assert ds.attrs["iteration_time_ps"] == end.max()


def test_release_on_delivery_takes_the_acks_way_back_off_each_release():
    """With the flag a flow waiting for others starts at the last one's delivery: its completion less the ACK's
    unqueued way back, here 2 x (4 ns + 1 us) on every 2-hop path of the star (60 B ACKs at 100 Gb/s, truncated to
    the ns); as in packet mode for a flow alone (tests/engine/test_dependencies.py)."""
    ack_return = 2 * (4_000 + 1_000_000)
    flows = replace(dag(), release_on_delivery=True)
    ds = Simulation(scenario(star(4), flows), mode="flow").run()
    start, end = ds["start"].values, ds["start"].values + ds["fct"].values
    late = Simulation(scenario(star(4), dag()), mode="flow").run()
    np.testing.assert_array_equal(ds["fct"].values, late["fct"].values)  # the FCT still ends at the ACK
    for f in range(len(flows)):
        ready = max((end[d] - ack_return + flows.gap_ps[f] for d in flows.deps(f)), default=0)
        assert start[f] == max(ready, flows.start_ps[f]), f"flow {f}"
    assert start[2] < late["start"].values[2]


@pytest.mark.parametrize("a_size, a_binds", [(20_000, False), (90_000, True), (200_000, True)])
def test_per_edge_delays_as_in_packet_mode(a_size, a_binds):
    """C waits for B (edge delay 0) and A (5 us): it starts at max(end A + 5 us, end B) + its gap, each edge binding
    in turn (tests/engine/test_dependencies.py has the same join in packet mode); a flow alone finishes as in packet
    mode, so the starts are the packet mode's to the ps."""
    edge = 5_000_000
    flows = make_flows(
        [0, 2, 1], [1, 3, 0], [a_size, 100_000, 10_000], 0, deps=[(), (), (1, 0)], gap_ps=[0, 0, GAP],
        dep_gaps=[(), (), (0, edge)],
    )  # fmt: skip
    ds = Simulation(scenario(star(4), flows), mode="flow").run()
    start, end = ds["start"].values, ds["start"].values + ds["fct"].values
    assert (end[0] + edge > end[1]) == a_binds
    assert start[2] == max(end[0] + edge, end[1]) + GAP
    packet = Simulation(scenario(star(4), flows), mode="packet").run()
    np.testing.assert_array_equal(start, packet["start"].values)


def random_flows(n: int, seed: int):
    """``n`` flows between random hosts of a 16-host fat tree at random times, a third of them waiting for an
    earlier flow: components merge and split as flows come and go."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 16, n)
    dst = (src + rng.integers(1, 16, n)) % 16
    deps = [(int(rng.integers(0, i)),) if i and rng.random() < 0.3 else () for i in range(n)]
    starts = rng.integers(0, 200, n) * 1_000_000
    return make_flows(src, dst, rng.integers(1_000, 400_000, n), starts, deps=deps, gap_ps=rng.integers(0, 3, n) * GAP)


def run_loop(flows, incremental: bool) -> FlowLevel:
    run = FlowLevel(prepare(scenario(fat_tree(4), flows)).state, incremental=incremental)
    assert run.advance(10**15) == "all_done"
    return run


def test_incremental_recompute_equals_recomputing_everything():
    flows = random_flows(150, seed=3)
    fast, full = run_loop(flows, True), run_loop(flows, False)
    for col in (L.FL_STARTED_AT, L.FL_FINISH, L.FL_DONE_ORDER):
        np.testing.assert_array_equal(fast.state.fl[:, col], full.state.fl[:, col])
    assert fast.attrs()["flows_rerated"] < full.attrs()["flows_rerated"]  # it did recompute less


def test_deterministic():
    flows = random_flows(80, seed=5)
    runs = [Simulation(scenario(fat_tree(4), flows), mode="flow").run() for _ in range(2)]
    for name in ("start", "fct", "completion_order", "delivered"):
        np.testing.assert_array_equal(runs[0][name].values, runs[1][name].values)


def test_the_event_queue_grows_when_many_flows_are_pending():
    """3000 flows on one host link, one a microsecond: the loop keeps room for three events per flow, more than the
    queue prepare() sizes (a row per flow plus a spare) holds, so it grows the queue and goes on."""
    n = 3000
    flows = make_flows([0] * n, [1] * n, [1_000] * n, np.arange(n) * 1_000_000)
    state = prepare(scenario(star(2), flows)).state
    rows = state.events.shape[0]
    assert rows - wheel.TABLE_ROWS < loop.ROOM_PER_FLOW * n
    run = FlowLevel(state)
    assert run.advance(10**15) == "all_done"
    assert state.events.shape[0] > rows
    assert (state.fl[:, L.FL_STATE] == L.FS_DONE).all()


def test_a_stop_time_leaves_flows_unfinished_and_says_why():
    flows = make_flows([0, 1], [1, 0], [10_000_000, 10_000], [0, 0], deps=[(), (0,)])
    with pytest.warns(UnfinishedFlowsWarning, match="did not finish by the stop time"):
        ds = Simulation(scenario(star(2), flows, stop_time_ps=100_000_000), mode="flow").run()
    assert ds.attrs["stop_reason"] == "time" and ds.attrs["sim_end_ps"] == 100_000_000
    assert list(ds["completed"].values) == [0, 0]
    assert 0 < ds["delivered"].values[0] < 10_000_000
    assert list(ds["unfinished_reason"].values) == [
        "still sending when the run stopped",
        "waiting for 1 flows it depends on",
    ]
