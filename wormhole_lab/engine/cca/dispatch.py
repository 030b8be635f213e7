"""The one table that maps CC_MODE numbers to CCA modules inside the kernel."""

from wormhole_lab.engine.cca import dcqcn, dctcp, hpcc, timely
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import CC_DCQCN, CC_DCTCP, CC_HPCC, CC_TIMELY, CI_CC


@kernel
def init(fl, ff, fw, ci, f):
    cc = ci[CI_CC]
    if cc == CC_DCQCN:
        dcqcn.init(fl, ff, fw, f)
    elif cc == CC_HPCC:
        hpcc.init(fl, ff, fw, f)
    elif cc == CC_TIMELY:
        timely.init(fl, ff, fw, f)
    elif cc == CC_DCTCP:
        dctcp.init(fl, ff, fw, f)


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    """ACK (or NACK) ``k`` of flow ``f`` reached its sender."""
    cc = ci[CI_CC]
    if cc == CC_DCQCN:
        dcqcn.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif cc == CC_HPCC:
        hpcc.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif cc == CC_TIMELY:
        timely.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif cc == CC_DCTCP:
        dctcp.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)


@kernel
def on_timer(g, events, fl, ff, fw, ci, cf, f, kind, now):
    if ci[CI_CC] == CC_DCQCN:
        dcqcn.on_timer(g, events, fl, ff, fw, ci, cf, f, kind, now)
