"""FastForward's index of the known starts (the interrupts a skip must stop at) is built only for runs that skip;
what a memo jump credits counts out the data a partition's queues hold."""

from types import SimpleNamespace

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import leaf_spine, star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.fastforward import unqueued_bytes


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


def test_unqueued_bytes_leave_out_the_data_in_the_given_ports_queues_only():
    """Port 0 queues data of flows 7 and 3 and an ACK of flow 7; port 1 data of flows 3 and 9 (9 is not asked for);
    port 2 is not asked for."""
    queues = {0: [(7, L.KIND_DATA, 1000), (3, L.KIND_DATA, 500), (7, L.KIND_ACK, 0)], 1: [(3, L.KIND_DATA, 1000),
              (9, L.KIND_DATA, 1000)], 2: [(7, L.KIND_DATA, 1000)]}  # fmt: skip
    pk = np.zeros((8, L.PK_N), dtype=np.int64)
    pt = np.full((3, L.PT_N), -1, dtype=np.int64)
    k = 0
    for port, packets in queues.items():
        pt[port, L.PT_DATA_HEAD] = k
        for i, (flow, kind, payload) in enumerate(packets):
            pk[k, [L.PK_FLOW, L.PK_KIND, L.PK_PAYLOAD]] = flow, kind, payload
            pk[k, L.PK_NEXT] = k + 1 if i + 1 < len(packets) else -1
            k += 1
    fl = np.zeros((10, L.FL_N), dtype=np.int64)
    fl[[3, 7], L.FL_SND_NXT] = 10_000, 20_000
    state = SimpleNamespace(pt=pt, pk=pk, fl=fl)
    assert unqueued_bytes(state, np.array([3, 7]), [1, 0]).tolist() == [8_500, 19_000]
