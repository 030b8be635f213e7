"""In-band telemetry, hop by hop on a 3-switch path, against the engine's own counters and a hand timeline."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.runner import advance
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import leaf_spine
from wormhole_lab.workload.flows import make_flows

WIRE = 1090  # HPCC data frame: 1000 B payload + 48 B headers (14 B PPP) + 42 B INT
SER_NS, DELAY_NS = 87, 1000  # 1090 B at 100 Gb/s: 87.2 ns, truncated to 87 ns; 1 us links


def test_int_records_time_bytes_queue_and_rate_at_each_hop():
    topo = leaf_spine(2, 1, 1)  # host 0 - leaf - spine - leaf - host 1
    cfg = preset("hp")
    state = prepare(Scenario(topo, make_flows([0], [1], [200_000], 0), cfg, telemetry=Telemetry.off())).state
    advance(state, 3_500_000)  # inside the first RTT: packets at line rate on every hop, no queue
    multi = cfg.int_multi
    events = wheel.pending(state.events)
    in_flight = events[events[:, L.E_KIND] == L.EV_ARRIVE, L.E_A]
    checked_hops = 0
    last_sent = {}
    for k in in_flight:
        if state.pk[k, L.PK_KIND] != L.KIND_DATA:
            continue
        i = state.pk[k, L.PK_SEQ] // 1000
        nhop = state.pk[k, L.PK_INT_NHOP]
        for j in range(nhop):
            base = L.PK_INT_BASE + j * L.INT_FIELDS
            assert state.pk[k, base + L.INT_TIME] == i * SER_NS + (j + 1) * (SER_NS + DELAY_NS)
            assert state.pk[k, base + L.INT_BYTES] == (i * WIRE) // (128 * multi)
            assert state.pk[k, base + L.INT_QLEN] == 0
            assert state.pk[k, base + L.INT_RATE] == 100 * 10**9
            checked_hops += 1
        port = state.pk[k, L.PK_PORT]
        if nhop and state.pt[port, L.PT_IS_SWITCH] and (port not in last_sent or i > last_sent[port][0]):
            last_sent[port] = (i, k)
    assert checked_hops > 20 and len(last_sent) == 3
    for port, (_, k) in last_sent.items():  # the newest packet on each switch port saw that port's own counter
        base = L.PK_INT_BASE + (state.pk[k, L.PK_INT_NHOP] - 1) * L.INT_FIELDS
        bytes_before = state.pt[port, L.PT_TX_BYTES] - WIRE
        assert state.pk[k, base + L.INT_BYTES] == bytes_before // (128 * multi)
        assert state.pk[k, base + L.INT_QLEN] == state.pt[port, L.PT_DATA_BYTES] // (80 * multi)
    assert np.all(state.pk[in_flight, L.PK_INT_NHOP] <= 3)
