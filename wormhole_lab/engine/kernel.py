"""The event loop: take the earliest event, run its handler, stop at a boundary Python asked for."""

from wormhole_lab.engine import qp
from wormhole_lab.engine.arrival import HANDLE_BY_CCA
from wormhole_lab.engine.arrival import handle as handle_arrival
from wormhole_lab.engine.cca.dispatch import BY_CCA
from wormhole_lab.engine.cca.dispatch import on_timer as cca_timer
from wormhole_lab.engine.flow_log import record as log_flow_event
from wormhole_lab.engine.jit import kernel, variant
from wormhole_lab.engine.layout import (
    CI_CC,
    CI_CHECK,
    CI_SAMPLE_INTERVAL,
    CI_STEADY_INTERVAL,
    E_A,
    E_B,
    E_KIND,
    E_SEQ,
    E_TIME,
    EV_ARRIVE,
    EV_DCQCN_INCREASE,
    EV_FLOW_START,
    EV_NIC_WAKE,
    EV_RTO,
    EV_SAMPLE,
    EV_STEADY_SAMPLE,
    EV_TX_DONE,
    FL_PATH_BEGIN,
    FL_SLOT,
    FL_STATE,
    FS_ACTIVE,
    FW_RP_GEN,
    FW_TIMER_GEN,
    G_CUR_SEQ,
    G_DONE_COUNT,
    G_EVENTS,
    G_FINAL_SAMPLED,
    G_FLOW_EVENT,
    G_FREE_COUNT,
    G_LOG_DUE,
    G_NOW,
    G_PFC_COUNT,
    G_SEQ,
    G_SLOT_FREE_COUNT,
    G_TEL_ROW,
    G_VIOLATION,
    G_VIOLATION_AT,
    G_VIOLATION_WHERE,
    HEADROOM_PER_EVENT,
    PT_TX_DONE_QUEUED,
    PT_WAKE_AT,
    PT_WAKE_GEN,
    STOP_ALL_DONE,
    STOP_CHUNK,
    STOP_FLOW_EVENT,
    STOP_GROW,
    STOP_IDLE,
    STOP_INVARIANT,
    STOP_STEADY,
    STOP_TIME,
    VIOLATION_TIME_BACKWARDS,
)
from wormhole_lab.engine.port import dequeue_and_transmit
from wormhole_lab.engine.qp import START_BY_CCA
from wormhole_lab.engine.qp import start as start_qp
from wormhole_lab.engine.rate_window import steady_sample
from wormhole_lab.engine.sampling import sample
from wormhole_lab.engine.wheel import first, free_rows, link_scheduled, push, take

FLOW_START_HOPS = 2
# compiled in: False in run_until_packet, whose runs have no partitions attached (CI_STEADY_INTERVAL == 0)
PARTITIONS = True


@kernel
def run_until(t, t_stop):
    """Execute events with time <= t_stop on the engine's tables ``t`` (``state.Tables``). Returns a STOP_*
    reason; state stays consistent at every return.

    With partitions on (CI_STEADY_INTERVAL > 0) it logs every flow start and completion (``flow_log``) and
    also returns when the layer above must take that log, and when a partition turns steady, so that the
    layer above can re-partition and fast-forward."""
    g, events, pk, pt, ptf, nd, fl, ff, fw = t.g, t.events, t.pk, t.pt, t.ptf, t.nd, t.fl, t.ff, t.fw
    ci, cf, rng, port_qps, path_ports, pfc_log = t.ci, t.cf, t.rng, t.port_qps, t.path_ports, t.pfc_log
    tel_time, tel_port, tel_flow, sel_ports, sel_flows = t.tel_time, t.tel_port, t.tel_flow, t.sel_ports, t.sel_flows
    child_offset, children, child_gaps, active, parts = t.child_offset, t.children, t.child_gaps, t.active, t.parts
    rate_ring, seq_ring, flow_log, pm_flow, pm_part = t.rate_ring, t.seq_ring, t.flow_log, t.pm_flow, t.pm_part
    path_marks = t.path_marks
    n_flows = fl.shape[0]
    link_scheduled(g, events)
    sampling = ci[CI_SAMPLE_INTERVAL] > 0
    partitioned = ci[CI_STEADY_INTERVAL] > 0
    while True:
        if (
            PARTITIONS
            and partitioned
            and g[G_FLOW_EVENT] >= 0
            and log_flow_event(g, pt, fl, fw, parts, path_ports, flow_log, ci, pm_flow, pm_part)
        ):
            return STOP_FLOW_EVENT
        r = first(g, events)
        if g[G_LOG_DUE] and (r < 0 or events[r, E_TIME] > g[G_NOW]):
            g[G_LOG_DUE] = 0
            g[G_CUR_SEQ] = g[G_SEQ]  # this instant is over, TX_DONEs not in the queue included
            return STOP_FLOW_EVENT
        if g[G_DONE_COUNT] == n_flows and (not sampling or g[G_FINAL_SAMPLED]):
            return STOP_ALL_DONE
        if sampling and g[G_TEL_ROW] == tel_time.shape[0]:
            return STOP_CHUNK
        if r < 0:
            return STOP_IDLE
        if events[r, E_TIME] > t_stop:
            g[G_NOW] = t_stop
            g[G_CUR_SEQ] = g[G_SEQ]
            return STOP_TIME
        if (
            g[G_FREE_COUNT] < HEADROOM_PER_EVENT
            or free_rows(g, events) < HEADROOM_PER_EVENT
            or g[G_PFC_COUNT] + HEADROOM_PER_EVENT > pfc_log.shape[0]
            or (g[G_SLOT_FREE_COUNT] == 0 and events[r, E_KIND] == EV_FLOW_START)
        ):
            return STOP_GROW
        if g[G_VIOLATION]:
            return STOP_INVARIANT
        now = events[r, E_TIME]
        kind = events[r, E_KIND]
        a = events[r, E_A]
        b = events[r, E_B]
        g[G_CUR_SEQ] = events[r, E_SEQ]
        take(g, events, r)
        if ci[CI_CHECK] and now < g[G_NOW]:
            g[G_VIOLATION] = VIOLATION_TIME_BACKWARDS
            g[G_VIOLATION_AT] = now
            g[G_VIOLATION_WHERE] = kind
        g[G_NOW] = now
        g[G_EVENTS] += 1
        if kind == EV_ARRIVE:
            handle_arrival(
                g, events, pk, pt, ptf, nd, fl, ff, fw, port_qps, path_ports, path_marks, ci, cf, rng, pfc_log,
                active, child_offset, children, child_gaps, a, now,
            )  # fmt: skip
        elif kind == EV_TX_DONE:
            pt[a, PT_TX_DONE_QUEUED] = 0
            dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, a, now)
        elif kind == EV_NIC_WAKE:
            if b != pt[a, PT_WAKE_GEN]:
                continue  # moved earlier by an HPCC rate change
            pt[a, PT_WAKE_AT] = -1
            dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, a, now)
        elif kind == EV_FLOW_START:
            if b < FLOW_START_HOPS:
                # the reference reaches AddQueuePair through two zero-delay events (Application::Start,
                # StartApplication), so a flow joins after the other events of its nanosecond
                push(g, events, now, EV_FLOW_START, a, b + 1)
                continue
            port = start_qp(g, events, pt, fl, ff, fw, port_qps, path_ports, ci, active, a, now)
            dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, port, now)
            g[G_FLOW_EVENT] = a
        elif kind == EV_SAMPLE:
            sample(g, events, pt, fl, ff, fw, ci, tel_time, tel_port, tel_flow, sel_ports, sel_flows, parts, now)
        elif kind == EV_STEADY_SAMPLE:  # scheduled only with partitions attached
            if PARTITIONS and steady_sample(g, events, fl, ff, fw, ci, cf, rate_ring, seq_ring, active, parts, now):
                return STOP_STEADY
        elif fl[a, FL_STATE] != FS_ACTIVE:
            continue  # a timer of a finished flow
        elif kind == EV_RTO:
            if b == fw[fl[a, FL_SLOT], FW_TIMER_GEN] and qp.on_rto(g, events, fl, fw, ci, a, now):
                port = path_ports[fl[a, FL_PATH_BEGIN]]
                dequeue_and_transmit(g, events, pk, pt, ptf, nd, fl, fw, port_qps, ci, rng, path_marks, port, now)
        else:
            generation = fw[fl[a, FL_SLOT], FW_RP_GEN if kind == EV_DCQCN_INCREASE else FW_TIMER_GEN]
            if b == generation:
                cca_timer(g, events, fl, ff, fw, ci, cf, a, kind, now)


# ``run_until`` without the partitioning layer's code (the flow log, steady samples: a sixth of the packet engine's
# cold compile), for runs with no partitions attached, as in packet mode. Same results: there ``partitioned`` is
# False and no EV_STEADY_SAMPLE is ever scheduled (state.attach_partitions schedules them).
run_until_packet = kernel(variant(run_until, "run_until_packet", PARTITIONS=False))


def _loop(cc: int, partitions: bool):
    """``run_until`` (``partitions``) or ``run_until_packet`` calling CCA ``cc``'s code only (dispatch.BY_CCA)."""
    name = f"run_until_{BY_CCA[cc].name}" if partitions else f"run_until_packet_{BY_CCA[cc].name}"
    return kernel(
        variant(
            run_until, name, PARTITIONS=partitions, handle_arrival=HANDLE_BY_CCA[cc], start_qp=START_BY_CCA[cc],
            cca_timer=BY_CCA[cc].on_timer,
        )
    )  # fmt: skip


# The event loops runner.advance runs, by (CC_* number, partitions attached): each compiles its CCA only, not the
# other three (about 4-5 s of a cold compile; issue 53, item 5), and only the one a run calls is compiled or loaded.
# run_until and run_until_packet above (all four CCAs, by ci[CI_CC]) are for direct calls. Module attributes too
# (run_until_dcqcn, run_until_packet_dcqcn, ...): compile_notice.loaded_kernels finds the kernels a run loaded.
EVENT_LOOPS = {(cc, partitions): _loop(cc, partitions) for cc in BY_CCA for partitions in (True, False)}
globals().update({f.py_func.__name__: f for f in EVENT_LOOPS.values()})


def event_loop(ci):
    """The event loop for a run whose constants are ``ci``: its CCA, with or without the partitioning layer."""
    return EVENT_LOOPS[int(ci[CI_CC]), bool(ci[CI_STEADY_INTERVAL] > 0)]
