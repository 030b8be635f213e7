"""Invariant checks on the engine state, run at every stop when ``Scenario(check_invariants=True)``.

The kernel itself catches what only it can see (an event earlier than the clock, a data frame leaving a
paused port); here the bookkeeping is cross-checked: packets per flow, shared-buffer accounting, drops.
"""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel
from wormhole_lab.engine.state import MMU_RESERVE_BYTES, EngineState
from wormhole_lab.errors import InvariantError

_KERNEL_VIOLATIONS = {
    L.VIOLATION_TIME_BACKWARDS: "an event ran earlier than the clock (event kind {where})",
    L.VIOLATION_PAUSED_TRANSMIT: "port {where} sent a data-class frame while PFC-paused",
}


def packets_in_flight(state: EngineState) -> np.ndarray:
    """Data packets per flow that are queued at a port or travelling on a link."""
    events = wheel.pending(state.events)
    ids = [events[events[:, L.E_KIND] == L.EV_ARRIVE, L.E_A]]
    for p in range(state.pt.shape[0]):
        for head in (L.PT_CTRL_HEAD, L.PT_DATA_HEAD):
            k, queued = state.pt[p, head], []
            while k >= 0:
                queued.append(k)
                k = state.pk[k, L.PK_NEXT]
            ids.append(np.asarray(queued, dtype=np.int64))
    packets = np.concatenate(ids)
    data = packets[state.pk[packets, L.PK_KIND] == L.KIND_DATA]
    return np.bincount(state.pk[data, L.PK_FLOW], minlength=state.fl.shape[0])


def check(state: EngineState, pfc: bool) -> None:
    """Raise InvariantError naming the time, the node or port, and the flow of the first violation."""
    g, fl, pt, nd = state.g, state.fl, state.pt, state.nd
    now = int(g[L.G_NOW])
    if g[L.G_VIOLATION]:
        text = _KERNEL_VIOLATIONS[int(g[L.G_VIOLATION])].format(where=int(g[L.G_VIOLATION_WHERE]))
        raise InvariantError(f"t={int(g[L.G_VIOLATION_AT])} ps: {text}")
    lost = fl[:, L.FL_PKTS_SENT] - fl[:, L.FL_PKTS_DELIVERED] - fl[:, L.FL_PKTS_DROPPED] - packets_in_flight(state)
    if np.any(lost):
        f = int(np.flatnonzero(lost)[0])
        raise InvariantError(
            f"t={now} ps, flow {f}: {int(fl[f, L.FL_PKTS_SENT])} data packets sent but "
            f"{int(fl[f, L.FL_PKTS_DELIVERED])} delivered, {int(fl[f, L.FL_PKTS_DROPPED])} dropped "
            f"and {int(fl[f, L.FL_PKTS_SENT] - lost[f])} accounted in all"
        )
    switch_port = pt[:, L.PT_IS_SWITCH] == 1
    nodes = pt[:, L.PT_NODE]
    over = np.where(switch_port, np.maximum(pt[:, L.PT_ING_BYTES] - MMU_RESERVE_BYTES, 0), 0)
    shared = np.bincount(nodes, weights=over, minlength=nd.shape[0]).astype(np.int64)
    held = np.bincount(
        nodes, weights=np.where(switch_port, pt[:, L.PT_ING_BYTES] + pt[:, L.PT_HDRM_BYTES], 0), minlength=nd.shape[0]
    ).astype(np.int64)
    queued = np.bincount(nodes, weights=np.where(switch_port, pt[:, L.PT_DATA_BYTES], 0), minlength=nd.shape[0]).astype(
        np.int64
    )
    for problem, bad in (
        ("shared-buffer use differs from its ingress ports' sum", shared != nd[:, L.ND_SHARED_USED]),
        ("bytes held at ingress differ from bytes queued at egress", held != queued),
    ):
        if np.any(bad & (nd[:, L.ND_IS_SWITCH] == 1)):
            node = int(np.flatnonzero(bad)[0])
            raise InvariantError(f"t={now} ps, switch {node}: {problem}")
    if pfc and g[L.G_DROPS]:
        raise InvariantError(f"t={now} ps: {int(g[L.G_DROPS])} packets dropped although PFC is on")
