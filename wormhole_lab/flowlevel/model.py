"""What flow-level mode keeps of the packet engine: link capacities net of truncated serialisation, each flow's
bytes on the wire, and the fixed latency an uncongested flow adds to its transfer time.

Calibrated so that a flow alone on its path finishes when the packet engine's would: its packets leave back to
back, queue only at the slowest port (the bottleneck), and the ACK of the last one comes back unqueued.
"""

from wormhole_lab.engine.layout import (
    CI_ACK_WIRE,
    CI_DATA_HDR,
    CI_PAYLOAD,
    CI_TIME_QUANTUM,
    FL_APATH_BEGIN,
    FL_APATH_LEN,
    FL_PATH_BEGIN,
    FL_PATH_LEN,
    FL_SIZE,
    FL_WIN,
    PT_DELAY,
    PT_RATE,
)
from wormhole_lab.engine.timing import serialisation_ps
from wormhole_lab.flowlevel.jit import flow_kernel


@flow_kernel
def port_capacity(pt, ci, eta, cap):
    """``cap[p]``: wire bytes per ps that port ``p`` carries in full packets, times ``eta``, the share of a link
    the CCA fills once it has feedback (HPCC: its target utilisation, 95 %; 1 otherwise). The engine
    truncates each packet's serialisation to its time quantum, so a 1048 B packet at 100 Gb/s takes 83 ns,
    not 83.84: 1 % faster than the nominal rate, which a flow model must keep to stay within 0.5 % of packet
    mode."""
    full = ci[CI_PAYLOAD] + ci[CI_DATA_HDR]
    for p in range(pt.shape[0]):
        cap[p] = eta * full / serialisation_ps(full, pt[p, PT_RATE], ci[CI_TIME_QUANTUM])


@flow_kernel
def flow_terms(fl, pt, path_ports, ci, cap, eta, wire, latency, delivery):
    """Per flow: ``wire[f]``, bytes on the wire (payload plus one header per packet), ``latency[f]``, ps that
    the uncongested packet-mode FCT adds to draining those bytes at the bottleneck's capacity, and ``delivery[f]``,
    the part of it until the last byte reaches the receiver: the latency less the ACK's unqueued way back.

    With ``eta`` < 1 (HPCC) a flow alone sends its first window (``FL_WIN``, one BDP) at line rate, before
    any INT feedback, and the rest at ``eta`` of it: the latency takes the first window's head start off (a
    lone HPCC flow of 1 MB in packet mode is 4.8 % slower than at line rate; so is flow mode).

    Alone, a flow's packets leave its NIC back to back and cross store-and-forward hops. The full packets
    before the last one leave hop ``k`` at ``S_k + (i - 1) * M_k`` (``S_k``: the first packet's serialisations
    and delays up to hop ``k``, ``M_k``: the slowest serialisation so far); the shorter last packet leaves
    each hop when it has arrived and the packet ahead has left, plus its own serialisation. Its ACK then
    returns unqueued over the ACK path."""
    payload, header, quantum = ci[CI_PAYLOAD], ci[CI_DATA_HDR], ci[CI_TIME_QUANTUM]
    full = payload + header
    for f in range(fl.shape[0]):
        size = fl[f, FL_SIZE]
        packets = (size + payload - 1) // payload
        last = size - (packets - 1) * payload + header
        begin, end = fl[f, FL_PATH_BEGIN], fl[f, FL_PATH_BEGIN] + fl[f, FL_PATH_LEN]
        ahead = 0  # when the packet before the last leaves the current hop (S_k + (packets - 2) * M_k)
        leaves = 0  # when the last packet leaves the current hop
        arrives = 0  # when the last packet has fully arrived at the current hop
        first_done, slowest, neck = 0, 0, begin
        for e in range(begin, end):
            p = path_ports[e]
            s = serialisation_ps(full, pt[p, PT_RATE], quantum)
            if s > slowest:
                slowest, neck = s, e
            if e == begin:
                arrives = (packets - 1) * s  # the NIC paces its packets at its own line rate
            first_done += s
            ahead = first_done + (packets - 2) * slowest
            leaves = serialisation_ps(last, pt[p, PT_RATE], quantum) + (max(arrives, ahead) if packets > 1 else arrives)
            first_done += pt[p, PT_DELAY]
            arrives = leaves + pt[p, PT_DELAY]
        t = arrives
        ack = 0
        for e in range(fl[f, FL_APATH_BEGIN], fl[f, FL_APATH_BEGIN] + fl[f, FL_APATH_LEN]):
            p = path_ports[e]
            ack += serialisation_ps(ci[CI_ACK_WIRE], pt[p, PT_RATE], quantum) + pt[p, PT_DELAY]
        t += ack
        wire[f] = size + packets * header
        line = cap[path_ports[neck]] / eta
        paced = max(0.0, wire[f] - fl[f, FL_WIN]) if eta < 1 else 0.0  # bytes sent after the first window
        latency[f] = round(t + paced * (1 / eta - 1) / line - wire[f] / cap[path_ports[neck]])
        delivery[f] = max(0, latency[f] - ack)
