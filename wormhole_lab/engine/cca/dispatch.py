"""The one table that maps CC_MODE numbers to CCA modules inside the kernel."""

from wormhole_lab.engine.cca import dcqcn, dctcp
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import CC_DCQCN, CC_DCTCP, CI_CC


@kernel
def init(fl, ff, ci, f):
    cc = ci[CI_CC]
    if cc == CC_DCQCN:
        dcqcn.init(fl, ff, f)
    elif cc == CC_DCTCP:
        dctcp.init(fl, ff, f)


@kernel
def on_ack(g, heap, fl, ff, ci, cf, f, ack_seq, cnp, now):
    cc = ci[CI_CC]
    if cc == CC_DCQCN:
        dcqcn.on_ack(g, heap, fl, ff, ci, cf, f, ack_seq, cnp, now)
    elif cc == CC_DCTCP:
        dctcp.on_ack(g, heap, fl, ff, ci, cf, f, ack_seq, cnp, now)


@kernel
def on_timer(g, heap, fl, ff, ci, cf, f, kind, now):
    if ci[CI_CC] == CC_DCQCN:
        dcqcn.on_timer(g, heap, fl, ff, ci, cf, f, kind, now)
