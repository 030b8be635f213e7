"""Switch ports' idle TX_DONEs not queued (CI_MERGE_TX_DONE) change nothing a run shows, only its event count."""

import functools

import pytest
import xarray as xr

from wormhole_lab import simulation
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import build_state
from wormhole_lab.results import pfc_lines
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.topology.builders import fat_tree, star
from wormhole_lab.workload.flows import make_flows


def _incast(cca, **changes):
    flows = make_flows(list(range(1, 9)), [0] * 8, [400_000] * 8, 0)
    return Scenario(star(9), flows, preset(cca).with_(**changes), check_invariants=True)


def _fat_tree_mix():
    """Every host of a k=4 fat tree sends to the host 5 along, plus a 3-to-1 incast across pods."""
    src = list(range(16)) + [1, 6, 11]
    dst = [(h + 5) % 16 for h in range(16)] + [12, 12, 12]
    sizes = [200_000] * 16 + [600_000] * 3
    return Scenario(fat_tree(4), make_flows(src, dst, sizes, 0), preset("dcqcn"), check_invariants=True)


def _lone_flows():
    """Two HPCC flows that share no link: steady at line rate, so Wormhole mode fast-forwards (and audits) them."""
    flows = make_flows([0, 2], [1, 3], [20_000_000, 10_000_000], 0)
    return Scenario(star(4), flows, preset("hp"), check_invariants=True)


SCENARIOS = {
    "pfc pauses": lambda: _incast("dcqcn", buffer_bytes=400_000),
    "drops": lambda: _incast("dcqcn", pfc=False, buffer_bytes=400_000),
    "hpcc": lambda: _incast("hp"),
    "fat tree": _fat_tree_mix,
    "fast-forwarded": _lone_flows,
}


EVENT_COUNTS_AND_TIMINGS = {
    "events_executed",
    "events_total_estimate",
    "wall_seconds",
    "compile_seconds",
    "setup_seconds",
    "audit_seconds",
}


def _run(scenario, mode, merge, monkeypatch):
    monkeypatch.setattr(simulation, "build_state", functools.partial(build_state, merge_tx_done=merge))
    return Simulation(scenario, mode=mode, audit=2 if mode == "wormhole" else None).run()


@pytest.mark.parametrize("mode", ["packet", "wormhole"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_merging_idle_tx_done_changes_no_result(name, mode, monkeypatch):
    scenario = SCENARIOS[name]()  # with the default telemetry: the sampler sees the same state at each sample
    off = _run(scenario, mode, False, monkeypatch)
    on = _run(scenario, mode, True, monkeypatch)
    assert (off["completed"] == 1).all()
    differ = {k for k in off.attrs if on.attrs.get(k) != off.attrs[k]}
    assert differ <= EVENT_COUNTS_AND_TIMINGS  # ECN marks, drops, PFC frames, the audit's errors... are equal
    assert pfc_lines(on) == pfc_lines(off)
    xr.testing.assert_identical(on.drop_attrs(), off.drop_attrs())
    assert on.attrs["events_executed"] < off.attrs["events_executed"]  # merging really happened
    if name == "pfc pauses":
        assert off.attrs["pfc_frames"] > 0
    if name == "drops":
        assert off.attrs["drops"] > 0
    if name == "fast-forwarded" and mode == "wormhole":
        assert off.attrs["events_skipped_estimate"] > 0 and off.attrs["audit_fastforwards"] > 0
