"""What a flow has sent that is out of the network's queues: the bytes a memo DB entry stores for a transient, and
what a memo hit credits (``unqueued_bytes``)."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.state import slots_of


def unqueued_bytes(state, flows: np.ndarray, ports) -> np.ndarray:
    """Per flow of ``flows`` (ascending ids), the bytes it sent less those of its packets waiting in the data queues
    of ``ports``.

    A jump (memo hit) credits the change of this over the stretch it skips. It carries the packets in flight at
    its start along and leaves the queues as they were then, so what the stretch put into queues is not there
    after it. Crediting all that was sent instead left a flow the queued bytes ahead of packet mode (TIMELY,
    2 x 700 kB into one host: every hit 48 % early); crediting what was acknowledged left it the pipe behind
    (DCTCP, 2 x 700 kB: 3.5 % late; an MoE all-to-all under HPCC: 1.3 % late).
    """
    queued = np.zeros(len(flows), dtype=np.int64)
    _queued_payload(state.pt, state.pk, np.asarray(ports, dtype=np.int64), flows, queued)
    return state.fw[slots_of(state.fl, flows), L.FW_SND_NXT] - queued


@kernel
def queued_on_paths(fl, pt, pk, path_ports, flows, seen, touched, queued):
    """``_queued_payload`` over the queues of the data paths of ``flows`` (ascending), every queue where their data
    can wait (``seen``: per port scratch, 0 on entry and exit; ``touched``: room for the ports)."""
    n = 0
    for f in flows:
        for i in range(fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_BEGIN] + fl[f, L.FL_PATH_LEN]):
            p = path_ports[i]
            if seen[p] == 0:
                seen[p] = 1
                touched[n] = p
                n += 1
    _queued_payload(pt, pk, touched[:n], flows, queued)
    for k in range(n):
        seen[touched[k]] = 0


@kernel
def _queued_payload(pt, pk, ports, flows, queued):
    """``queued[i]``: the payload of the data packets of ``flows[i]`` (ascending) in the data queues of ``ports``
    (walked in Python, a partition's queues cost more than the rest of a memo lookup that missed)."""
    for p in ports:
        k = pt[p, L.PT_DATA_HEAD]
        while k >= 0:
            if pk[k, L.PK_KIND] == L.KIND_DATA:
                f = pk[k, L.PK_FLOW]
                lo, hi = 0, len(flows)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if flows[mid] < f:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < len(flows) and flows[lo] == f:
                    queued[lo] += pk[k, L.PK_PAYLOAD]
            k = pk[k, L.PK_NEXT]
