"""Flow mode through Simulation: the packet mode's outputs, loud errors, no silent telemetry."""

import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.flowlevel.run import FlowLevel
from wormhole_lab.simulation import Scenario, Simulation, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows


def incast(telemetry=None) -> Scenario:
    flows = make_flows([1, 2, 3], [0, 0, 0], [100_000, 200_000, 300_000], 0, phase="dp")
    return Scenario(star(4), flows, preset("dcqcn"), telemetry=telemetry or Telemetry.off())


def test_same_flow_table_and_summary_as_packet_mode():
    packet, flow = Simulation(incast()).run(), Simulation(incast(), mode="flow").run()
    assert set(flow.data_vars) == set(packet.data_vars)
    for name in ("src", "dst", "size", "standalone_fct", "phase"):
        assert (flow[name].values == packet[name].values).all()
    assert flow.attrs["mode"] == "flow" and flow["completed"].values.all()
    assert flow.attrs["events_executed"] == 9  # three starts, drains and completions
    for key in ("iteration_time_ps", "dp_comm_time_ps", "dp_bytes", "wall_seconds", "rate_recomputations"):
        assert key in flow.attrs
    # max-min on one 100G port: the three share it until the smallest drains, then two, then one
    assert list(flow["completion_order"].values) == [0, 1, 2]


def test_telemetry_is_not_recorded_and_the_run_says_so():
    ds = Simulation(incast(Telemetry()), mode="flow").run()
    assert "port_queue" not in ds and "time" not in ds.dims
    assert ds.attrs["telemetry"].startswith("none")


def test_unknown_mode_names_the_choices():
    with pytest.raises(InputError, match="packet, wormhole, flow"):
        Simulation(incast(), mode="flows")


def test_a_state_that_ran_already_is_refused():
    state = prepare(incast()).state
    FlowLevel(state).advance(10**12)
    with pytest.raises(InputError, match="has run already"):
        FlowLevel(state)


@pytest.mark.parametrize(
    "damage, match",
    [
        (lambda s: s.path_ports.__setitem__(0, 10**6), "port id outside"),
        (lambda s: s.fl.__setitem__((1, L.FL_PATH_LEN), 0), "flow 1: its data path"),
        (lambda s: s.children.__setitem__(slice(None), 7), "children"),
        (lambda s: s.pt.__setitem__((0, L.PT_RATE), 0), "rate <= 0"),
    ],
)
def test_damaged_arrays_are_refused_before_any_kernel(damage, match):
    flows = make_flows([1, 2], [0, 0], [1_000, 1_000], 0, deps=[(), (0,)])
    state = prepare(Scenario(star(3), flows, preset("dcqcn"), telemetry=Telemetry.off())).state
    damage(state)
    with pytest.raises(InputError, match=match):
        FlowLevel(state)
