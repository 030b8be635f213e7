"""The pool of sending-state rows (``fw``, ``ff`` and the steady test's rings) that started flows hold.

A flow takes a slot when it starts and gives it back when its NIC drops the finished QP from its round robin, so
memory for this state follows the active set, not the flow count. Free slots are linked through ``FW_NEXT_FREE``.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import FL_SLOT, FW_NEXT_FREE, G_SLOT_FREE, G_SLOT_FREE_COUNT


@kernel
def take(g, fl, fw, ff, f):
    """Give flow ``f`` a zeroed slot and return it. The kernel guarantees one is free before it handles an event."""
    s = g[G_SLOT_FREE]
    g[G_SLOT_FREE] = fw[s, FW_NEXT_FREE]
    g[G_SLOT_FREE_COUNT] -= 1
    for c in range(fw.shape[1]):
        fw[s, c] = 0
    for c in range(ff.shape[1]):
        ff[s, c] = 0.0
    fl[f, FL_SLOT] = s
    return s


@kernel
def give_back(g, fl, fw, f):
    s = fl[f, FL_SLOT]
    fl[f, FL_SLOT] = -1
    fw[s, FW_NEXT_FREE] = g[G_SLOT_FREE]
    g[G_SLOT_FREE] = s
    g[G_SLOT_FREE_COUNT] += 1
