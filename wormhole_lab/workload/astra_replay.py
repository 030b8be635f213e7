"""ASTRA-sim's congestion-unaware timing of a Chakra run's flows, and each rank's times from any flow timing.

``analytical_delivery`` gives every flow the delivery time ASTRA-sim's analytical backend would: it starts when
its dependencies are delivered plus its gap, and takes ``message_ns`` (hops x latency + bytes / bandwidth,
truncated, no contention). On the sample traces this reproduces ASTRA-sim's printed cycles exactly (tested), so
the flows carry ASTRA-sim's semantics and what a packet-level run adds is the network's.

``rank_times`` turns per-flow delivery times (analytical, or from a packet-level run) into each rank's finish
time and the time its collectives, sends/receives and compute nodes span.
"""

from collections.abc import Callable

import numpy as np

from wormhole_lab.workload.astra_collectives import Token
from wormhole_lab.workload.chakra_flows import ChakraLayout
from wormhole_lab.workload.flows import FlowTable

__all__ = ["analytical_delivery", "rank_times", "token_ps"]


def analytical_delivery(flows: FlowTable, message_ns: Callable[[int, int, int], int]) -> np.ndarray:
    """int64 ps per flow: when its last byte arrives under ASTRA-sim's analytical model, ``message_ns(src rank,
    dst rank, bytes)`` per message. Flows must come after their dependencies (as ``chakra_flows`` emits them)."""
    layout: ChakraLayout = flows.meta["chakra"]
    rank_of = {h: r for r, h in enumerate(layout.hosts)}
    src, dst, size = flows.src.tolist(), flows.dst.tolist(), flows.size.tolist()
    offset, ids, gap, start = flows.dep_offset.tolist(), flows.dep_ids.tolist(), flows.gap_ps.tolist(), flows.start_ps
    edge_gap = [0] * len(ids) if flows.dep_gap_ps is None else flows.dep_gap_ps.tolist()
    delivered = [0] * len(flows)
    for i in range(len(flows)):
        edges = range(offset[i], offset[i + 1])
        begin = int(start[i])
        if edges:
            begin = max(begin, max(delivered[ids[e]] + edge_gap[e] for e in edges) + gap[i])
        delivered[i] = begin + 1000 * message_ns(rank_of[src[i]], rank_of[dst[i]], size[i])
    return np.asarray(delivered, dtype=np.int64)


def token_ps(token: Token, delivered: np.ndarray) -> int:
    """When ``token`` is done, given each flow's delivery time (-1: not delivered, so neither is the token)."""
    latest = token.floor_ps
    for flow, delay in token.waits:
        if delivered[flow] < 0:
            return -1
        latest = max(latest, int(delivered[flow]) + delay)
    return latest


def rank_times(layout: ChakraLayout, delivered: np.ndarray) -> dict[str, np.ndarray]:
    """Per rank (int64 ns, -1 where a flow never arrived): ``finish`` (ASTRA-sim's "sys[i] finished, N cycles"),
    ``exposed_comm`` (finish minus the compute it replays, as ASTRA-sim prints), and the time spanned by its
    collectives (``collective``), sends and receives (``p2p``) and compute nodes (``compute``), summed over
    nodes."""
    n = layout.n_ranks
    out = {name: np.zeros(n, dtype=np.int64) for name in ("finish", "collective", "p2p", "compute")}
    for r in range(n):
        ends = [token_ps(t, delivered) for t in layout.rank_ends[r]]
        out["finish"][r] = -1 if min(ends, default=0) < 0 else max(ends, default=0) // 1000
    bucket = {"coll": "collective", "send": "p2p", "recv": "p2p", "comp": "compute"}
    for span in layout.spans:
        name = bucket.get(span.kind)
        if name is None or out[name][span.rank] < 0:
            continue
        start, end = token_ps(span.start, delivered), token_ps(span.end, delivered)
        out[name][span.rank] = -1 if min(start, end) < 0 else out[name][span.rank] + (end - start) // 1000
    compute = np.asarray(layout.compute_ns, dtype=np.int64)
    out["exposed_comm"] = np.where(out["finish"] >= 0, out["finish"] - compute, -1)
    return out
