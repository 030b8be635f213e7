"""A two-host scenario built by hand, used to compile (or load) every kernel before timed work."""

from types import SimpleNamespace

import numpy as np

from wormhole_lab.engine.config import EngineConfig
from wormhole_lab.engine.state import EngineState, build_state
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import make_flows

_RATE = 100 * 10**9


def tiny_state(cca: str = "dcqcn") -> EngineState:
    """Host 0 -> switch 2 -> host 1, one 20 kB flow, small thresholds so ECN and CNPs are exercised."""
    topo = Topology(
        is_switch=np.array([False, False, True]),
        link_a=np.array([0, 1]),
        link_b=np.array([2, 2]),
        link_rate_bps=np.array([_RATE, _RATE]),
        link_delay_ps=np.array([10**6, 10**6]),
        link_error_rate=np.zeros(2),
    )
    flows = make_flows([0], [1], [20_000], [0])
    paths = SimpleNamespace(
        data_offset=np.array([0, 2]),
        data_ports=np.array([0, 3]),
        ack_offset=np.array([0, 2]),
        ack_ports=np.array([2, 1]),
    )
    cfg = EngineConfig(cca=cca, kmin_bytes={_RATE: 0}, kmax_bytes={_RATE: 1}, pmax={_RATE: 1.0}, has_win=True)
    return build_state(topo, flows, paths, cfg, np.full(1, 20_000, dtype=np.int64), np.full(1, 4160, dtype=np.int64))
