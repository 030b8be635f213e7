"""Telemetry and steady-test samplers skip idle time: no events, no rows while nothing is in flight; a sampling
window (start, end) and samples through idle time when asked for."""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

TWO_S = 2 * 10**12
GAP = 3 * 10**9  # 3 ms of compute between two flows


def run(flows, mode="packet", telemetry=None):
    scenario = Scenario(star(3), flows, preset("hp"), telemetry=telemetry or Telemetry())
    return Simulation(scenario, mode=mode).run()


@pytest.mark.parametrize("mode", ["packet", "wormhole"])
def test_a_flow_at_two_seconds_costs_no_more_events_than_at_zero(mode):
    early = run(make_flows([0], [1], [200_000], 0), mode)
    late = run(make_flows([0], [1], [200_000], TWO_S), mode)
    assert late["fct"].item() == early["fct"].item()
    assert late.attrs["events_executed"] <= early.attrs["events_executed"]
    assert late.sizes["time"] == early.sizes["time"]
    assert late["time"].values[0] == TWO_S


def test_a_compute_gap_makes_no_samples_and_rates_stay_true_after_it():
    flows = make_flows([0, 1], [1, 2], [100_000, 100_000], 0, deps=[(), (0,)], gap_ps=[0, GAP])
    ds = run(flows)
    times = ds["time"].values
    second_start = ds["start"].values[1]
    assert second_start == ds["start"].values[0] + ds["fct"].values[0] + GAP
    gap_rows = (times > second_start - GAP + 10**6) & (times < second_start)
    assert not gap_rows.any()
    assert len(times) < 2 * (ds["fct"].values.sum() // 10**6) + 10
    # the first port rate after the gap is what one interval of sending gives, not diluted by the gap
    rates = ds["port_tx_rate"].values
    after = np.flatnonzero(times > second_start)[1]
    assert rates[after].max() > 50e9


def test_samples_through_idle_time_when_asked_for_and_within_a_window():
    flows = make_flows([0], [1], [100_000], 10**8)  # starts at 100 us
    every = run(flows, telemetry=Telemetry(idle_samples=True))
    assert every["time"].values[0] == 0 and np.all(np.diff(every["time"].values) == 10**6)
    window = run(flows, telemetry=Telemetry(idle_samples=True, start_ps=5 * 10**7, end_ps=5 * 10**8))
    times = window["time"].values
    # the reference's monitor semantics: from the start, every interval, past the flows' end, to the window's end
    assert times[0] == 5 * 10**7 and times[-1] == 5 * 10**8 and len(times) == 451


def test_a_finished_flow_reads_its_size_acknowledged_and_nothing_in_flight_after_its_slot_is_gone():
    """A flow's sending state lives in its slot only while it sends; the samples after its end come from its row:
    its size acknowledged, nothing in flight, no rate. The flow sharing its NIC goes on sending meanwhile."""
    ds = run(make_flows([0, 0], [1, 2], [60_000, 600_000], [0, 0]))
    times, end = ds["time"].values, ds["start"].values + ds["fct"].values
    after = times > end[0]
    assert after.sum() > 5 and (times[after] < end[1]).any()
    acked, inflight = ds["flow_acked"].values, ds["flow_inflight"].values
    assert (acked[after, 0] == 60_000).all() and (inflight[after, 0] == 0).all()
    assert np.isnan(ds["flow_rate"].values[after, 0]).all()
    sending = after & (times < end[1])
    assert (acked[sending, 1] < 600_000).all() and (inflight[sending, 1] > 0).any()
