"""The flow-level event loop: flow starts, drains (last byte on the wire) and completions, in time order.

Events at one instant are taken together, then rates are recomputed once for the instant, incrementally
(``maxmin.refill``): only the flows whose max-min rate can change, found from the ports where flows started or
drained. Every other flow keeps its rate, and its pending drain stays valid. A flow's drain is moved only when
its rate changed. Three sources feed the loop, merged in (time, sequence) order as one queue would pop them: the
starts scheduled before the run (a sorted list), the drains (a heap with one entry per sending flow, moved in
place), and the engine's event queue (completions, and starts of flows that waited for others). Dependencies are
resolved by the packet engine's own ``qp.complete``, so a flow waiting for others starts exactly as it would in
packet mode: at the last one's completion plus its gap, not before its start. With the flow table's
``release_on_delivery`` (``CI_RELEASE_ON_DELIVERY``) they are released by ``qp.release`` at the last byte's delivery
instead: the completion less the ACK's unqueued way back (``model.flow_terms``), as for a flow alone in packet mode.
"""

import math
from typing import NamedTuple

import numpy as np

from wormhole_lab.engine import qp
from wormhole_lab.engine.layout import (
    CI_RELEASE_ON_DELIVERY,
    E_A,
    E_KIND,
    E_SEQ,
    E_TIME,
    EV_FLOW_START,
    FL_ACTIVE_POS,
    FL_DELIVERED_AT,
    FL_FINISH,
    FL_STARTED_AT,
    FL_STATE,
    FS_ACTIVE,
    FS_DONE,
    G_DONE_COUNT,
    G_EVENTS,
    G_N_ACTIVE,
    G_NOW,
    G_SEQ,
    STOP_ALL_DONE,
    STOP_GROW,
    STOP_IDLE,
    STOP_TIME,
)
from wormhole_lab.engine.wheel import first, free_rows, link_scheduled, push, take
from wormhole_lab.flowlevel.jit import flow_kernel
from wormhole_lab.flowlevel.maxmin import (
    S_DRAINS,
    S_EPOCH,
    S_LARGEST,
    S_LEVELS,
    S_N,
    S_NEXT_START,
    S_RECOMPUTES,
    S_RERATED,
    S_ROUNDS,
    S_VISITED,
    mark_port,
    refill,
    waterfill,
)

EV_DRAIN = 100  # a flow's last byte left at its current rate (kept in the loop's drain heap, not the queue)
EV_COMPLETE = 101  # a = flow: the ACK of its last byte is back, a fixed latency after the drain
EV_DELIVER = 102  # a = flow: its last byte reached the receiver (queued only with CI_RELEASE_ON_DELIVERY)

__all__ = [
    "S_DRAINS",
    "S_EPOCH",
    "S_LARGEST",
    "S_LEVELS",
    "S_N",
    "S_NEXT_START",
    "S_RECOMPUTES",
    "S_RERATED",
    "S_ROUNDS",
    "S_VISITED",
]

ROOM_PER_FLOW = 3  # queue rows kept free per flow (an instant queues at most a delivery, a completion and a start)


class FlowTables(NamedTuple):
    """What the loop keeps besides the engine's tables (``run.FlowLevel`` builds it)."""

    # the flow-port graph: flow f crosses flow_ports[flow_off[f] : flow_off[f + 1]]; the port_cnt[p] flows on
    # port p now are port_flows[port_off[p] : port_off[p] + port_cnt[p]], where flow_ports[e]'s entry is at
    # position entry_pos[e]
    flow_off: np.ndarray
    flow_ports: np.ndarray
    port_off: np.ndarray
    port_flows: np.ndarray
    port_cnt: np.ndarray
    entry_pos: np.ndarray
    # the model (model.py): per port its capacity, per flow its bytes on the wire, fixed latency and the part of
    # it until the last byte is delivered
    cap: np.ndarray
    wire: np.ndarray
    latency: np.ndarray
    delivery: np.ndarray
    # per flow: its rate, the wire bytes it had left at updated_at, and the port that froze it in the last fill
    # that recomputed it (its bottleneck; -1 before its first)
    rate: np.ndarray
    remaining: np.ndarray
    updated_at: np.ndarray
    neck: np.ndarray
    # per port: the sum of its flows' rates, and how many active flows have it as their bottleneck
    load: np.ndarray
    neck_cnt: np.ndarray
    # scratch of one instant: marks stamped with the instant's epoch, the recomputed flows and the ports of the
    # region, and the fills' own (per port: res, cnt, port_level, port_ver, dirty, dirty_mark; per flow: frozen,
    # fresh, share, outside, seen; the heap of levels: hkey, hitem, hver, P + F + flow-port entries long)
    flow_mark: np.ndarray
    port_mark: np.ndarray
    comp_flows: np.ndarray
    comp_ports: np.ndarray
    res: np.ndarray
    cnt: np.ndarray
    frozen: np.ndarray
    fresh: np.ndarray
    share: np.ndarray
    port_level: np.ndarray
    port_ver: np.ndarray
    dirty: np.ndarray
    dirty_mark: np.ndarray
    outside: np.ndarray
    seen: np.ndarray
    changed: np.ndarray
    changed_mark: np.ndarray
    loose: np.ndarray
    loose_mark: np.ndarray
    delta: np.ndarray
    prev_neck: np.ndarray
    hkey: np.ndarray
    hitem: np.ndarray
    hver: np.ndarray
    # the flow starts that were scheduled before the run, in (time, sequence) order, taken out of the event queue
    # (its overflow heap would hold them all): the loop merges them with the queue, next at stats[S_NEXT_START]
    start_time: np.ndarray
    start_seq: np.ndarray
    start_flow: np.ndarray
    # the pending drains, one per sending flow: a binary heap on (time, sequence) of stats[S_DRAINS] entries, and
    # each flow's position in it (-1: none). A new rate moves the flow's entry: no outdated drain is queued.
    drain_time: np.ndarray
    drain_seq: np.ndarray
    drain_flow: np.ndarray
    drain_pos: np.ndarray
    stats: np.ndarray  # S_* counters (maxmin.py)


@flow_kernel
def _join(f, flow_off, flow_ports, port_off, port_flows, port_cnt, entry_pos):
    """Put flow ``f`` on the lists of the ports it crosses."""
    for e in range(flow_off[f], flow_off[f + 1]):
        p = flow_ports[e]
        entry_pos[e] = port_cnt[p]
        port_flows[port_off[p] + port_cnt[p]] = f
        port_cnt[p] += 1


@flow_kernel
def _leave(f, flow_off, flow_ports, port_off, port_flows, port_cnt, entry_pos):
    """Take flow ``f`` off its ports' lists: the last flow of each list moves into its slot."""
    for e in range(flow_off[f], flow_off[f + 1]):
        p = flow_ports[e]
        port_cnt[p] -= 1
        moved = port_flows[port_off[p] + port_cnt[p]]
        port_flows[port_off[p] + entry_pos[e]] = moved
        for m in range(flow_off[moved], flow_off[moved + 1]):
            if flow_ports[m] == p:
                entry_pos[m] = entry_pos[e]


NO_EVENT = -1
FROM_STARTS = -2
FROM_DRAINS = -3


@flow_kernel
def _before(t1, s1, t2, s2):
    return t1 < t2 or (t1 == t2 and s1 < s2)


# The drain heap's helpers take its arrays (dt, ds, df: time, sequence and flow per entry; dpos: each flow's entry)
# rather than the FlowTables: a function of the whole tuple takes its 50 arrays as arguments, which costs compile
# time in each such helper.


@flow_kernel
def _drain_sift(dt, ds, df, dpos, size, i):
    """Move entry ``i`` of the drain heap (``size`` entries) up or down to its place."""
    t, s, f = dt[i], ds[i], df[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(t, s, dt[parent], ds[parent]):
            break
        dt[i], ds[i], df[i] = dt[parent], ds[parent], df[parent]
        dpos[df[i]] = i
        i = parent
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _before(dt[c + 1], ds[c + 1], dt[c], ds[c]):
            c += 1
        if not _before(dt[c], ds[c], t, s):
            break
        dt[i], ds[i], df[i] = dt[c], ds[c], df[c]
        dpos[df[i]] = i
        i = c
    dt[i], ds[i], df[i] = t, s, f
    dpos[f] = i


@flow_kernel
def _drain_at(dt, ds, df, dpos, stats, f, time, seq):
    """Schedule flow ``f``'s drain at ``time`` (sequence ``seq``), replacing the one it had."""
    i = dpos[f]
    if i < 0:
        i = stats[S_DRAINS]
        stats[S_DRAINS] += 1
        df[i] = f
    dt[i], ds[i] = time, seq
    _drain_sift(dt, ds, df, dpos, stats[S_DRAINS], i)


@flow_kernel
def _drain_pop(dt, ds, df, dpos, stats):
    """Remove the earliest drain (the heap's top)."""
    dpos[df[0]] = -1
    stats[S_DRAINS] -= 1
    last = stats[S_DRAINS]
    if last > 0:
        dt[0], ds[0], df[0] = dt[last], ds[last], df[last]
        _drain_sift(dt, ds, df, dpos, last, 0)


@flow_kernel
def _next(events, r, start_time, start_seq, dt, ds, stats):
    """The next event in (time, sequence) order: (its queue row, time), (FROM_STARTS, time) when it is the next of
    the start list, (FROM_DRAINS, time) when it is the drain heap's top, or (NO_EVENT, 0). ``r``: the queue's
    first row (``wheel.first``, -1 when empty), which the loop reads again only after the queue changed (a scan of
    the wheel's buckets)."""
    best, t, s = NO_EVENT, 0, 0
    if r >= 0:
        best, t, s = r, events[r, E_TIME], events[r, E_SEQ]
    i = stats[S_NEXT_START]
    if i < start_time.shape[0] and (best == NO_EVENT or _before(start_time[i], start_seq[i], t, s)):
        best, t, s = FROM_STARTS, start_time[i], start_seq[i]
    if stats[S_DRAINS] > 0 and (best == NO_EVENT or _before(dt[0], ds[0], t, s)):
        best, t = FROM_DRAINS, dt[0]
    return best, t


@flow_kernel
def run_until(t, ft, incremental, t_stop):
    """Process instants with time <= t_stop on the engine's tables ``t`` (``state.Tables``: the clock, event
    queue, flow rows, active list and dependants) and the loop's ``ft`` (``FlowTables``). Returns STOP_ALL_DONE,
    STOP_IDLE (no event left, flows unfinished), STOP_TIME or STOP_GROW (the event queue needs room: grow it and
    call again).

    ``incremental`` False water-fills every active flow at every instant (``maxmin.waterfill``, the reference
    the incremental path is tested against) instead of ``maxmin.refill``."""
    g, events, fl, active, child_offset, children = t.g, t.events, t.fl, t.active, t.child_offset, t.children
    child_gaps = t.child_gaps
    ci, delivery = t.ci, ft.delivery
    flow_off, flow_ports, port_off, port_flows = ft.flow_off, ft.flow_ports, ft.port_off, ft.port_flows
    port_cnt, entry_pos, wire, latency, stats = ft.port_cnt, ft.entry_pos, ft.wire, ft.latency, ft.stats
    rate, remaining, updated_at, share, neck = ft.rate, ft.remaining, ft.updated_at, ft.share, ft.neck
    flow_mark, port_mark, comp_flows, comp_ports = ft.flow_mark, ft.port_mark, ft.comp_flows, ft.comp_ports
    load, neck_cnt, changed, changed_mark = ft.load, ft.neck_cnt, ft.changed, ft.changed_mark
    dt, ds, df, dpos, start_time, start_seq = (
        ft.drain_time,
        ft.drain_seq,
        ft.drain_flow,
        ft.drain_pos,
        ft.start_time,
        ft.start_seq,
    )
    n = fl.shape[0]
    n_all_ports = port_cnt.shape[0]
    link_scheduled(g, events)
    wr = first(g, events)  # read again after each change to the queue
    while True:
        if g[G_DONE_COUNT] == n:
            return STOP_ALL_DONE
        r, now = _next(events, wr, start_time, start_seq, dt, ds, stats)
        if r == NO_EVENT:
            return STOP_IDLE
        if now > t_stop:
            g[G_NOW] = t_stop
            return STOP_TIME
        if free_rows(g, events) < ROOM_PER_FLOW * n:
            return STOP_GROW
        g[G_NOW] = now
        stats[S_EPOCH] += 1
        epoch = stats[S_EPOCH]
        n_changed = 0
        while True:
            r, t_next = _next(events, wr, start_time, start_seq, dt, ds, stats)
            if r == NO_EVENT or t_next != now:
                break
            if r == FROM_STARTS:
                kind, f = EV_FLOW_START, ft.start_flow[stats[S_NEXT_START]]
                stats[S_NEXT_START] += 1
            elif r == FROM_DRAINS:
                kind, f = EV_DRAIN, df[0]
                _drain_pop(dt, ds, df, dpos, stats)
            else:
                kind, f = events[r, E_KIND], events[r, E_A]
                take(g, events, r)
                wr = first(g, events)
            g[G_EVENTS] += 1
            if kind == EV_FLOW_START:
                fl[f, FL_STATE] = FS_ACTIVE
                fl[f, FL_STARTED_AT] = now
                fl[f, FL_ACTIVE_POS] = g[G_N_ACTIVE]  # qp.complete takes it off the engine's active list
                active[g[G_N_ACTIVE]] = f
                g[G_N_ACTIVE] += 1
                remaining[f] = wire[f]
                rate[f] = 0.0
                updated_at[f] = now
                neck[f] = -1
                _join(f, flow_off, flow_ports, port_off, port_flows, port_cnt, entry_pos)
            elif kind == EV_DRAIN:
                _leave(f, flow_off, flow_ports, port_off, port_flows, port_cnt, entry_pos)
                for e in range(flow_off[f], flow_off[f + 1]):
                    q = flow_ports[e]
                    load[q] = load[q] - rate[f] if port_cnt[q] > 0 else 0.0  # an empty port sheds the drift
                if neck[f] >= 0:
                    neck_cnt[neck[f]] -= 1
                    neck[f] = -1
                remaining[f] = 0.0
                rate[f] = 0.0
                # known now (a fixed latency on): set at the drain rather than at an EV_DELIVER, which is queued
                # only with the flag (one more event per flow would change events_executed of runs without it);
                # FlowLevel.finish unsets one after the run's end
                fl[f, FL_DELIVERED_AT] = now + delivery[f]
                if ci[CI_RELEASE_ON_DELIVERY]:
                    push(g, events, now + delivery[f], EV_DELIVER, f, 0)
                push(g, events, now + latency[f], EV_COMPLETE, f, 0)
                wr = first(g, events)
            elif kind == EV_DELIVER:
                qp.release(g, events, fl, child_offset, children, child_gaps, f, now)
                wr = first(g, events)  # it queued the starts of flows that waited for this one
                continue  # a delivery frees no capacity: the drain did
            else:
                fl[f, FL_STATE] = FS_DONE
                fl[f, FL_FINISH] = now
                qp.complete(g, events, fl, ci, active, child_offset, children, child_gaps, f, now)
                wr = first(g, events)  # it queued the starts of flows that waited for this one
                continue  # a completion frees no capacity: the drain did
            for e in range(flow_off[f], flow_off[f + 1]):
                n_changed = mark_port(flow_ports[e], epoch, changed_mark, changed, n_changed)
        if n_changed == 0:
            continue
        if incremental:
            n_flows = refill(ft, n_changed, epoch)
        else:  # every active flow and port (with the port lists, every flow reachable from the active ports)
            n_ports = 0
            for p in range(n_all_ports):
                if port_cnt[p] > 0:
                    n_ports = mark_port(p, epoch, port_mark, comp_ports, n_ports)
            n_flows = 0
            for i in range(n_ports):
                p = comp_ports[i]
                for j in range(port_off[p], port_off[p] + port_cnt[p]):
                    f = port_flows[j]
                    if flow_mark[f] != epoch:
                        flow_mark[f] = epoch
                        comp_flows[n_flows] = f
                        n_flows += 1
            stats[S_LEVELS] += waterfill(ft, n_flows, n_ports, epoch)
        if n_flows == 0:
            continue
        stats[S_RECOMPUTES] += 1
        stats[S_RERATED] += n_flows
        stats[S_LARGEST] = max(stats[S_LARGEST], n_flows)
        for i in range(n_flows):
            f = comp_flows[i]
            if share[f] == rate[f]:
                continue  # untouched, as if its component had not been recomputed
            remaining[f] = max(remaining[f] - rate[f] * (now - updated_at[f]), 0.0)
            updated_at[f] = now
            for e in range(flow_off[f], flow_off[f + 1]):
                load[flow_ports[e]] += share[f] - rate[f]
            rate[f] = share[f]
            seq = g[G_SEQ]  # the drain takes a sequence number as a push would: same order of same-time events
            g[G_SEQ] = seq + 1
            _drain_at(dt, ds, df, dpos, stats, f, now + math.ceil(remaining[f] / rate[f]), seq)
