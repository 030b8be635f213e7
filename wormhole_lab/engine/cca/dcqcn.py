"""DCQCN, the Mellanox variant exactly as the reference's rdma-hw.cc runs it (timers only, no byte counter).

The CNP is the ECN echo on a per-packet ACK. The first CNP sets alpha = 1 and starts the alpha
timer and the decrease-check timer (1 ns later, so a decrease sees that period's alpha update).
"""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CF_G,
    CF_RATE_FIRST_CNP,
    CI_ALPHA_INTERVAL,
    CI_CLAMP,
    CI_DECREASE_INTERVAL,
    CI_FAST_RECOVERY,
    CI_MIN_RATE,
    CI_RATE_AI,
    CI_RATE_HAI,
    CI_RP_TIMER,
    EV_DCQCN_ALPHA,
    EV_DCQCN_DECREASE,
    EV_DCQCN_INCREASE,
    FF_ALPHA,
    FL_SLOT,
    FW_ALPHA_CNP,
    FW_DEC_CNP,
    FW_FIRST_CNP,
    FW_MAX_RATE,
    FW_RATE,
    FW_RP_GEN,
    FW_STAGE,
    FW_TARGET,
    FW_TIMER_GEN,
    PK_ECN,
)
from wormhole_lab.engine.wheel import push


@kernel
def init(fl, ff, fw, f):
    """The CCA's starting state in the flow's slot, which arrives zeroed (``slots.take``)."""
    s = fl[f, FL_SLOT]
    fw[s, FW_TARGET] = fw[s, FW_RATE]
    fw[s, FW_FIRST_CNP] = 1
    ff[s, FF_ALPHA] = 1.0


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    s = fl[f, FL_SLOT]
    if not pk[k, PK_ECN]:  # the CNP is the ECN echo on the ACK
        return
    fw[s, FW_ALPHA_CNP] = 1
    fw[s, FW_DEC_CNP] = 1
    if fw[s, FW_FIRST_CNP]:
        ff[s, FF_ALPHA] = 1.0
        fw[s, FW_ALPHA_CNP] = 0
        push(g, events, now + ci[CI_ALPHA_INTERVAL], EV_DCQCN_ALPHA, f, fw[s, FW_TIMER_GEN])
        push(g, events, now + ci[CI_DECREASE_INTERVAL] + 1000, EV_DCQCN_DECREASE, f, fw[s, FW_TIMER_GEN])
        rate = np.int64(cf[CF_RATE_FIRST_CNP] * fw[s, FW_RATE])
        fw[s, FW_RATE] = rate
        fw[s, FW_TARGET] = rate
        fw[s, FW_FIRST_CNP] = 0


@kernel
def on_timer(g, events, fl, ff, fw, ci, cf, f, kind, now):
    """One of the three timers fired (stale generations were filtered by the caller)."""
    s = fl[f, FL_SLOT]
    if kind == EV_DCQCN_ALPHA:
        g_ = cf[CF_G]
        alpha = (1.0 - g_) * ff[s, FF_ALPHA]
        if fw[s, FW_ALPHA_CNP]:
            alpha += g_
        ff[s, FF_ALPHA] = alpha
        fw[s, FW_ALPHA_CNP] = 0
        push(g, events, now + ci[CI_ALPHA_INTERVAL], EV_DCQCN_ALPHA, f, fw[s, FW_TIMER_GEN])
    elif kind == EV_DCQCN_DECREASE:
        push(g, events, now + ci[CI_DECREASE_INTERVAL], EV_DCQCN_DECREASE, f, fw[s, FW_TIMER_GEN])
        if fw[s, FW_DEC_CNP]:
            # without CLAMP_TARGET_RATE the target only follows the rate after an increase event
            if ci[CI_CLAMP] or fw[s, FW_STAGE] != 0:
                fw[s, FW_TARGET] = fw[s, FW_RATE]
            rate = np.int64(fw[s, FW_RATE] * (1.0 - ff[s, FF_ALPHA] / 2.0))
            fw[s, FW_RATE] = max(ci[CI_MIN_RATE], rate)
            fw[s, FW_STAGE] = 0
            fw[s, FW_DEC_CNP] = 0
            fw[s, FW_RP_GEN] += 1
            push(g, events, now + ci[CI_RP_TIMER], EV_DCQCN_INCREASE, f, fw[s, FW_RP_GEN])
    else:
        push(g, events, now + ci[CI_RP_TIMER], EV_DCQCN_INCREASE, f, fw[s, FW_RP_GEN])
        stage = fw[s, FW_STAGE]
        if stage == ci[CI_FAST_RECOVERY]:
            fw[s, FW_TARGET] = min(fw[s, FW_TARGET] + ci[CI_RATE_AI], fw[s, FW_MAX_RATE])
        elif stage > ci[CI_FAST_RECOVERY]:
            fw[s, FW_TARGET] = min(fw[s, FW_TARGET] + ci[CI_RATE_HAI], fw[s, FW_MAX_RATE])
        fw[s, FW_RATE] = fw[s, FW_RATE] // 2 + fw[s, FW_TARGET] // 2
        fw[s, FW_STAGE] = stage + 1


@kernel
def resume_timers(g, events, fl, fw, ci, f, t):
    """Start the alpha, decrease-check and increase timers at ``t`` for a flow whose DCQCN state was restored
    from a memoized transient (its own first CNP, which would have started them, was skipped)."""
    s = fl[f, FL_SLOT]
    push(g, events, t + ci[CI_ALPHA_INTERVAL], EV_DCQCN_ALPHA, f, fw[s, FW_TIMER_GEN])
    push(g, events, t + ci[CI_DECREASE_INTERVAL], EV_DCQCN_DECREASE, f, fw[s, FW_TIMER_GEN])
    push(g, events, t + ci[CI_RP_TIMER], EV_DCQCN_INCREASE, f, fw[s, FW_RP_GEN])
