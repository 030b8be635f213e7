"""A port's transmitter: start serialising a packet, and pick the next one when idle.

A transmitter is busy until its TX_DONE has run in event order. At a switch port whose queues are empty
then, that event would do nothing (nothing to dequeue, no draw, no event), so with CI_MERGE_TX_DONE it is
only put in the event queue when a frame is queued behind the one on the wire (when it starts, or later, under the
sequence number reserved when it started): the events that do something, and their order, are the same as
with every TX_DONE queued. Host NICs always get theirs (their round robin and pacing wake-ups run at
every TX_DONE).
"""

from wormhole_lab.engine import nic, switch
from wormhole_lab.engine.jit import inlined_kernel, kernel
from wormhole_lab.engine.layout import (
    CI_ACK_HIGH_PRIO,
    CI_CHECK,
    CI_MERGE_TX_DONE,
    CI_TIME_QUANTUM,
    EV_ARRIVE,
    EV_TX_DONE,
    G_CUR_SEQ,
    G_SEQ,
    G_VIOLATION,
    G_VIOLATION_AT,
    G_VIOLATION_WHERE,
    KIND_DATA,
    KIND_PFC,
    PK_KIND,
    PK_PORT,
    PK_WIRE,
    PT_CTRL_HEAD,
    PT_DATA_HEAD,
    PT_DELAY,
    PT_FREE_AT,
    PT_FREE_SEQ,
    PT_IS_SWITCH,
    PT_PAUSED,
    PT_RATE,
    PT_TX_BYTES,
    PT_TX_DONE_QUEUED,
    VIOLATION_PAUSED_TRANSMIT,
)
from wormhole_lab.engine.packets import fifo_pop
from wormhole_lab.engine.timing import serialisation_ps
from wormhole_lab.engine.wheel import insert, push


@kernel
def _paused_violation(pk, pt, ci, port, k):
    """A data-class frame leaving a port its peer has paused (host ACKs may bypass with ACK_HIGH_PRIO)."""
    if not pt[port, PT_PAUSED] or pk[k, PK_KIND] == KIND_PFC:
        return False
    if pk[k, PK_KIND] == KIND_DATA:
        return True
    return pt[port, PT_IS_SWITCH] == 1 or not ci[CI_ACK_HIGH_PRIO]


@kernel
def transmit(g, events, pk, pt, ci, port, k, now):
    """Store-and-forward: the transmitter is free after serialisation, the far end has it after the delay too."""
    if ci[CI_CHECK] and g[G_VIOLATION] == 0 and _paused_violation(pk, pt, ci, port, k):
        g[G_VIOLATION] = VIOLATION_PAUSED_TRANSMIT
        g[G_VIOLATION_AT] = now
        g[G_VIOLATION_WHERE] = port
    wire = pk[k, PK_WIRE]
    done = now + serialisation_ps(wire, pt[port, PT_RATE], ci[CI_TIME_QUANTUM])
    pt[port, PT_FREE_AT] = done
    pt[port, PT_FREE_SEQ] = g[G_SEQ]
    g[G_SEQ] += 1
    pt[port, PT_TX_BYTES] += wire
    pk[k, PK_PORT] = port
    queued = pt[port, PT_CTRL_HEAD] >= 0 or pt[port, PT_DATA_HEAD] >= 0
    if queued or not (ci[CI_MERGE_TX_DONE] and pt[port, PT_IS_SWITCH]):
        _queue_tx_done(g, events, pt, port)
    push(g, events, done + pt[port, PT_DELAY], EV_ARRIVE, k, 0)


@kernel
def _queue_tx_done(g, events, pt, port):
    insert(g, events, pt[port, PT_FREE_AT], pt[port, PT_FREE_SEQ], EV_TX_DONE, port, 0)
    pt[port, PT_TX_DONE_QUEUED] = 1


@kernel
def busy(g, pt, port, now):
    """The port's TX_DONE comes after the event running now."""
    t = pt[port, PT_FREE_AT]
    return t > now or (t == now and pt[port, PT_FREE_SEQ] > g[G_CUR_SEQ])


@kernel
def _wait(g, events, pt, port, now):
    """False when the transmitter is free; else a frame waits for it: make sure its TX_DONE is in the event queue."""
    if not busy(g, pt, port, now):
        return False
    if not pt[port, PT_TX_DONE_QUEUED]:
        _queue_tx_done(g, events, pt, port)
    return True


@kernel
def kick_control(g, events, pk, pt, ci, port, now):
    """Send a just-queued PFC frame if the port is idle (control frames go first anyway)."""
    if not _wait(g, events, pt, port, now):
        k = fifo_pop(pt, pk, port, PT_CTRL_HEAD)
        if k >= 0:
            transmit(g, events, pk, pt, ci, port, k, now)


@inlined_kernel
def dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, port, now):
    if _wait(g, events, pt, port, now):
        return
    if pt[port, PT_IS_SWITCH]:
        k, resume_port = switch.select_packet(g, pk, pt, ptf, nd, fl, ci, rng, path_marks, port, now)
        # the reference starts the resume frame inside the dequeue notification, before the packet itself
        if resume_port >= 0:
            kick_control(g, events, pk, pt, ci, resume_port, now)
        if k >= 0:
            transmit(g, events, pk, pt, ci, port, k, now)
    else:
        k = nic.select_packet(g, events, pk, pt, fl, fw, port_qps, ci, port, now)
        if k >= 0:
            transmit(g, events, pk, pt, ci, port, k, now)
