"""Switch egress: strict-priority control queue, then the data class unless PFC-paused.

At dequeue the packet leaves the shared buffer, is ECN-marked on the bytes still queued,
and its ingress port may owe the upstream a PFC resume (switch-node.cc SwitchNotifyDequeue).
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_ECN,
    CI_PFC,
    CI_PFC_WIRE,
    G_ECN_MARKS,
    KIND_DATA,
    KIND_PFC,
    PK_ECN,
    PK_INPORT,
    PK_KIND,
    PK_PAUSE,
    PK_WIRE,
    PT_CTRL_HEAD,
    PT_DATA_BYTES,
    PT_DATA_HEAD,
    PT_ECN_MARKS,
    PT_NODE,
    PT_PAUSED,
    PT_PAUSING,
)
from wormhole_lab.engine.mmu import ecn_mark, release, should_resume
from wormhole_lab.engine.packets import alloc, fifo_pop, fifo_push


@kernel
def send_pfc(g, pk, pt, ci, port, pause):
    """Queue a PFC frame on ``port`` (towards the upstream device) in the strict-priority queue."""
    k = alloc(g, pk)
    pk[k, PK_KIND] = KIND_PFC
    pk[k, PK_PAUSE] = pause
    pk[k, PK_WIRE] = ci[CI_PFC_WIRE]
    fifo_push(pt, pk, port, PT_CTRL_HEAD, k)
    pt[port, PT_PAUSING] = pause


@kernel
def select_packet(g, pk, pt, ptf, nd, ci, rng, port):
    """(packet to send or -1, ingress port that just queued a PFC resume or -1)."""
    k = fifo_pop(pt, pk, port, PT_CTRL_HEAD)
    if k >= 0 or pt[port, PT_PAUSED]:
        return k, -1
    k = fifo_pop(pt, pk, port, PT_DATA_HEAD)
    if k < 0:
        return k, -1
    wire = pk[k, PK_WIRE]
    node = pt[port, PT_NODE]
    inport = pk[k, PK_INPORT]
    release(nd, pt, ci, node, inport, wire)
    pt[port, PT_DATA_BYTES] -= wire
    # ACKs are marked too in the reference, but a mark on an ACK has no effect, so no draw is spent on it
    if ci[CI_ECN] and pk[k, PK_KIND] == KIND_DATA and ecn_mark(pt, ptf, rng, port, pt[port, PT_DATA_BYTES]):
        pk[k, PK_ECN] = 1
        pt[port, PT_ECN_MARKS] += 1
        g[G_ECN_MARKS] += 1
    if ci[CI_PFC] and should_resume(nd, pt, ci, node, inport):
        send_pfc(g, pk, pt, ci, inport, 0)
        return k, inport
    return k, -1
