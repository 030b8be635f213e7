"""An uncongested flow finishes in flow mode when it does in packet mode."""

import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree, star
from wormhole_lab.workload.flows import make_flows


@pytest.mark.parametrize("cca", ["dcqcn", "timely", "hp"])
@pytest.mark.parametrize("where", ["star", "fat_tree"])
def test_single_flow_matches_packet_mode(where, cca):
    """One packet, a short last packet after full ones, and 1 MB: within 0.5 % (the model is exact up to a ps
    of rounding when the CCA keeps line rate, as DCQCN and TIMELY do alone; HPCC sends its first window at line
    rate and then holds 95 % of it, 4.8 % slower at 1 MB, which flow mode models)."""
    topo, dst = (star(2), 1) if where == "star" else (fat_tree(4), 15)  # 15: in another pod, 6 hops
    sizes = [500, 4_500, 1_000_000]
    for size in sizes:
        scenario = Scenario(topo, make_flows([0], [dst], [size], 0), preset(cca), telemetry=Telemetry.off())
        packet, flow = Simulation(scenario).run(), Simulation(scenario, mode="flow").run()
        error = abs(flow["fct"].values[0] / packet["fct"].values[0] - 1)
        assert error < 0.005, f"{size} B: flow {flow['fct'].values[0]} ps, packet {packet['fct'].values[0]} ps"


def test_header_overhead_is_counted():
    """10 MB alone on a 100G star: 10 000 packets of 1048 B at 83 ns each (the engine's truncated serialisation,
    not 10 MB at 100 Gb/s), then the last packet's second hop and its ACK's two hops (60 B: 4 ns each)."""
    scenario = Scenario(star(2), make_flows([0], [1], [10_000_000], 0), preset("dcqcn"), telemetry=Telemetry.off())
    fct = int(Simulation(scenario, mode="flow").run()["fct"].values[0])
    assert fct == 10_000 * 83_000 + 1_000_000 + (83_000 + 1_000_000) + 2 * (4_000 + 1_000_000)
