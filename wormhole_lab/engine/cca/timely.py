"""TIMELY as the reference's rdma-hw.cc runs it: once per RTT, from the RTT of the timestamped ACK.

gradient = EWMA(RTT difference) / minRTT. Below T_low, or with a non-positive gradient, the rate
grows by AI (HAI after 5 consecutive increases); above T_high it shrinks by beta x (1 - T_high/RTT);
otherwise by beta x gradient. The RTT is measured from the data packet's send time echoed in the ACK.
"""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CF_TIMELY_ALPHA,
    CF_TIMELY_BETA,
    CI_MIN_RATE,
    CI_MIN_RTT,
    CI_RATE_AI,
    CI_RATE_HAI,
    CI_T_HIGH,
    CI_T_LOW,
    FF_RTT_DIFF,
    FL_SLOT,
    FW_CUR_RATE,
    FW_LAST_RTT,
    FW_LAST_UPDATE_SEQ,
    FW_MAX_RATE,
    FW_RATE,
    FW_SND_NXT,
    FW_STAGE,
    PK_SEQ,
    PK_TS,
)

HAI_AFTER = 5  # consecutive increases before hyper increase (rdma-hw.cc)


@kernel
def init(fl, ff, fw, f):
    """The CCA's starting state in the flow's slot, which arrives zeroed (``slots.take``)."""
    s = fl[f, FL_SLOT]
    fw[s, FW_CUR_RATE] = fw[s, FW_RATE]


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    s = fl[f, FL_SLOT]
    if pk[k, PK_SEQ] <= fw[s, FW_LAST_UPDATE_SEQ]:
        return  # the reference's TIMELY has no per-ACK reaction
    rtt = now - pk[k, PK_TS]
    next_seq = fw[s, FW_SND_NXT]
    if fw[s, FW_LAST_UPDATE_SEQ] != 0:
        alpha = cf[CF_TIMELY_ALPHA]
        beta = cf[CF_TIMELY_BETA]
        rtt_diff = (1.0 - alpha) * ff[s, FF_RTT_DIFF] + alpha * (rtt - fw[s, FW_LAST_RTT])
        gradient = rtt_diff / ci[CI_MIN_RTT]
        increase = False
        c = 0.0
        if rtt < ci[CI_T_LOW]:
            increase = True
        elif rtt > ci[CI_T_HIGH]:
            c = 1.0 - beta * (1.0 - ci[CI_T_HIGH] / rtt)
        elif gradient <= 0:
            increase = True
        else:
            c = max(0.0, 1.0 - beta * gradient)
        if increase:
            step = ci[CI_RATE_AI] if fw[s, FW_STAGE] < HAI_AFTER else ci[CI_RATE_HAI]
            fw[s, FW_RATE] = min(fw[s, FW_CUR_RATE] + step, fw[s, FW_MAX_RATE])
            fw[s, FW_STAGE] += 1
        else:
            fw[s, FW_RATE] = max(ci[CI_MIN_RATE], np.int64(fw[s, FW_CUR_RATE] * c))
            fw[s, FW_STAGE] = 0
        fw[s, FW_CUR_RATE] = fw[s, FW_RATE]
        ff[s, FF_RTT_DIFF] = rtt_diff
    if next_seq > fw[s, FW_LAST_UPDATE_SEQ]:
        fw[s, FW_LAST_UPDATE_SEQ] = next_seq
        fw[s, FW_LAST_RTT] = rtt
