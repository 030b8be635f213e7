"""Max-min shares on small graphs whose answer is known in closed form."""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.timing import serialisation_ps
from wormhole_lab.flowlevel.run import FlowLevel
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import make_flows

G100, G400 = 100 * 10**9, 400 * 10**9
WIRE = 1048  # a full DCQCN packet: 1000 B payload + 48 B of headers


def capacity(rate_bps: int) -> float:
    """Wire bytes per ps of a port in full packets (serialisation truncated to 1 ns, as the engine does)."""
    return WIRE / serialisation_ps(WIRE, rate_bps, 1000)


def topology(n_hosts: int, links: list[tuple[int, int, int]]) -> Topology:
    """Hosts 0..n_hosts-1 first, then switches; ``links`` are (a, b, rate), 1 us each."""
    nodes = 1 + max(max(a, b) for a, b, _ in links)
    arr = np.array(links, dtype=np.int64)
    return Topology(
        is_switch=np.arange(nodes) >= n_hosts,
        link_a=arr[:, 0],
        link_b=arr[:, 1],
        link_rate_bps=arr[:, 2],
        link_delay_ps=np.full(len(links), 10**6, dtype=np.int64),
        link_error_rate=np.zeros(len(links)),
    )


def rates_at_start(topo: Topology, src, dst) -> np.ndarray:
    """Every flow starts at t=0 with 10 MB to send: the rates water-filling gives them at that instant."""
    flows = make_flows(src, dst, [10_000_000] * len(src), 0)
    run = FlowLevel(prepare(Scenario(topo, flows, preset("dcqcn"), telemetry=Telemetry.off())).state)
    assert run.advance(0) == "time"
    return run.tables.rate.copy()


def test_parking_lot():
    """Switches 10-11-12-13 in a line of three 100G links. One long flow crosses all three; link 0 and link 2
    carry one short flow each, link 1 two: link 1 is the bottleneck of four flows (a third each), and the short
    flows of links 0 and 2 take what the long flow leaves (two thirds)."""
    hosts = [(h, 10 + s) for h, s in enumerate([0, 3, 0, 1, 1, 2, 1, 2, 2, 3])]
    links = [(h, s, G400) for h, s in hosts] + [(10, 11, G100), (11, 12, G100), (12, 13, G100)]
    src = [0, 2, 4, 6, 8]  # long (switch 10 -> 13), link 0, link 1 twice, link 2
    dst = [1, 3, 5, 7, 9]
    rates = rates_at_start(topology(10, links), src, dst) / capacity(G100)
    assert rates == pytest.approx([1 / 3, 2 / 3, 1 / 3, 1 / 3, 2 / 3], rel=1e-12)


def test_dumbbell_with_unequal_access_links():
    """A 400G bottleneck between two switches. Flow 0's sender has a 100G access link, flows 1 and 2 have 400G:
    flow 0 is held to its access link and the other two split what it leaves of the bottleneck."""
    left, right = 6, 7
    links = [(0, left, G100), (1, left, G400), (2, left, G400), (3, right, G400), (4, right, G400), (5, right, G400)]
    links.append((left, right, G400))
    rates = rates_at_start(topology(6, links), [0, 1, 2], [3, 4, 5])
    rest = (capacity(G400) - capacity(G100)) / 2
    assert rates == pytest.approx([capacity(G100), rest, rest], rel=1e-12)
    assert rates[0] < rates[1]
