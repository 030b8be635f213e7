"""Invariant-checking mode: the bookkeeping holds on real runs, and a broken state is caught with its place."""

import numpy as np
import pytest

from wormhole_lab.engine import invariants
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.runner import advance
from wormhole_lab.errors import InvariantError
from wormhole_lab.simulation import Scenario, Simulation, UnfinishedFlowsWarning, prepare
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows


def incast(**changes):
    flows = make_flows([1, 2, 3, 4], [0] * 4, [300_000] * 4, 0)
    return Scenario(star(5), flows, preset("dcqcn").with_(**changes), check_invariants=True)


@pytest.mark.parametrize("mode", ["packet", "wormhole"])
@pytest.mark.parametrize("changes", [{}, {"buffer_bytes": 400_000}, {"pfc": False, "buffer_bytes": 400_000}])
def test_invariants_hold_on_real_runs(mode, changes):
    ds = Simulation(incast(**changes), mode=mode).run()
    assert (ds["completed"] == 1).all() and (ds["unfinished_reason"] == "").all()
    if changes.get("pfc") is False:
        assert ds.attrs["drops"] > 0  # the lossy case really was exercised


def test_a_lost_packet_is_reported_with_its_flow():
    state = prepare(incast()).state
    advance(state, 20_000_000)
    state.fl[2, L.FL_PKTS_SENT] += 1
    with pytest.raises(InvariantError, match="flow 2: .* data packets sent"):
        invariants.check(state, pfc=True)


def test_broken_buffer_accounting_is_reported_with_its_switch():
    state = prepare(incast()).state
    advance(state, 20_000_000)
    state.nd[5, L.ND_SHARED_USED] += 1000
    with pytest.raises(InvariantError, match="switch 5: shared-buffer use"):
        invariants.check(state, pfc=True)


def test_a_paused_port_that_transmits_is_caught_by_the_kernel():
    scenario = incast()
    state = prepare(scenario).state
    state.ci[L.CI_CHECK] = 1
    host_port = int(np.flatnonzero(state.pt[:, L.PT_NODE] == 1)[0])
    state.pt[host_port, L.PT_PAUSED] = 1  # paused, yet nothing stops this test from forcing a send below
    advance(state, 5_000_000)
    assert state.g[L.G_VIOLATION] == 0  # the NIC honours the pause
    state.pt[host_port, L.PT_PAUSED] = 0
    advance(state, 6_000_000)
    state.pt[host_port, L.PT_PAUSED] = 1
    from wormhole_lab.engine.port import transmit

    k = int(state.g[L.G_FREE_HEAD])
    state.pk[k, L.PK_KIND] = L.KIND_DATA
    transmit(state.g, state.events, state.pk, state.pt, state.ci, host_port, k, int(state.g[L.G_NOW]))
    with pytest.raises(InvariantError, match=f"port {host_port} sent a data-class frame while PFC-paused"):
        invariants.check(state, pfc=True)


def test_unfinished_flows_say_why():
    flows = make_flows([1, 2], [0, 0], [5_000_000, 1000], [0, 10**12], deps=[(), ()])
    with pytest.warns(UnfinishedFlowsWarning, match="2 of 2 flows did not finish"):
        ds = Simulation(Scenario(star(3), flows, preset("dcqcn").with_(stop_time_ps=50_000_000))).run()
    reasons = list(ds["unfinished_reason"].values)
    assert reasons == ["still sending when the run stopped", "its start time lies after the run stopped"]
