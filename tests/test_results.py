"""What the results derive from the flow table: a phase's busy time is the length of its flows' union; each flow's
delivery time."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.state import ACK_WIRE_BYTES
from wormhole_lab.results import busy_time_ps
from wormhole_lab.simulation import Scenario, Simulation, UnfinishedFlowsWarning
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows


@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 30)), max_size=30))
def test_busy_time_is_the_length_of_the_union_of_the_intervals(intervals):
    starts = np.array([s for s, _ in intervals], dtype=np.int64)
    ends = np.array([s + length for s, length in intervals], dtype=np.int64)
    covered = np.zeros(231, dtype=bool)
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        covered[s:e] = True
    assert busy_time_ps(starts, ends) == covered.sum()


RATE, DELAY = 100 * 10**9, 1_000_000  # star's 100 Gb/s host links, 1 us each
# the last byte's ACK back over two unqueued hops: 60 B at 100 Gb/s (4.8 ns, truncated to the 1 ns clock) + 1 us each
ACK_RETURN = 2 * ((ACK_WIRE_BYTES * 8 * 10**12 // RATE) // 1000 * 1000 + DELAY)


def single_flow(mode: str, stop_time_ps: int = 0):
    flows = make_flows([0], [1], [100_000], 3_000_000)
    cfg = preset("dcqcn").with_(stop_time_ps=stop_time_ps) if stop_time_ps else preset("dcqcn")
    topo = star(2, host_rate_bps=RATE, host_delay_ps=DELAY)
    return Simulation(Scenario(topo, flows, cfg, telemetry=Telemetry.off()), mode=mode).run()


@pytest.mark.parametrize("mode", ["packet", "flow"])
def test_delivery_time_is_the_fct_less_the_acks_way_back(mode):
    """A flow alone: its last byte arrives the ACK's unqueued way back (2 x (4 ns + 1 us)) before the FCT ends, to
    the ps in both modes; relative to the start, as ``fct`` is."""
    assert ACK_RETURN == 2_008_000
    ds = single_flow(mode)
    assert ds["start"][0] == 3_000_000
    assert ds["delivery_time"][0] == ds["fct"][0] - ACK_RETURN
    assert ds["delivery_time"].attrs["units"] == "ps"


@pytest.mark.parametrize("mode", ["packet", "flow"])
def test_delivery_time_of_a_flow_stopped_before_or_after_its_last_byte_arrived(mode):
    """Stopped between the last byte's arrival and its ACK's: delivered, not completed. Stopped before the arrival
    (in flow mode: after the drain that fixes it, before the time it names): -1, as fct."""
    done = single_flow(mode)
    arrival = int(done["start"][0] + done["delivery_time"][0])
    with pytest.warns(UnfinishedFlowsWarning):
        between = single_flow(mode, stop_time_ps=arrival + ACK_RETURN // 2)
    assert between["fct"][0] == -1 and between["delivery_time"][0] == done["delivery_time"][0]
    with pytest.warns(UnfinishedFlowsWarning):
        before = single_flow(mode, stop_time_ps=arrival - 1)
    assert before["fct"][0] == -1 and before["delivery_time"][0] == -1
