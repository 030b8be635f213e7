"""HPCC as the reference's rdma-hw.cc runs it: rate-based, reacting per ACK to in-band telemetry.

Each ACK carries the INT hops its data packet collected. Per hop, utilisation
u = txRate / B + min(qlen, qlen_prev) * Rmax / (B * W) from the difference to the previous ACK's
record; the flow keeps an EWMA of the largest u over the base RTT. The reference rate R_c is
committed once per RTT (when the ACK passes the sequence sent at the last commit); with FAST_REACT
every ACK applies the tentative rate R_c / (u / eta) + AI (or R_c + AI below target).
"""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CF_U_TARGET,
    CI_FAST_REACT,
    CI_INT_MULTI,
    CI_MI_THRESH,
    CI_MIN_RATE,
    CI_MULTI_RATE,
    CI_RATE_AI,
    CI_SAMPLE_FEEDBACK,
    FF_HOP_U,
    FF_U,
    FL_BASE_RTT,
    FL_SLOT,
    FL_WIN,
    FW_CUR_RATE,
    FW_HOP_BASE,
    FW_HOP_RC,
    FW_HOP_STAGE,
    FW_LAST_UPDATE_SEQ,
    FW_MAX_RATE,
    FW_RATE,
    FW_SND_NXT,
    FW_STAGE,
    INT_BYTE_UNIT,
    INT_BYTES,
    INT_BYTES_MASK,
    INT_FIELDS,
    INT_MAX_HOPS,
    INT_QLEN,
    INT_QLEN_UNIT,
    INT_RATE,
    INT_TIME,
    INT_TIME_MASK,
    PK_INT_BASE,
    PK_INT_NHOP,
    PK_SEQ,
)
from wormhole_lab.engine.nic import change_rate


@kernel
def init(fl, ff, fw, f):
    """The CCA's starting state in the flow's slot, which arrives zeroed (``slots.take``)."""
    s = fl[f, FL_SLOT]
    fw[s, FW_CUR_RATE] = fw[s, FW_RATE]
    ff[s, FF_U] = 1.0
    for h in range(INT_MAX_HOPS):
        ff[s, FF_HOP_U + h] = 1.0
        fw[s, FW_HOP_RC + h] = fw[s, FW_RATE]


@kernel
def _bounded(fw, ci, s, rate):
    return min(max(rate, ci[CI_MIN_RATE]), fw[s, FW_MAX_RATE])


@kernel
def _next_rate(fw, ci, cf, s, reference_rate, stage, u):
    """(rate, stage) from a reference rate and a utilisation: multiplicative when over target, else additive."""
    c = u / cf[CF_U_TARGET]
    if c >= 1.0 or stage >= ci[CI_MI_THRESH]:
        return _bounded(fw, ci, s, np.int64(reference_rate / c) + ci[CI_RATE_AI]), 0
    return _bounded(fw, ci, s, reference_rate + ci[CI_RATE_AI]), stage + 1


@kernel
def _update(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now, fast):
    """UpdateRateHp: ``fast`` applies the tentative rate without committing R_c."""
    s = fl[f, FL_SLOT]
    next_seq = fw[s, FW_SND_NXT]
    nhop = pk[k, PK_INT_NHOP]
    if fw[s, FW_LAST_UPDATE_SEQ] == 0:  # first ACK: only remember the hops
        fw[s, FW_LAST_UPDATE_SEQ] = next_seq
        for i in range(min(nhop, INT_MAX_HOPS) * INT_FIELDS):
            fw[s, FW_HOP_BASE + i] = pk[k, PK_INT_BASE + i]
        return
    if nhop <= INT_MAX_HOPS:
        multi = ci[CI_INT_MULTI]
        base_rtt = fl[f, FL_BASE_RTT]
        widest_u = 0.0
        widest_dt = 0
        updated = 0  # bit h set when hop h gave a sample
        for h in range(nhop):
            new = PK_INT_BASE + h * INT_FIELDS
            old = FW_HOP_BASE + h * INT_FIELDS
            qlen = pk[k, new + INT_QLEN] * INT_QLEN_UNIT * multi
            if ci[CI_SAMPLE_FEEDBACK] and fast and qlen == 0:
                continue
            tau = (pk[k, new + INT_TIME] - fw[s, old + INT_TIME]) & INT_TIME_MASK
            bytes_delta = ((pk[k, new + INT_BYTES] - fw[s, old + INT_BYTES]) & INT_BYTES_MASK) * INT_BYTE_UNIT * multi
            line_rate = pk[k, new + INT_RATE]
            if tau > 0:  # two samples in the same nanosecond carry no rate (the reference would divide by 0)
                updated |= 1 << h
                old_qlen = fw[s, old + INT_QLEN] * INT_QLEN_UNIT * multi
                tx_rate = bytes_delta * 8 / (tau * 1e-9)
                u = tx_rate / line_rate + min(qlen, old_qlen) * fw[s, FW_MAX_RATE] / line_rate / fl[f, FL_WIN]
                if not ci[CI_MULTI_RATE]:
                    if u > widest_u:
                        widest_u = u
                        widest_dt = tau
                else:
                    t = min(tau, base_rtt)
                    ff[s, FF_HOP_U + h] = (ff[s, FF_HOP_U + h] * (base_rtt - t) + u * t) / base_rtt
            for c in range(INT_FIELDS):
                fw[s, old + c] = pk[k, new + c]
        if updated:
            if not ci[CI_MULTI_RATE]:
                dt = min(widest_dt, base_rtt)
                ff[s, FF_U] = (ff[s, FF_U] * (base_rtt - dt) + widest_u * dt) / base_rtt
                new_rate, new_stage = _next_rate(fw, ci, cf, s, fw[s, FW_CUR_RATE], fw[s, FW_STAGE], ff[s, FF_U])
            else:
                new_rate = fw[s, FW_MAX_RATE]
                new_stage = fw[s, FW_STAGE]
                for h in range(nhop):
                    if updated & (1 << h):
                        rate_h, stage_h = _next_rate(
                            fw, ci, cf, s, fw[s, FW_HOP_RC + h], fw[s, FW_HOP_STAGE + h], ff[s, FF_HOP_U + h]
                        )
                        if not fast:
                            fw[s, FW_HOP_RC + h] = rate_h
                            fw[s, FW_HOP_STAGE + h] = stage_h
                    else:
                        rate_h = fw[s, FW_HOP_RC + h]
                    new_rate = min(new_rate, rate_h)
            change_rate(g, events, pt, fl, fw, ci, f, new_rate, now)
            if not fast:
                fw[s, FW_CUR_RATE] = new_rate
                fw[s, FW_STAGE] = new_stage
    if not fast and next_seq > fw[s, FW_LAST_UPDATE_SEQ]:
        fw[s, FW_LAST_UPDATE_SEQ] = next_seq


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    s = fl[f, FL_SLOT]
    if pk[k, PK_SEQ] > fw[s, FW_LAST_UPDATE_SEQ]:
        _update(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now, False)
    elif ci[CI_FAST_REACT]:
        _update(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now, True)
