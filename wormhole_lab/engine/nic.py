"""Host NIC transmit side: the ACK queue first, then round-robin over paced, window-allowed QPs.

Mirrors the reference's QbbNetDevice::DequeueAndTransmit for hosts and RdmaHw::GetNxtPacket.
Data packets are created only when the NIC picks their QP, so the pool holds packets in flight.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_ACK_HIGH_PRIO,
    CI_DATA_HDR,
    CI_PAYLOAD,
    CI_RATE_BOUND,
    CI_TIME_QUANTUM,
    CI_VAR_WIN,
    EV_NIC_WAKE,
    FL_NIC_PORT,
    FL_PKTS_SENT,
    FL_SIZE,
    FL_SLOT,
    FL_WIN,
    FW_LAST_PKT_WIRE,
    FW_MARK,
    FW_MAX_RATE,
    FW_NEXT_AVAIL,
    FW_RATE,
    FW_SND_NXT,
    FW_SND_UNA,
    G_LOG_DUE,
    G_MARKED,
    KIND_DATA,
    PK_ECN,
    PK_FLOW,
    PK_HOP,
    PK_INT_NHOP,
    PK_KIND,
    PK_PAYLOAD,
    PK_SEQ,
    PK_TS,
    PK_WIRE,
    PT_DATA_HEAD,
    PT_PAUSED,
    PT_QP_BEGIN,
    PT_QP_COUNT,
    PT_RR_LAST,
    PT_WAKE_AT,
    PT_WAKE_GEN,
)
from wormhole_lab.engine.packets import alloc, fifo_pop
from wormhole_lab.engine.slots import give_back
from wormhole_lab.engine.timing import serialisation_ps
from wormhole_lab.engine.wheel import push


@kernel
def window_bound(fl, fw, ci, f, s):
    """HAS_WIN/VAR_WIN: a QP (flow ``f`` in slot ``s``) may not have more than its (rate-scaled) window in flight."""
    w = fl[f, FL_WIN]
    if w == 0:
        return False
    if ci[CI_VAR_WIN]:
        w = w * fw[s, FW_RATE] // fw[s, FW_MAX_RATE]
        if w == 0:
            w = 1
    return fw[s, FW_SND_NXT] - fw[s, FW_SND_UNA] >= w


@kernel
def _data_packet(g, pk, fl, fw, ci, f, s, now):
    payload = min(ci[CI_PAYLOAD], fl[f, FL_SIZE] - fw[s, FW_SND_NXT])
    k = alloc(g, pk)
    pk[k, PK_FLOW] = f
    pk[k, PK_KIND] = KIND_DATA
    pk[k, PK_SEQ] = fw[s, FW_SND_NXT]
    pk[k, PK_PAYLOAD] = payload
    pk[k, PK_WIRE] = payload + ci[CI_DATA_HDR]
    pk[k, PK_HOP] = 0
    pk[k, PK_ECN] = 0
    pk[k, PK_TS] = now
    pk[k, PK_INT_NHOP] = 0
    fw[s, FW_LAST_PKT_WIRE] = pk[k, PK_WIRE]
    fw[s, FW_SND_NXT] += payload
    if fw[s, FW_MARK] and fw[s, FW_SND_NXT] >= fw[s, FW_MARK]:
        # the layer above snapshots a watched partition before its first member's last packets (once this instant ran)
        fw[s, FW_MARK] = 0
        g[G_MARKED] = 1
        g[G_LOG_DUE] = 1
    fl[f, FL_PKTS_SENT] += 1
    return k


@kernel
def select_packet(g, events, pk, pt, fl, fw, port_qps, ci, port, now):
    """The next packet this host port sends now, or -1 (then a wake-up is scheduled if pacing allows one later).
    Finished QPs it drops from the round robin give their slots back."""
    paused = pt[port, PT_PAUSED]
    if pt[port, PT_DATA_HEAD] >= 0 and (ci[CI_ACK_HIGH_PRIO] or not paused):
        return fifo_pop(pt, pk, port, PT_DATA_HEAD)
    n = pt[port, PT_QP_COUNT]
    begin = pt[port, PT_QP_BEGIN]
    last = pt[port, PT_RR_LAST]
    chosen = -1
    first_finished = -1
    idx = last % n if n > 0 else 0
    for _ in range(n):
        # round robin from the QP after the last one served (not ``(i + last) % n``: a division per QP looked at)
        idx = idx + 1 if idx + 1 < n else 0
        f = port_qps[begin + idx]
        s = fl[f, FL_SLOT]
        if not paused and fw[s, FW_SND_NXT] < fl[f, FL_SIZE] and not window_bound(fl, fw, ci, f, s):
            if fw[s, FW_NEXT_AVAIL] > now:
                continue
            chosen = idx
            break
        if fw[s, FW_SND_UNA] >= fl[f, FL_SIZE] and (first_finished < 0 or idx < first_finished):
            first_finished = idx
    dropped_chosen = -1
    if first_finished >= 0:
        # the reference drops finished QPs from its list here, without remapping its round-robin position
        kept = first_finished
        for i in range(first_finished, n):
            f = port_qps[begin + i]
            if fw[fl[f, FL_SLOT], FW_SND_UNA] < fl[f, FL_SIZE]:
                if i == chosen:
                    chosen = kept
                port_qps[begin + kept] = f
                kept += 1
            elif i == chosen:
                # a finished QP picked this turn (a timeout went back below an ACK in flight, so it has bytes to
                # send): the packet below may still read its slot, which is given back after
                dropped_chosen = f
            else:
                give_back(g, fl, fw, f)
        n = kept
        pt[port, PT_QP_COUNT] = n
    if chosen >= 0:
        pt[port, PT_RR_LAST] = chosen
        f = port_qps[begin + chosen]
        s = fl[f, FL_SLOT]
        k = _data_packet(g, pk, fl, fw, ci, f, s, now)
        rate = fw[s, FW_RATE] if ci[CI_RATE_BOUND] else fw[s, FW_MAX_RATE]
        fw[s, FW_NEXT_AVAIL] = now + serialisation_ps(pk[k, PK_WIRE], rate, ci[CI_TIME_QUANTUM])
        if dropped_chosen >= 0:
            give_back(g, fl, fw, dropped_chosen)
        return k
    if pt[port, PT_WAKE_AT] < 0:
        earliest = -1
        for i in range(n):
            s = fl[port_qps[begin + i], FL_SLOT]
            if fw[s, FW_SND_NXT] < fl[port_qps[begin + i], FL_SIZE] and (
                earliest < 0 or fw[s, FW_NEXT_AVAIL] < earliest
            ):
                earliest = fw[s, FW_NEXT_AVAIL]
        if earliest > now:
            _schedule_wake(g, events, pt, port, earliest)
    return -1


@kernel
def _schedule_wake(g, events, pt, port, t):
    pt[port, PT_WAKE_GEN] += 1
    pt[port, PT_WAKE_AT] = t
    push(g, events, t, EV_NIC_WAKE, port, pt[port, PT_WAKE_GEN])


@kernel
def change_rate(g, events, pt, fl, fw, ci, f, new_rate, now):
    """RdmaHw::ChangeRate: re-pace the last packet at the new rate and pull the NIC's wake-up earlier if due."""
    q = ci[CI_TIME_QUANTUM]
    s = fl[f, FL_SLOT]
    last = fw[s, FW_LAST_PKT_WIRE]
    fw[s, FW_NEXT_AVAIL] += serialisation_ps(last, new_rate, q) - serialisation_ps(last, fw[s, FW_RATE], q)
    fw[s, FW_RATE] = new_rate
    port = fl[f, FL_NIC_PORT]
    if pt[port, PT_WAKE_AT] >= 0 and fw[s, FW_NEXT_AVAIL] < pt[port, PT_WAKE_AT]:
        _schedule_wake(g, events, pt, port, max(fw[s, FW_NEXT_AVAIL], now))
