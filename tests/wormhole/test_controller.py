"""The controller takes the kernel's flow log lazily: partitions stay exact, results match eager placement."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import state as state_module
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import EngineState
from wormhole_lab.simulation import Scenario, Simulation, compile_wormhole, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import leaf_spine, star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.controller import WormholeController
from wormhole_lab.wormhole.settings import WormholeConfig

DATA = Path(__file__).parents[1] / "data" / "wormhole"


def chained_flows(seed, n, hosts, long, short, starts, follow):
    """``n`` random flows among ``hosts`` hosts: a ``long[0]`` share of ``long[1]`` bytes, the others of
    ``short`` (low, high) bytes, starting at one of ``starts[0]`` slots ``starts[1]`` ps apart; with chance
    ``follow[0]`` a flow waits for the one before it, or (``follow[1]``) for any earlier one."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    size = np.where(rng.random(n) < long[0], long[1], rng.integers(*short, n))
    start = np.sort(rng.integers(0, starts[0], n)) * starts[1]
    chance, any_earlier = follow
    deps = [
        ((int(rng.integers(0, i)) if any_earlier else i - 1,) if i and rng.random() < chance else ()) for i in range(n)
    ]
    return make_flows(src, dst, size, start, deps=deps)


def mixed_flows():
    """Random short flows, most chained (unforeseeable starts: a partition that a known start will join is not
    skipped before it), and a few long ones that are skipped and skipped back, on a small leaf-spine."""
    flows = chained_flows(3, 60, 8, (0.15, 20_000_000), (2_000, 40_000), (1500, 1_000_000), (0.9, False))
    # memo off: the recorded FCTs are of the bookkeeping alone (the memo has its own tests, busy_memo below)
    wormhole = WormholeConfig(memo=False)
    return Scenario(leaf_spine(4, 2, 2), flows, preset("hp"), telemetry=Telemetry.off(), wormhole=wormhole)


def test_after_every_stop_the_placed_flows_are_the_active_ones_in_exact_partitions(monkeypatch):
    checked = []
    on_stop = WormholeController.on_stop

    def checking(self, steady, horizon):
        on_stop(self, steady, horizon)
        active = set(np.flatnonzero(self.state.fl[:, L.FL_STATE] == L.FS_ACTIVE).tolist())
        assert set(np.flatnonzero(self.state.fl[:, L.FL_PART] >= 0).tolist()) == active
        assert sorted(map(sorted, self.partitions.flows.values())) == sorted(map(sorted, self.partitions.recompute()))
        for part, members in self.partitions.flows.items():
            assert set(self.state.fl[list(members), L.FL_PART]) == {part}
        checked.append(steady)

    monkeypatch.setattr(WormholeController, "on_stop", checking)
    ds = Simulation(mixed_flows(), mode="wormhole").run()
    assert ds.attrs["skips"] > 0 and ds.attrs["skip_backs"] > 0 and any(checked)


def test_lazy_placement_gives_the_same_results_as_placing_every_flow_at_once(monkeypatch):
    lazy = Simulation(mixed_flows(), mode="wormhole").run()
    attach = EngineState.attach_partitions
    every_flow = lambda self, *a: attach(self, *a[:3], np.ones(len(a[3]), bool))  # noqa: E731
    monkeypatch.setattr(EngineState, "attach_partitions", every_flow)
    eager = Simulation(mixed_flows(), mode="wormhole").run()
    assert lazy.attrs["skips"] == eager.attrs["skips"] > 0 and lazy.attrs["skip_backs"] == eager.attrs["skip_backs"] > 0
    np.testing.assert_array_equal(lazy["fct"].values, eager["fct"].values)


@pytest.fixture
def controller():
    """A controller on 3 flows of a star (flow 2 shares nothing with the others); the test writes the flow log."""
    flows = make_flows([1, 2, 3], [0, 0, 4], [10**6] * 3, [0, 0, 0])
    scenario = Scenario(star(5), flows, preset("hp"), telemetry=Telemetry.off())
    state = prepare(scenario).state
    return WormholeController(state, flows, WormholeConfig(), scenario.config)


def write_log(ctrl, rows):
    ctrl.state.flow_log[: len(rows)] = rows
    ctrl.state.g[L.G_FLOW_LOG_N] = len(rows)


def test_a_flow_that_came_and_went_between_two_looks_restarts_the_partitions_it_touched(controller):
    write_log(controller, [(0, 10, 1), (2, 15, 1)])
    controller.on_stop(False, 10**12)
    part0, part2 = controller.state.fl[[0, 2], L.FL_PART]
    assert controller.state.parts[part0, L.PA_CHANGED_AT] == 10
    write_log(controller, [(1, 20, 1), (1, 30, 0)])  # flow 1 shares flow 0's egress port to host 0
    controller.on_stop(False, 10**12)
    assert controller.state.fl[1, L.FL_PART] == -1
    assert controller.state.parts[part0, L.PA_CHANGED_AT] == 30
    assert controller.state.parts[part2, L.PA_CHANGED_AT] == 15  # untouched
    assert controller.series()["counts"].tolist() == [1, 2]


def busy_flows(memo=None):
    """160 flows among 16 hosts of a leaf-spine, half of them started by another's completion: partitions merge,
    split, are skipped and skipped back."""
    flows = chained_flows(5, 160, 16, (0.2, 8_000_000), (20_000, 400_000), (3000, 250_000), (0.5, True))
    wormhole = WormholeConfig(memo=memo)
    return Scenario(leaf_spine(4, 2, 4), flows, preset("hp"), telemetry=Telemetry.off(), wormhole=wormhole)


@pytest.mark.parametrize("case", ["mixed", "busy", "busy_memo"])
def test_compiled_partitions_give_the_fcts_of_the_python_bookkeeping(case, tmp_path):
    """The FCTs, to the picosecond, that these runs gave when partitions were kept in Python (the file says which
    commit; every skip and hit then left 4 packets to the packet level). On the busy runs that bookkeeping merged
    partitions 1 and 3 times and split them 2 and 6 times."""
    expected = json.loads((DATA / "python_partitions_fct.json").read_text())[case]
    scenario = mixed_flows() if case == "mixed" else busy_flows(str(tmp_path / "m.sqlite") if "memo" in case else None)
    scenario = replace(scenario, wormhole=replace(scenario.wormhole, tail_packets=4))
    ds = Simulation(scenario, mode="wormhole").run()
    assert ds.attrs["skips"] > 0 and ds.attrs["skip_backs"] > 0
    np.testing.assert_array_equal(ds["fct"].values, expected)


@pytest.mark.parametrize("case", ["busy", "busy_memo"])
def test_partition_ids_grown_from_one_row_give_the_run_of_a_row_per_flow(case, tmp_path, monkeypatch):
    """The tables indexed by partition id start small and grow as flows are placed (``Partitions``): the same
    FCTs, skips, skip-backs and memo hits as with a row per flow, through merges, splits and skips."""
    runs, rows = [], []
    for ids in (10**9, 1):
        monkeypatch.setattr(state_module, "INITIAL_PARTITION_IDS", ids)
        memo = str(tmp_path / f"{ids}.sqlite") if "memo" in case else None
        simulation = Simulation(busy_flows(memo), mode="wormhole")
        runs.append(simulation.run())
        rows.append(len(simulation._state.parts))
    by_flow, grown = runs
    assert rows[0] == len(by_flow.flow) + 1 and 2 < rows[1] < rows[0]
    assert grown.attrs["skips"] > 0 and grown.attrs["skip_backs"] > 0
    for key in ("events_executed", "skips", "skip_backs", "memo_hits", "memo_lookups"):
        assert grown.attrs.get(key) == by_flow.attrs.get(key), key
    np.testing.assert_array_equal(grown["fct"].values, by_flow["fct"].values)


def test_set_up_of_a_hundred_thousand_flows_holds_little_beyond_the_engine_tables():
    """An MoE iteration of ~125,000 flows and ~700,000 dependencies, checked, routed, built and handed to the
    controller: the peak holds the engine's tables and little else. Per-flow Python objects (a port set, path
    arrays and a label per flow, ~1 KB each) or a graph library's copy of the dependency DAG (~300 B per edge)
    would break the bound."""
    import tracemalloc

    from wormhole_lab.topology.builders import rail_optimized
    from wormhole_lab.workload.llm import training_iteration
    from wormhole_lab.workload.models import get_model, placement_for

    flows = training_iteration(get_model("MoE-8x13B"), placement_for("MoE-8x13B", 128), micro_batches=8)
    scenario = Scenario(rail_optimized(16, 8), flows, preset("hp"), telemetry=Telemetry.off())
    assert len(flows) > 100_000
    tracemalloc.start()
    try:
        state = prepare(scenario).state
        WormholeController(state, flows, WormholeConfig(), scenario.config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the engine's own tables per flow (379 B measured; 371 B before FL_DELIVERED_AT): the 31 columns of a flow's row,
    # its dependency edges (32-bit ids) and its link in its partition's member list (5 32-bit columns, which the
    # kernel's flow log reads); the sender's state, the CCA's, HPCC's hops, the steady test's rings, sums and cycle
    # marks (~1.9 kB) are held per slot of a started flow, the rows per partition id per partition alive; a column
    # moved back into the row (8 B per flow) breaks the bound, and so would a partition row per flow again (9 + 4
    # columns)
    assert state.nbytes() / len(flows) < 384
    assert peak < 1.15 * state.nbytes() + 30 * 2**20, f"{peak / len(flows):.0f} B per flow at the peak"


def test_a_partition_with_a_member_down_to_its_tail_is_neither_looked_up_nor_watched(tmp_path, monkeypatch):
    """A DCQCN 3-to-1 incast of 1, 1 and 3 MB: at the first completion the other 1 MB flow has sent everything and
    no stored transient can fit the partition it shares with the 3 MB flow; the partition that formed at the start
    is looked up and watched."""
    seen = []
    look_up = WormholeController._look_up

    def recording(self, alive, formed, looks, now):
        lookups = self.memo.lookups
        tried = look_up(self, alive, formed, looks, now)
        spent = []
        for i, part in enumerate(alive[formed].tolist()):
            flows = looks.flows[looks.offsets[i] : looks.offsets[i + 1]]
            sent = self.state.fw[self.state.fl[flows, L.FL_SLOT], L.FW_SND_NXT]
            left = int((self.state.fl[flows, L.FL_SIZE] - sent).min())
            spent.append(left < self.ff.tail_bytes)
            seen.append((spent[-1], part in self.pending))
        assert self.memo.lookups - lookups == spent.count(False)  # each partition not spent looked up, no other
        return tried

    flows = make_flows([1, 2, 3], [0, 0, 0], [1_000_000, 1_000_000, 3_000_000], 0)
    scenario = Scenario(star(4), flows, preset("dcqcn"), telemetry=Telemetry.off())
    compile_wormhole()  # its own run goes through _look_up too
    monkeypatch.setattr(WormholeController, "_look_up", recording)
    Simulation(replace(scenario, wormhole=WormholeConfig(memo=tmp_path / "memo.sqlite")), mode="wormhole").run()
    assert set(seen) == {(False, True), (True, False)}  # watched when not spent (a fresh DB holds nothing), else not


def test_completions_that_leave_nothing_to_look_up_need_no_return_and_change_nothing(tmp_path, monkeypatch):
    """A DCQCN 3-to-1 incast: when the first flow completes, the other two have sent everything, so the kernel
    returns at none of the completions; the results are those of a run that returns at each."""
    returns = []
    on_stop = WormholeController.on_stop

    def counting(self, steady, horizon):
        returns.append(int(self.state.g[L.G_FLOW_LOG_N]))
        on_stop(self, steady, horizon)

    flows = make_flows([1, 2, 3], [0, 0, 0], [1_000_000] * 3, 0)
    scenario = Scenario(star(4), flows, preset("dcqcn"), telemetry=Telemetry.off())
    compile_wormhole()
    monkeypatch.setattr(WormholeController, "on_stop", counting)

    def run(memo: str):
        returns.clear()
        ds = Simulation(replace(scenario, wormhole=WormholeConfig(memo=tmp_path / memo)), mode="wormhole").run()
        return ds, list(returns)

    quiet, quiet_returns = run("quiet.sqlite")

    def counting_every(self, steady, horizon):
        self.state.ci[L.CI_QUIET_TAIL] = 0  # every eager completion returns
        counting(self, steady, horizon)

    monkeypatch.setattr(WormholeController, "on_stop", counting_every)
    every, every_returns = run("every.sqlite")
    assert len(set(every["fct"].values.tolist())) == 3  # three completions at three instants
    # rows of the flow log at each return that had any: the completions come back with the run's end
    assert [n for n in quiet_returns if n] == [3, 3] and [n for n in every_returns if n] == [3, 1, 1, 1]
    np.testing.assert_array_equal(quiet["fct"].values, every["fct"].values)
