"""Timestamp offsetting: move one partition forward (or back) in time without touching the global clock.

Every pending event that belongs to the partition's ports or flows moves by ``dt``; its flows and their
packets in flight advance by ``adv[f]`` bytes of sequence space. Nothing of the partition executes
while its events are shifted, so its queues, buffer occupancy and CCA state stay frozen and resume
consistently; other partitions keep running and see the same shared buffer.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_ACK_WIRE,
    CI_DATA_HDR,
    CI_PAYLOAD,
    E_A,
    E_KIND,
    E_TIME,
    EV_ARRIVE,
    EV_DCQCN_ALPHA,
    EV_DCQCN_DECREASE,
    EV_DCQCN_INCREASE,
    EV_NIC_WAKE,
    EV_NONE,
    EV_RTO,
    EV_TX_DONE,
    FL_APATH_BEGIN,
    FL_APATH_LEN,
    FL_LAST_NACK,
    FL_NACK_TIMER,
    FL_PART,
    FL_PATH_BEGIN,
    FL_PATH_LEN,
    FL_RCV_NXT,
    FL_SKIPPED_BYTES,
    FL_SLOT,
    FW_HIGH_SEQ,
    FW_HOP_BASE,
    FW_LAST_PROGRESS,
    FW_LAST_UPDATE_SEQ,
    FW_NEXT_AVAIL,
    FW_SKIP_CURRENT,
    FW_SND_NXT,
    FW_SND_UNA,
    G_NOW,
    G_PENDING,
    INT_FIELDS,
    INT_MAX_HOPS,
    INT_TIME,
    INT_TIME_MASK,
    KIND_PFC,
    PK_FLOW,
    PK_INT_BASE,
    PK_INT_NHOP,
    PK_KIND,
    PK_NEXT,
    PK_PORT,
    PK_SEQ,
    PK_TS,
    PT_CTRL_HEAD,
    PT_DATA_HEAD,
    PT_FREE_AT,
    PT_PART,
    PT_SKIP_CURRENT,
    PT_SKIPPED_BYTES,
    PT_TX_DONE_QUEUED,
    PT_WAKE_AT,
)
from wormhole_lab.engine.port import busy
from wormhole_lab.engine.wheel import discard, link_scheduled, move, pending_rows, relink, requeue_overflow, rows

NEVER = 2**62  # a transmitter busy until then never frees


@kernel
def _shift_packet(pk, k, dt, adv):
    if pk[k, PK_KIND] == KIND_PFC:
        return
    pk[k, PK_SEQ] += adv
    pk[k, PK_TS] += dt
    for h in range(min(pk[k, PK_INT_NHOP], INT_MAX_HOPS)):
        c = PK_INT_BASE + h * INT_FIELDS + INT_TIME
        pk[k, c] = (pk[k, c] + dt // 1000) & INT_TIME_MASK


@kernel
def _owner(pk, pt, fl, kind, a):
    """The partition whose event this is, -1 for none (PT_PART and FL_PART say which)."""
    if kind == EV_TX_DONE or kind == EV_NIC_WAKE:
        return pt[a, PT_PART]
    if kind == EV_ARRIVE:
        if pk[a, PK_KIND] == KIND_PFC:
            return pt[pk[a, PK_PORT], PT_PART]
        return fl[pk[a, PK_FLOW], FL_PART]
    if kind == EV_DCQCN_ALPHA or kind == EV_DCQCN_DECREASE or kind == EV_DCQCN_INCREASE or kind == EV_RTO:
        return fl[a, FL_PART]
    return -1  # flow starts and samples are not a partition's own


@kernel
def _shift_of(pk, pt, fl, shift, kind, a):
    p = _owner(pk, pt, fl, kind, a)
    return shift[p] if p >= 0 else 0


@kernel
def _credit_ports(pt, path_ports, begin, length, nbytes):
    for i in range(begin, begin + length):
        pt[path_ports[i], PT_SKIPPED_BYTES] += nbytes
        pt[path_ports[i], PT_SKIP_CURRENT] += nbytes


@kernel
def _shift_event(events, pk, r, dt, adv):
    if events[r, E_KIND] == EV_ARRIVE:
        a = events[r, E_A]
        _shift_packet(pk, a, dt, adv[pk[a, PK_FLOW]])


@kernel
def offset_partitions(g, ci, events, pk, pt, fl, fw, path_ports, shift, adv, ports, flows, scratch):
    """Shift every partition ``q`` with ``shift[q] != 0`` (its ``ports`` and ``flows``, those whose PT_PART and
    FL_PART it is) by ``shift[q]`` ps; flow f advances ``adv[f]`` bytes (whole packets), which its data and ACK ports
    are credited with on the wire. Partitions share no event, so several shift in one pass.

    A negative shift with negative advances undoes part of an earlier shift (skip-back). The pending events are
    read (``scratch`` has room for them) and those that shift are moved in place: reading every row of the event
    table and relinking every pending event took 17 ms per skip at GPT-175B on 8192 GPUs (83,000 rows, 48,000
    pending), 2.8 ms so. An event's partition shows only in its port's or flow's row, so every pending one is
    tested: once per batch of skips taken at one stop (1,024 rings of that run can qualify at once)."""
    now = g[G_NOW]
    link_scheduled(g, events)
    in_wheel = pending_rows(g, events, scratch)
    n = g[G_PENDING]
    heap_moved = False
    for i in range(in_wheel, n):  # the overflow heap's first: it is rebuilt before any wheel row is moved
        r = scratch[i]
        dt = _shift_of(pk, pt, fl, shift, events[r, E_KIND], events[r, E_A])
        if dt != 0:
            events[r, E_TIME] += dt
            _shift_event(events, pk, r, dt, adv)
            heap_moved = True
    if heap_moved:
        requeue_overflow(g, events, scratch[in_wheel:n])
    for i in range(in_wheel):
        r = scratch[i]
        dt = _shift_of(pk, pt, fl, shift, events[r, E_KIND], events[r, E_A])
        if dt != 0:
            move(g, events, r, events[r, E_TIME] + dt)
            _shift_event(events, pk, r, dt, adv)
    for p in ports:
        dt = shift[pt[p, PT_PART]]
        for head in (PT_CTRL_HEAD, PT_DATA_HEAD):
            k = pt[p, head]
            while k >= 0:
                _shift_packet(pk, k, dt, adv[pk[k, PK_FLOW]])
                k = pk[k, PK_NEXT]
        if pt[p, PT_WAKE_AT] >= 0:
            pt[p, PT_WAKE_AT] += dt
        if busy(g, pt, p, now):  # its TX_DONE moves with the partition, in the queue or not
            pt[p, PT_FREE_AT] += dt
        if dt >= 0:  # a skip's credit replaces the last one's; a skip-back's takes part of it back
            pt[p, PT_SKIP_CURRENT] = 0
    for f in flows:
        dt = shift[fl[f, FL_PART]]
        b = adv[f]
        packets = b // ci[CI_PAYLOAD]
        data_wire = packets * (ci[CI_PAYLOAD] + ci[CI_DATA_HDR])
        _credit_ports(pt, path_ports, fl[f, FL_PATH_BEGIN], fl[f, FL_PATH_LEN], data_wire)
        _credit_ports(pt, path_ports, fl[f, FL_APATH_BEGIN], fl[f, FL_APATH_LEN], packets * ci[CI_ACK_WIRE])
        for c in (FL_RCV_NXT, FL_SKIPPED_BYTES):
            fl[f, c] += b
        if fl[f, FL_LAST_NACK] > 0:  # sequence-valued state; 0 means "not set yet"
            fl[f, FL_LAST_NACK] += b
        fl[f, FL_NACK_TIMER] += dt
        s = fl[f, FL_SLOT]
        if s >= 0:  # a finished flow whose NIC gave its slot back has no sender state left to move
            fw[s, FW_SND_NXT] += b
            fw[s, FW_SND_UNA] += b
            fw[s, FW_SKIP_CURRENT] = fw[s, FW_SKIP_CURRENT] + b if dt < 0 else b
            fw[s, FW_NEXT_AVAIL] += dt
            fw[s, FW_LAST_PROGRESS] += dt
            for c in (FW_LAST_UPDATE_SEQ, FW_HIGH_SEQ):
                if fw[s, c] > 0:
                    fw[s, c] += b
            for h in range(INT_MAX_HOPS):
                c = FW_HOP_BASE + h * INT_FIELDS + INT_TIME
                fw[s, c] = (fw[s, c] + dt // 1000) & INT_TIME_MASK


@kernel
def isolate_partition(g, events, pk, pt, fl, part):
    """Drop every pending event that is not partition ``part``'s own (other partitions, flow starts, samples):
    what is left runs the partition alone, on a copy of the state that the audit replays."""
    for r in rows(events):
        if events[r, E_KIND] != EV_NONE and _owner(pk, pt, fl, events[r, E_KIND], events[r, E_A]) != part:
            discard(g, events, r)
    relink(g, events)
    for p in range(pt.shape[0]):
        if pt[p, PT_PART] != part and busy(g, pt, p, g[G_NOW]):
            # its TX_DONE was dropped with the other events (in the queue or not): it stays busy
            pt[p, PT_FREE_AT] = NEVER
            pt[p, PT_TX_DONE_QUEUED] = 1
