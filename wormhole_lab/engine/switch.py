"""Switch egress: strict-priority control queue, then the data class unless PFC-paused.

At dequeue the packet leaves the shared buffer, is ECN-marked on the bytes still queued,
and its ingress port may owe the upstream a PFC resume (switch-node.cc SwitchNotifyDequeue).
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_ECN,
    CI_INT_MODE,
    CI_INT_MULTI,
    CI_PFC,
    CI_PFC_WIRE,
    FL_PATH_BEGIN,
    G_ECN_MARKS,
    INT_BYTE_UNIT,
    INT_BYTES,
    INT_BYTES_MASK,
    INT_FIELDS,
    INT_MAX_HOPS,
    INT_MODE_HOPS,
    INT_QLEN,
    INT_QLEN_MASK,
    INT_QLEN_UNIT,
    INT_RATE,
    INT_TIME,
    INT_TIME_MASK,
    KIND_DATA,
    KIND_PFC,
    PK_ECN,
    PK_FLOW,
    PK_HOP,
    PK_INPORT,
    PK_INT_BASE,
    PK_INT_NHOP,
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
    PT_RATE,
    PT_TX_BYTES,
)
from wormhole_lab.engine.mmu import ecn_mark, release, should_resume
from wormhole_lab.engine.packets import alloc, fifo_pop, fifo_push
from wormhole_lab.engine.rng import draws_like_reference, pfc_ip_id_draw


@kernel
def send_pfc(g, pk, pt, ci, rng, port, pause):
    """Queue a PFC frame on ``port`` (towards the upstream device) in the strict-priority queue."""
    pfc_ip_id_draw(rng)
    k = alloc(g, pk)
    pk[k, PK_KIND] = KIND_PFC
    pk[k, PK_PAUSE] = pause
    pk[k, PK_WIRE] = ci[CI_PFC_WIRE]
    fifo_push(pt, pk, port, PT_CTRL_HEAD, k)
    pt[port, PT_PAUSING] = pause


@kernel
def _push_int_hop(pk, pt, ci, port, k, now):
    """IntHeader::PushHop with the reference's field widths and units (wrapping like its bit fields)."""
    h = pk[k, PK_INT_NHOP] % INT_MAX_HOPS
    base = PK_INT_BASE + h * INT_FIELDS
    multi = ci[CI_INT_MULTI]
    pk[k, base + INT_TIME] = (now // 1000) & INT_TIME_MASK
    pk[k, base + INT_BYTES] = (pt[port, PT_TX_BYTES] // (INT_BYTE_UNIT * multi)) & INT_BYTES_MASK
    pk[k, base + INT_QLEN] = (pt[port, PT_DATA_BYTES] // (INT_QLEN_UNIT * multi)) & INT_QLEN_MASK
    pk[k, base + INT_RATE] = pt[port, PT_RATE]
    pk[k, PK_INT_NHOP] += 1


@kernel
def select_packet(g, pk, pt, ptf, nd, fl, ci, rng, path_marks, port, now):
    """(packet to send or -1, ingress port that just queued a PFC resume or -1). ``path_marks``, when it has an
    entry per path entry, counts each mark at the flow's hop (PK_HOP indexes the port it is queued at)."""
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
    # unless the reference's draws are replayed (rng="ns3"): then the ACK takes its stream index and is not marked
    if ci[CI_ECN] and pk[k, PK_KIND] == KIND_DATA and ecn_mark(pt, ptf, rng, port, pt[port, PT_DATA_BYTES]):
        pk[k, PK_ECN] = 1
        pt[port, PT_ECN_MARKS] += 1
        g[G_ECN_MARKS] += 1
        if path_marks.shape[0]:
            path_marks[fl[pk[k, PK_FLOW], FL_PATH_BEGIN] + pk[k, PK_HOP]] += 1
    elif ci[CI_ECN] and pk[k, PK_KIND] != KIND_DATA and draws_like_reference(rng):
        ecn_mark(pt, ptf, rng, port, pt[port, PT_DATA_BYTES])
    # INT sees the bytes sent before this packet and the queue left behind it (queue 0 is empty here)
    if ci[CI_INT_MODE] == INT_MODE_HOPS and pk[k, PK_KIND] == KIND_DATA:
        _push_int_hop(pk, pt, ci, port, k, now)
    if ci[CI_PFC] and should_resume(nd, pt, ci, node, inport):
        send_pfc(g, pk, pt, ci, rng, inport, 0)
        return k, inport
    return k, -1
