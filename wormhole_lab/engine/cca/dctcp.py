"""DCTCP, the rate-based variant of the reference (rdma-hw.cc HandleAckDctcp).

alpha is updated once per window of data from the fraction of ECN-echoed ACKs; an ECN echo
outside CWR cuts the rate by alpha/2 and enters CWR until the data sent so far is ACKed;
otherwise the rate grows by DCTCP_RATE_AI once per window.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CF_G,
    CI_DCTCP_RATE_AI,
    CI_MIN_RATE,
    CI_PAYLOAD,
    FF_ALPHA,
    FL_SLOT,
    FW_BATCH,
    FW_CA_STATE,
    FW_ECN_CNT,
    FW_HIGH_SEQ,
    FW_LAST_UPDATE_SEQ,
    FW_MAX_RATE,
    FW_RATE,
    FW_SND_NXT,
    PK_ECN,
    PK_SEQ,
)


@kernel
def init(fl, ff, fw, f):
    """The CCA's starting state in the flow's slot, which arrives zeroed (``slots.take``)."""
    s = fl[f, FL_SLOT]
    ff[s, FF_ALPHA] = 1.0


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    s = fl[f, FL_SLOT]
    ack_seq = pk[k, PK_SEQ]
    cnp = pk[k, PK_ECN]
    mtu = ci[CI_PAYLOAD]
    new_batch = False
    if cnp:
        fw[s, FW_ECN_CNT] += 1
    if ack_seq > fw[s, FW_LAST_UPDATE_SEQ]:
        new_batch = True
        if fw[s, FW_LAST_UPDATE_SEQ] == 0:
            fw[s, FW_LAST_UPDATE_SEQ] = fw[s, FW_SND_NXT]
            fw[s, FW_BATCH] = fw[s, FW_SND_NXT] // mtu + 1
        else:
            frac = min(1.0, fw[s, FW_ECN_CNT] / fw[s, FW_BATCH])
            ff[s, FF_ALPHA] = (1.0 - cf[CF_G]) * ff[s, FF_ALPHA] + cf[CF_G] * frac
            fw[s, FW_LAST_UPDATE_SEQ] = fw[s, FW_SND_NXT]
            fw[s, FW_ECN_CNT] = 0
            fw[s, FW_BATCH] = (fw[s, FW_SND_NXT] - ack_seq) // mtu + 1
    if fw[s, FW_CA_STATE] == 1 and ack_seq > fw[s, FW_HIGH_SEQ]:
        fw[s, FW_CA_STATE] = 0
    if cnp and fw[s, FW_CA_STATE] == 0:
        fw[s, FW_CA_STATE] = 1
        fw[s, FW_HIGH_SEQ] = fw[s, FW_SND_NXT]
        fw[s, FW_RATE] = max(ci[CI_MIN_RATE], int(fw[s, FW_RATE] * (1.0 - ff[s, FF_ALPHA] / 2.0)))
    if fw[s, FW_CA_STATE] == 0 and new_batch:
        fw[s, FW_RATE] = min(fw[s, FW_MAX_RATE], fw[s, FW_RATE] + ci[CI_DCTCP_RATE_AI])
