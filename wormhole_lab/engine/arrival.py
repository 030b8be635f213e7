"""What happens when a packet reaches the far end of a link: switch forwarding, host receive, PFC."""

from wormhole_lab.engine import qp
from wormhole_lab.engine.cca.dispatch import BY_CCA
from wormhole_lab.engine.cca.dispatch import on_ack as cca_ack
from wormhole_lab.engine.jit import inlined_kernel, variant
from wormhole_lab.engine.layout import (
    CI_ACK_WIRE,
    CI_INT_MODE,
    CI_NACK_INTERVAL,
    CI_PFC,
    CI_RELEASE_ON_DELIVERY,
    FL_APATH_BEGIN,
    FL_CNPS,
    FL_DELIVERED_AT,
    FL_LAST_NACK,
    FL_NACK_TIMER,
    FL_NIC_PORT,
    FL_PATH_BEGIN,
    FL_PKTS_DELIVERED,
    FL_PKTS_DROPPED,
    FL_RCV_NXT,
    FL_SIZE,
    FL_STATE,
    FS_ACTIVE,
    G_DROPS,
    G_PFC_COUNT,
    INT_MODE_HOPS,
    KIND_ACK,
    KIND_DATA,
    KIND_NACK,
    KIND_PFC,
    PK_ECN,
    PK_FLOW,
    PK_HOP,
    PK_INPORT,
    PK_INT_NHOP,
    PK_KIND,
    PK_N,
    PK_PAUSE,
    PK_PAYLOAD,
    PK_PORT,
    PK_SEQ,
    PK_TS,
    PK_WIRE,
    PT_DATA_BYTES,
    PT_DATA_HEAD,
    PT_IFINDEX,
    PT_IS_SWITCH,
    PT_NODE,
    PT_PAUSE_FRAMES,
    PT_PAUSED,
    PT_PEER,
)
from wormhole_lab.engine.mmu import admit, should_pause
from wormhole_lab.engine.packets import alloc, fifo_push, free
from wormhole_lab.engine.port import dequeue_and_transmit, kick_control
from wormhole_lab.engine.switch import send_pfc


@inlined_kernel
def _receive_pfc(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, pfc_log, port, k, now):
    pause = pk[k, PK_PAUSE]
    free(g, pk, k)
    row = g[G_PFC_COUNT]
    g[G_PFC_COUNT] = row + 1
    pfc_log[row, 0] = now
    pfc_log[row, 1] = pt[port, PT_NODE]
    pfc_log[row, 2] = pt[port, PT_IFINDEX]
    pfc_log[row, 3] = pause
    if pause:
        pt[port, PT_PAUSED] = 1
        pt[port, PT_PAUSE_FRAMES] += 1
    else:
        pt[port, PT_PAUSED] = 0
        dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, port, now)


@inlined_kernel
def _forward(g, events, pk, pt, ptf, nd, fl, fw, port_qps, path_ports, path_marks, ci, rng, inport, k, now):
    """Ingress admission into the shared buffer, PFC pause if over threshold, then the ECMP-chosen egress."""
    hop = pk[k, PK_HOP] + 1
    pk[k, PK_HOP] = hop
    f = pk[k, PK_FLOW]
    begin = fl[f, FL_PATH_BEGIN] if pk[k, PK_KIND] == KIND_DATA else fl[f, FL_APATH_BEGIN]
    out = path_ports[begin + hop]
    node = pt[inport, PT_NODE]
    wire = pk[k, PK_WIRE]
    if not admit(nd, pt, ci, node, inport, wire):
        if pk[k, PK_KIND] == KIND_DATA:
            fl[f, FL_PKTS_DROPPED] += 1
        free(g, pk, k)
        g[G_DROPS] += 1
        return
    pk[k, PK_INPORT] = inport
    if ci[CI_PFC] and should_pause(nd, pt, ci, node, inport):
        send_pfc(g, pk, pt, ci, rng, inport, 1)
        kick_control(g, events, pk, pt, ci, inport, now)
    fifo_push(pt, pk, out, PT_DATA_HEAD, k)
    pt[out, PT_DATA_BYTES] += wire
    dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, out, now)


@inlined_kernel
def _receive_data(
    g, events, pk, pt, ptf, nd, fl, fw, port_qps, path_ports, path_marks, ci, rng, child_offset, children,
    child_gaps, k, now,
):  # fmt: skip
    """Receiver: ACK each in-order packet (echoing ECN as the CNP flag), NACK a gap at most once per NACK interval.
    When the last byte arrives in order it records the time (FL_DELIVERED_AT) and, with CI_RELEASE_ON_DELIVERY,
    releases the flows waiting for this one."""
    f = pk[k, PK_FLOW]
    fl[f, FL_PKTS_DELIVERED] += 1
    seq = pk[k, PK_SEQ]
    expected = fl[f, FL_RCV_NXT]
    reply = -1
    if seq == expected:
        fl[f, FL_RCV_NXT] = expected + pk[k, PK_PAYLOAD]
        reply = KIND_ACK
        # in order, so this happens once per flow: a resent packet the receiver already has is behind RCV_NXT
        if fl[f, FL_RCV_NXT] >= fl[f, FL_SIZE]:
            fl[f, FL_DELIVERED_AT] = now
            if ci[CI_RELEASE_ON_DELIVERY]:
                qp.release(g, events, fl, child_offset, children, child_gaps, f, now)
    elif seq > expected and (now >= fl[f, FL_NACK_TIMER] or fl[f, FL_LAST_NACK] != expected):
        fl[f, FL_NACK_TIMER] = now + ci[CI_NACK_INTERVAL]
        fl[f, FL_LAST_NACK] = expected
        reply = KIND_NACK
    if reply >= 0:
        a = alloc(g, pk)
        pk[a, PK_FLOW] = f
        pk[a, PK_KIND] = reply
        pk[a, PK_SEQ] = fl[f, FL_RCV_NXT]
        pk[a, PK_WIRE] = ci[CI_ACK_WIRE]
        pk[a, PK_PAYLOAD] = 0
        pk[a, PK_HOP] = 0
        pk[a, PK_ECN] = pk[k, PK_ECN]
        pk[a, PK_TS] = pk[k, PK_TS]
        if ci[CI_INT_MODE] == INT_MODE_HOPS:
            for c in range(PK_INT_NHOP, PK_N):
                pk[a, c] = pk[k, c]
        port = path_ports[fl[f, FL_APATH_BEGIN]]
        fifo_push(pt, pk, port, PT_DATA_HEAD, a)
        dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, port, now)
    free(g, pk, k)


@inlined_kernel
def _receive_ack(
    g, events, pk, pt, ptf, nd, fl, ff, fw, port_qps, path_ports, path_marks, ci, cf, rng, active, child_offset,
    children, child_gaps, k, now,
):  # fmt: skip
    f = pk[k, PK_FLOW]
    if fl[f, FL_STATE] != FS_ACTIVE:
        free(g, pk, k)
        return
    completed = qp.acknowledge(fl, fw, f, pk[k, PK_SEQ], now)
    if completed:
        qp.complete(g, events, fl, ci, active, child_offset, children, child_gaps, f, now)
    elif pk[k, PK_KIND] == KIND_NACK:
        qp.go_back(g, fl, fw, f)
    if pk[k, PK_ECN]:
        fl[f, FL_CNPS] += 1
    # RdmaHw::ReceiveAck runs the CC's ACK handler after QpComplete as well: on the ACK that completes an HPCC
    # QP the rate update's ChangeRate still moves the NIC's pending dequeue event (QbbNetDevice::UpdateNextAvail
    # cancels and reschedules it), which decides how that NIC's next send ties with other events of its ns
    cca_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    free(g, pk, k)
    # ... and triggers the NIC, completed or not (the NIC gives a completed QP's slot back when it drops it)
    dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, fl[f, FL_NIC_PORT], now)


@inlined_kernel
def handle(
    g, events, pk, pt, ptf, nd, fl, ff, fw, port_qps, path_ports, path_marks, ci, cf, rng, pfc_log, active,
    child_offset, children, child_gaps, k, now,
):  # fmt: skip
    port = pt[pk[k, PK_PORT], PT_PEER]
    kind = pk[k, PK_KIND]
    if kind == KIND_PFC:
        _receive_pfc(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, pfc_log, port, k, now)
    elif pt[port, PT_IS_SWITCH]:
        _forward(g, events, pk, pt, ptf, nd, fl, fw, port_qps, path_ports, path_marks, ci, rng, port, k, now)
    elif kind == KIND_DATA:
        _receive_data(
            g, events, pk, pt, ptf, nd, fl, fw, port_qps, path_ports, path_marks, ci, rng, child_offset, children,
            child_gaps, k, now,
        )  # fmt: skip
    else:
        _receive_ack(
            g, events, pk, pt, ptf, nd, fl, ff, fw, port_qps, path_ports, path_marks, ci, cf, rng, active,
            child_offset, children, child_gaps, k, now,
        )  # fmt: skip


# ``handle`` of each CCA (by CC_* number), whose ACKs go to that CCA's ``on_ack`` only: inlined into its event loop
HANDLE_BY_CCA = {
    cc: inlined_kernel(
        variant(
            handle, f"handle_{c.name}",
            _receive_ack=inlined_kernel(variant(_receive_ack, f"_receive_ack_{c.name}", cca_ack=c.on_ack)),
        )
    )
    for cc, c in BY_CCA.items()
}  # fmt: skip
