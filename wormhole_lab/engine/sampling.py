"""Telemetry sampling inside the kernel: one row of the current chunk per sampling instant."""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_SAMPLE_END,
    CI_SAMPLE_IDLE,
    CI_SAMPLE_INTERVAL,
    CI_VAR_WIN,
    E_KIND,
    E_TIME,
    EV_NONE,
    EV_SAMPLE,
    EV_STEADY_SAMPLE,
    FF_ALPHA,
    FF_U,
    FL_PART,
    FL_SIZE,
    FL_SLOT,
    FL_STATE,
    FL_WIN,
    FS_ACTIVE,
    FS_DONE,
    FW_LAST_RTT,
    FW_MAX_RATE,
    FW_RATE,
    FW_SKIP_CURRENT,
    FW_SND_NXT,
    FW_SND_UNA,
    FW_TARGET,
    G_DONE_COUNT,
    G_FINAL_SAMPLED,
    G_N_ACTIVE,
    G_PKTS_IN_USE,
    G_TEL_ROW,
    PA_SKIP_END,
    PA_SKIP_START,
    PT_DATA_BYTES,
    PT_ECN_MARKS,
    PT_PART,
    PT_PAUSED,
    PT_SKIP_CURRENT,
    PT_SKIPPED_BYTES,
    PT_TX_BYTES,
    SAMPLE_NO_END,
    TF_ACKED,
    TF_ACTIVE,
    TF_ALPHA,
    TF_INFLIGHT,
    TF_RATE,
    TF_RTT,
    TF_SKIPPING,
    TF_TARGET,
    TF_U,
    TF_WINDOW,
    TP_ECN_MARKS,
    TP_PAUSED,
    TP_QUEUE,
    TP_TX_BYTES,
)
from wormhole_lab.engine.wheel import push, rows


@kernel
def _skip_progress(parts, part, now):
    """Fraction of the partition's current skip that has elapsed (1 when it is not skipping)."""
    start, end = parts[part, PA_SKIP_START], parts[part, PA_SKIP_END]
    if end <= now or end <= start:
        return 1.0
    return (now - start) / (end - start)


@kernel
def next_sample_time(g, events, now, interval):
    """When a periodic sampler next needs to run: one ``interval`` on, or, while the network is idle (no flow
    active, no packet anywhere), the first point of its grid at or after the next other event, so idle time
    costs no samples; -1 when no other event is left (nothing can change any more)."""
    nxt = now + interval
    if g[G_N_ACTIVE] > 0 or g[G_PKTS_IN_USE] > 0:
        return nxt
    first = -1
    for r in rows(events):
        kind = events[r, E_KIND]
        if kind == EV_NONE or kind == EV_SAMPLE or kind == EV_STEADY_SAMPLE:
            continue
        if first < 0 or events[r, E_TIME] < first:
            first = events[r, E_TIME]
    if first < 0:
        return -1
    if first <= nxt:
        return nxt
    return now + (first - now + interval - 1) // interval * interval


@kernel
def sample(g, events, pt, fl, ff, fw, ci, tel_time, tel_port, tel_flow, sel_ports, sel_flows, parts, now):
    """Record the selected ports and flows, then schedule the next sample (or stop after the last flow)."""
    row = g[G_TEL_ROW]
    tel_time[row] = now
    for i in range(sel_ports.shape[0]):
        p = sel_ports[i]
        # a skip credits its bytes at once; spread them over the skip so the series stays a rate
        tx = pt[p, PT_TX_BYTES] + pt[p, PT_SKIPPED_BYTES]
        if pt[p, PT_PART] >= 0:
            tx -= np.int64((1.0 - _skip_progress(parts, pt[p, PT_PART], now)) * pt[p, PT_SKIP_CURRENT])
        tel_port[row, i, TP_TX_BYTES] = tx
        tel_port[row, i, TP_QUEUE] = pt[p, PT_DATA_BYTES]
        tel_port[row, i, TP_PAUSED] = pt[p, PT_PAUSED]
        tel_port[row, i, TP_ECN_MARKS] = pt[p, PT_ECN_MARKS]
    for j in range(sel_flows.shape[0]):
        f = sel_flows[j]
        s = fl[f, FL_SLOT]
        active = fl[f, FL_STATE] == FS_ACTIVE
        tel_flow[row, j, TF_ACTIVE] = active
        # a flow's sender state lives in its slot while it is active; before and after, nothing is sent or in flight
        window = fl[f, FL_WIN]
        if active:
            if ci[CI_VAR_WIN] and window > 0:
                window = max(1, window * fw[s, FW_RATE] // fw[s, FW_MAX_RATE])
            acked = fw[s, FW_SND_UNA]
            if fl[f, FL_PART] >= 0:
                acked -= np.int64((1.0 - _skip_progress(parts, fl[f, FL_PART], now)) * fw[s, FW_SKIP_CURRENT])
            tel_flow[row, j, TF_RATE] = fw[s, FW_RATE]
            tel_flow[row, j, TF_ACKED] = acked
            tel_flow[row, j, TF_INFLIGHT] = fw[s, FW_SND_NXT] - fw[s, FW_SND_UNA]
            tel_flow[row, j, TF_ALPHA] = ff[s, FF_ALPHA]
            tel_flow[row, j, TF_TARGET] = fw[s, FW_TARGET]
            tel_flow[row, j, TF_U] = ff[s, FF_U]
            tel_flow[row, j, TF_RTT] = fw[s, FW_LAST_RTT]
        else:
            tel_flow[row, j, TF_ACKED] = fl[f, FL_SIZE] if fl[f, FL_STATE] == FS_DONE else 0
            for c in (TF_RATE, TF_INFLIGHT, TF_ALPHA, TF_TARGET, TF_U, TF_RTT):
                tel_flow[row, j, c] = 0.0
        tel_flow[row, j, TF_WINDOW] = window
        tel_flow[row, j, TF_SKIPPING] = fl[f, FL_PART] >= 0 and parts[fl[f, FL_PART], PA_SKIP_END] > now
    g[G_TEL_ROW] = row + 1
    end = ci[CI_SAMPLE_END]
    # after the last completion only a sampler asked to cover idle time up to a window's end goes on
    done = g[G_DONE_COUNT] == fl.shape[0] and (not ci[CI_SAMPLE_IDLE] or end == SAMPLE_NO_END)
    if now >= end or done:
        g[G_FINAL_SAMPLED] = 1
        return
    if ci[CI_SAMPLE_IDLE]:
        push(g, events, now + ci[CI_SAMPLE_INTERVAL], EV_SAMPLE, 0, 0)
        return
    nxt = next_sample_time(g, events, now, ci[CI_SAMPLE_INTERVAL])
    if nxt < 0:
        g[G_FINAL_SAMPLED] = 1
    else:
        push(g, events, nxt, EV_SAMPLE, 0, 0)
