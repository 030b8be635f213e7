"""A port's transmitter: start serialising a packet, and pick the next one when idle."""

from wormhole_lab.engine import nic, switch
from wormhole_lab.engine.heap import push
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_ACK_HIGH_PRIO,
    CI_CHECK,
    CI_TIME_QUANTUM,
    EV_ARRIVE,
    EV_TX_DONE,
    G_VIOLATION,
    G_VIOLATION_AT,
    G_VIOLATION_WHERE,
    KIND_DATA,
    KIND_PFC,
    PK_KIND,
    PK_PORT,
    PK_WIRE,
    PT_BUSY,
    PT_CTRL_HEAD,
    PT_DELAY,
    PT_IS_SWITCH,
    PT_PAUSED,
    PT_RATE,
    PT_TX_BYTES,
    VIOLATION_PAUSED_TRANSMIT,
)
from wormhole_lab.engine.packets import fifo_pop
from wormhole_lab.engine.timing import serialisation_ps


@kernel
def _paused_violation(pk, pt, ci, port, k):
    """A data-class frame leaving a port its peer has paused (host ACKs may bypass with ACK_HIGH_PRIO)."""
    if not pt[port, PT_PAUSED] or pk[k, PK_KIND] == KIND_PFC:
        return False
    if pk[k, PK_KIND] == KIND_DATA:
        return True
    return pt[port, PT_IS_SWITCH] == 1 or not ci[CI_ACK_HIGH_PRIO]


@kernel
def transmit(g, heap, pk, pt, ci, port, k, now):
    """Store-and-forward: the transmitter is free after serialisation, the far end has it after the delay too."""
    if ci[CI_CHECK] and g[G_VIOLATION] == 0 and _paused_violation(pk, pt, ci, port, k):
        g[G_VIOLATION] = VIOLATION_PAUSED_TRANSMIT
        g[G_VIOLATION_AT] = now
        g[G_VIOLATION_WHERE] = port
    wire = pk[k, PK_WIRE]
    done = now + serialisation_ps(wire, pt[port, PT_RATE], ci[CI_TIME_QUANTUM])
    pt[port, PT_BUSY] = 1
    pt[port, PT_TX_BYTES] += wire
    pk[k, PK_PORT] = port
    push(g, heap, done, EV_TX_DONE, port, 0)
    push(g, heap, done + pt[port, PT_DELAY], EV_ARRIVE, k, 0)


@kernel
def kick_control(g, heap, pk, pt, ci, port, now):
    """Send a just-queued PFC frame if the port is idle (control frames go first anyway)."""
    if not pt[port, PT_BUSY]:
        k = fifo_pop(pt, pk, port, PT_CTRL_HEAD)
        if k >= 0:
            transmit(g, heap, pk, pt, ci, port, k, now)


@kernel
def dequeue_and_transmit(g, heap, pk, pt, ptf, nd, fl, port_qps, ci, rng, port, now):
    if pt[port, PT_BUSY]:
        return
    if pt[port, PT_IS_SWITCH]:
        k, resume_port = switch.select_packet(g, pk, pt, ptf, nd, ci, rng, port, now)
        # the reference starts the resume frame inside the dequeue notification, before the packet itself
        if resume_port >= 0:
            kick_control(g, heap, pk, pt, ci, resume_port, now)
        if k >= 0:
            transmit(g, heap, pk, pt, ci, port, k, now)
    else:
        k = nic.select_packet(g, heap, pk, pt, fl, port_qps, ci, port, now)
        if k >= 0:
            transmit(g, heap, pk, pt, ci, port, k, now)
