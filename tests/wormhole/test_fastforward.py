"""FastForward's index of the known starts (the interrupts a skip must stop at) is built only for runs that skip;
what a memo jump credits counts out the data a partition's queues hold; the compiled test of shares behind a skip
decision; skips taken together shift as they would one by one."""

import contextlib

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import leaf_spine, star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole import fastforward
from wormhole_lab.wormhole.fastforward import FastForward, _shares_disagree
from wormhole_lab.wormhole.queued import unqueued_bytes
from wormhole_lab.wormhole.settings import WormholeConfig


def index_built(scenario) -> tuple[bool, int]:
    sim = Simulation(scenario, mode="wormhole")
    ds = sim.run()
    return "_known_starts" in vars(sim.controller.ff), ds.attrs["skips"]


def test_the_known_starts_are_indexed_at_the_first_skip_and_not_for_a_run_of_short_flows():
    rng = np.random.default_rng(5)
    src = rng.integers(0, 8, 60)
    short = make_flows(src, (src + rng.integers(1, 8, 60)) % 8, rng.integers(2_000, 40_000, 60), 0)
    assert index_built(Scenario(leaf_spine(4, 2, 2), short, preset("hp"), telemetry=Telemetry.off())) == (False, 0)
    long = make_flows([1], [0], [10_000_000], 0)
    built, skips = index_built(Scenario(star(2), long, preset("hp"), telemetry=Telemetry.off()))
    assert built and skips > 0


def test_what_a_look_counts_out_of_the_queues_is_what_all_the_ports_queues_hold(tmp_path, monkeypatch):
    """At every look of a memo run of two incasts, the flows' data-path queues hold all their queued data."""
    flows = make_flows([1, 2, 3, 5, 6], [0, 0, 0, 4, 4], [3_000_000] * 5, [0, 0, 20_000_000, 0, 5_000_000])
    scenario = Scenario(leaf_spine(4, 2, 2), flows, preset("hp"), telemetry=Telemetry.off(),
                        wormhole=WormholeConfig(memo=str(tmp_path / "memo.sqlite")))  # fmt: skip
    real, queued = FastForward.unqueued, []

    def checked(self, flows):
        ours = real(self, flows)
        every = unqueued_bytes(self.state, flows, np.arange(len(self.state.pt)))
        assert ours.tolist() == every.tolist()
        queued.append((self.state.fw[self.state.fl[flows, L.FL_SLOT], L.FW_SND_NXT] - ours).sum())
        return ours

    monkeypatch.setattr(FastForward, "unqueued", checked)
    Simulation(scenario, mode="wormhole").run()
    assert len(queued) > 2 and max(queued) > 0


def three_flows(paths, goodput, cycled=(0, 0, 0)):
    """An engine state of three flows with these data paths (port lists) and goodputs (bytes/ps), ports of 100 Gb/s;
    flow f holds slot 2 - f (slots are not flow ids)."""
    fl = np.zeros((3, L.FL_N), dtype=np.int64)
    fw = np.zeros((3, L.FW_N), dtype=np.int64)
    ff = np.zeros((3, L.FF_N))
    fl[:, L.FL_PATH_BEGIN] = np.cumsum([0] + [len(p) for p in paths[:-1]])
    fl[:, L.FL_PATH_LEN] = [len(p) for p in paths]
    fl[:, L.FL_SLOT] = [2, 1, 0]
    fw[::-1, L.FW_CYC_STEADY] = cycled
    ff[::-1, L.FF_GOODPUT] = goodput
    pt = np.zeros((8, L.PT_N), dtype=np.int64)
    pt[:, L.PT_RATE] = 100_000_000_000
    return fl, ff, fw, pt, np.concatenate([np.array(p) for p in paths]).astype(np.int64)


def disagree(paths, goodput, cycled=(0, 0, 0), theta=0.05, resolution=0.0):
    fl, ff, fw, pt, path_ports = three_flows(paths, goodput, cycled)
    scratch = np.zeros(8), np.zeros(8), np.zeros(8, dtype=np.int64), np.zeros(8, dtype=np.int64)
    touched = np.zeros(8, dtype=np.int64)
    flows = np.arange(3)
    found = _shares_disagree(fl, ff, fw, pt, path_ports, flows, theta, 1048, 1000, resolution, *scratch, touched)
    assert not scratch[2].any()  # the per-port counts are left at 0 for the next call
    return found


def test_shares_disagree_on_a_full_port_unless_the_slower_flow_is_held_elsewhere_or_all_are_cycle_steady():
    line = 100e9 / 8e12 * 1000 / 1048  # goodput (bytes/ps) that fills a 100 Gb/s port with 1,000-byte packets
    # flows 0 and 1 share port 2, full at 0.7 + 0.3 of its line rate; flow 2 is alone on ports 5, 6
    assert disagree([[1, 2], [3, 2], [5, 6]], [0.7 * line, 0.3 * line, line])
    assert not disagree([[1, 2], [3, 2], [5, 6]], [0.5 * line, 0.5 * line, line])  # equal shares
    assert not disagree([[1, 2], [3, 2], [5, 6]], [0.5 * line, 0.3 * line, line])  # port 2 is not full
    # flow 1 also crosses port 6, full with flow 2: that port holds it back, not port 2's share
    assert not disagree([[1, 2], [3, 2, 6], [5, 6]], [0.7 * line, 0.3 * line, 0.7 * line])
    assert not disagree([[1, 2], [3, 2], [5, 6]], [0.7 * line, 0.3 * line, line], cycled=(1, 1, 0))


def test_skips_taken_at_one_stop_shift_in_one_pass_as_they_would_one_by_one(monkeypatch):
    """Four 2-flow incasts on disjoint hosts start together and qualify together: their skips share passes over
    the pending events, and the FCTs are those of shifting each partition alone."""
    flows = make_flows([1, 2, 4, 5, 7, 8, 10, 11], [0, 0, 3, 3, 6, 6, 9, 9], [20_000_000] * 8, 0)
    scenario = Scenario(leaf_spine(4, 2, 3), flows, preset("hp"), telemetry=Telemetry.off())
    passes = []
    real = fastforward.offset_partitions
    monkeypatch.setattr(fastforward, "offset_partitions", lambda *a: passes.append(a) or real(*a))
    batched = Simulation(scenario, mode="wormhole").run()
    assert batched.attrs["skips"] > len(passes) > 0
    monkeypatch.setattr(fastforward.FastForward, "batched", lambda self: contextlib.nullcontext())
    alone = Simulation(scenario, mode="wormhole").run()
    assert alone.attrs["skips"] == batched.attrs["skips"]
    assert np.array_equal(alone["fct"].values, batched["fct"].values)
