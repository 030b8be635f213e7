"""Queue-pair (flow) life cycle at the sender: start, acknowledgement, completion, go-back-N."""

import numpy as np

from wormhole_lab.engine import slots
from wormhole_lab.engine.cca.dispatch import BY_CCA
from wormhole_lab.engine.cca.dispatch import init as cca_init
from wormhole_lab.engine.jit import kernel, variant
from wormhole_lab.engine.layout import (
    CI_RELEASE_ON_DELIVERY,
    CI_RTO,
    EV_FLOW_START,
    EV_RTO,
    FL_ACTIVE_POS,
    FL_DEPS_LEFT,
    FL_DONE_ORDER,
    FL_FINISH,
    FL_GAP,
    FL_PATH_BEGIN,
    FL_READY_AT,
    FL_RETX_BYTES,
    FL_SIZE,
    FL_SLOT,
    FL_START,
    FL_STARTED_AT,
    FL_STATE,
    FL_TIMEOUTS,
    FS_ACTIVE,
    FS_DONE,
    FW_LAST_PROGRESS,
    FW_MAX_RATE,
    FW_NEXT_AVAIL,
    FW_RATE,
    FW_RP_GEN,
    FW_SND_NXT,
    FW_SND_UNA,
    FW_TIMER_GEN,
    G_DONE_COUNT,
    G_FLOW_EVENT,
    G_N_ACTIVE,
    G_WENT_BACK,
    PT_QP_BEGIN,
    PT_QP_COUNT,
    PT_RATE,
)
from wormhole_lab.engine.wheel import push


@kernel
def start(g, events, pt, fl, ff, fw, port_qps, path_ports, ci, active, f, now):
    """The QP joins its NIC's round robin at line rate and the active list and takes a slot of sending state;
    returns the NIC port to kick."""
    port = path_ports[fl[f, FL_PATH_BEGIN]]
    fl[f, FL_ACTIVE_POS] = g[G_N_ACTIVE]
    active[g[G_N_ACTIVE]] = f
    g[G_N_ACTIVE] += 1
    fl[f, FL_STATE] = FS_ACTIVE
    fl[f, FL_STARTED_AT] = now
    s = slots.take(g, fl, fw, ff, f)
    fw[s, FW_RATE] = pt[port, PT_RATE]
    fw[s, FW_MAX_RATE] = pt[port, PT_RATE]
    fw[s, FW_NEXT_AVAIL] = now
    fw[s, FW_LAST_PROGRESS] = now
    cca_init(fl, ff, fw, ci, f)
    port_qps[pt[port, PT_QP_BEGIN] + pt[port, PT_QP_COUNT]] = f
    pt[port, PT_QP_COUNT] += 1
    if ci[CI_RTO] > 0:
        push(g, events, now + ci[CI_RTO], EV_RTO, f, fw[s, FW_TIMER_GEN])
    return port


@kernel
def acknowledge(fl, fw, f, seq, now):
    """Advance snd_una; True when this ACK covered the last byte (the FCT clock stops now)."""
    s = fl[f, FL_SLOT]
    if seq > fw[s, FW_SND_UNA]:
        fw[s, FW_SND_UNA] = seq
        fw[s, FW_LAST_PROGRESS] = now
    if fw[s, FW_SND_UNA] >= fl[f, FL_SIZE]:
        fl[f, FL_STATE] = FS_DONE
        fl[f, FL_FINISH] = now
        fw[s, FW_TIMER_GEN] += 1
        fw[s, FW_RP_GEN] += 1
        return True
    return False


@kernel
def fill_dependants(dep_offset, dep_ids, dep_gaps, fill, children, child_gaps):
    """Write each flow into ``children`` at ``fill[d]`` (then one on) for every flow ``d`` it waits for, in id
    order: with ``fill`` = the start of each flow's block of dependants, ``children`` is grouped by the flow
    waited for, in id order within a group. One pass over the edges (a counting sort), where NumPy's stable
    argsort and gathers took 1.3 s of MoE-32x22B's set-up on 1024 GPUs (18 M edges). Ids must be checked.

    ``child_gaps`` gets each edge's delay (``dep_gaps``, aligned with ``dep_ids``) at its place in ``children``;
    both are empty for a table without per-edge delays."""
    gaps = child_gaps.shape[0] > 0
    for f in range(dep_offset.shape[0] - 1):
        for e in range(dep_offset[f], dep_offset[f + 1]):
            d = dep_ids[e]
            children[fill[d]] = f
            if gaps:
                child_gaps[fill[d]] = dep_gaps[e]
            fill[d] += 1


@kernel
def release(g, events, fl, child_offset, children, child_gaps, f, now):
    """Flow ``f`` is done for those waiting for it: each becomes ready ``now`` plus the edge's delay
    (``child_gaps[i]``; none when it is empty) plus its gap (or later, for another dependency), and one waiting for
    nothing else is scheduled to start then, and not before its start time."""
    # an empty child_gaps (a table without per-edge delays) rather than zeros: no memory, same compiled type
    edge_gaps = child_gaps.shape[0] > 0
    for i in range(child_offset[f], child_offset[f + 1]):
        c = np.int64(children[i])  # children is int32: as int64, push compiles once (its other calls)
        ready = now + fl[c, FL_GAP]
        if edge_gaps:
            ready += child_gaps[i]
        fl[c, FL_READY_AT] = max(fl[c, FL_READY_AT], ready)
        fl[c, FL_DEPS_LEFT] -= 1
        if fl[c, FL_DEPS_LEFT] == 0:
            push(g, events, max(fl[c, FL_READY_AT], fl[c, FL_START]), EV_FLOW_START, c, 0)


@kernel
def complete(g, events, fl, ci, active, child_offset, children, child_gaps, f, now):
    """Record the completion order, leave the active list and start the flows that were waiting only for
    this one (after their gap), unless they were released when its last byte arrived (CI_RELEASE_ON_DELIVERY)."""
    fl[f, FL_DONE_ORDER] = g[G_DONE_COUNT]
    g[G_DONE_COUNT] += 1
    g[G_FLOW_EVENT] = f
    last = active[g[G_N_ACTIVE] - 1]
    active[fl[f, FL_ACTIVE_POS]] = last
    fl[last, FL_ACTIVE_POS] = fl[f, FL_ACTIVE_POS]
    g[G_N_ACTIVE] -= 1
    if not ci[CI_RELEASE_ON_DELIVERY]:
        release(g, events, fl, child_offset, children, child_gaps, f, now)


@kernel
def go_back(g, fl, fw, f):
    """Resend from the first unacknowledged byte (NACK or timeout)."""
    s = fl[f, FL_SLOT]
    if fw[s, FW_SND_NXT] > fw[s, FW_SND_UNA]:
        g[G_WENT_BACK] = 1
    fl[f, FL_RETX_BYTES] += fw[s, FW_SND_NXT] - fw[s, FW_SND_UNA]
    fw[s, FW_SND_NXT] = fw[s, FW_SND_UNA]


@kernel
def on_rto(g, events, fl, fw, ci, f, now):
    """Timeout check (not in the reference, which stalls when a flow's last packets are dropped).

    Returns True when the QP went back and its NIC should be kicked."""
    fired = False
    s = fl[f, FL_SLOT]
    if fw[s, FW_SND_NXT] > fw[s, FW_SND_UNA] and now - fw[s, FW_LAST_PROGRESS] >= ci[CI_RTO]:
        go_back(g, fl, fw, f)
        fl[f, FL_TIMEOUTS] += 1
        fw[s, FW_LAST_PROGRESS] = now
        fired = True
    # checked once per RTO period, so a stall is detected between one and two periods after the last progress
    push(g, events, now + ci[CI_RTO], EV_RTO, f, fw[s, FW_TIMER_GEN])
    return fired


# ``start`` of each CCA (by CC_* number), calling that CCA's ``init`` only: its event loop's (kernel.event_loop).
# Module attributes too (start_dcqcn, ...), as compile_notice.loaded_kernels finds the kernels a run loaded.
START_BY_CCA = {cc: kernel(variant(start, f"start_{c.name}", cca_init=c.init)) for cc, c in BY_CCA.items()}
globals().update({f.py_func.__name__: f for f in START_BY_CCA.values()})
