"""The one table that maps CC_MODE numbers to CCA modules inside the kernel.

``init``, ``on_ack`` and ``on_timer`` call the CCA ``ci[CI_CC]`` names, any of the four. Each CCA also has its own
copy of them (``on_ack_dcqcn``, ..., ``BY_CCA``: ``jit.variant`` with ``CCA`` compiled in) that calls that CCA only:
the other three are not compiled into it, nor into the event loop built on it (``kernel.event_loop``), so a run
compiles only the CCA it uses (issue 53, item 5). A copy still checks ``ci[CI_CC]``: the same results either way."""

from types import SimpleNamespace

from wormhole_lab.engine.cca import dcqcn, dctcp, hpcc, timely
from wormhole_lab.engine.jit import kernel, variant
from wormhole_lab.engine.layout import CC_DCQCN, CC_DCTCP, CC_HPCC, CC_TIMELY, CI_CC

# compiled in (jit.variant): 0 here (all four CCAs), in each CCA's copy its CC_* number (the others' branches go)
CCA = 0
#: CC_* number of each CCA name (EngineConfig.cca)
CC_OF = {"dcqcn": CC_DCQCN, "hpcc": CC_HPCC, "timely": CC_TIMELY, "dctcp": CC_DCTCP}


@kernel
def init(fl, ff, fw, ci, f):
    cc = ci[CI_CC]
    if (CCA == 0 or CCA == CC_DCQCN) and cc == CC_DCQCN:
        dcqcn.init(fl, ff, fw, f)
    elif (CCA == 0 or CCA == CC_HPCC) and cc == CC_HPCC:
        hpcc.init(fl, ff, fw, f)
    elif (CCA == 0 or CCA == CC_TIMELY) and cc == CC_TIMELY:
        timely.init(fl, ff, fw, f)
    elif (CCA == 0 or CCA == CC_DCTCP) and cc == CC_DCTCP:
        dctcp.init(fl, ff, fw, f)


@kernel
def on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now):
    """ACK (or NACK) ``k`` of flow ``f`` reached its sender."""
    cc = ci[CI_CC]
    if (CCA == 0 or CCA == CC_DCQCN) and cc == CC_DCQCN:
        dcqcn.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif (CCA == 0 or CCA == CC_HPCC) and cc == CC_HPCC:
        hpcc.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif (CCA == 0 or CCA == CC_TIMELY) and cc == CC_TIMELY:
        timely.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)
    elif (CCA == 0 or CCA == CC_DCTCP) and cc == CC_DCTCP:
        dctcp.on_ack(g, events, pk, pt, fl, ff, fw, ci, cf, f, k, now)


@kernel
def on_timer(g, events, fl, ff, fw, ci, cf, f, kind, now):
    if (CCA == 0 or CCA == CC_DCQCN) and ci[CI_CC] == CC_DCQCN:
        dcqcn.on_timer(g, events, fl, ff, fw, ci, cf, f, kind, now)


def _only(fn, name: str):
    copy = kernel(variant(fn, f"{fn.__name__}_{name}", CCA=CC_OF[name]))
    globals()[copy.py_func.__name__] = copy  # on_ack_dcqcn, ...: compile_notice.loaded_kernels finds module attributes
    return copy


#: each CCA's own copies, by CC_* number: ``BY_CCA[CC_HPCC].on_ack`` calls hpcc.on_ack and compiles nothing else
BY_CCA = {
    cc: SimpleNamespace(name=name, init=_only(init, name), on_ack=_only(on_ack, name), on_timer=_only(on_timer, name))
    for name, cc in CC_OF.items()
}
