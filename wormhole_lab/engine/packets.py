"""The packet pool (rows of ``pk`` linked through a free list) and per-port FIFOs."""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import G_FREE_COUNT, G_FREE_HEAD, G_PKTS_IN_USE, PK_INPORT, PK_NEXT


@kernel
def alloc(g, pk):
    """Take a free slot. The kernel guarantees one exists before it handles an event."""
    k = g[G_FREE_HEAD]
    g[G_FREE_HEAD] = pk[k, PK_NEXT]
    g[G_FREE_COUNT] -= 1
    g[G_PKTS_IN_USE] += 1
    pk[k, PK_NEXT] = -1
    pk[k, PK_INPORT] = -1
    return k


@kernel
def free(g, pk, k):
    pk[k, PK_NEXT] = g[G_FREE_HEAD]
    g[G_FREE_HEAD] = k
    g[G_FREE_COUNT] += 1
    g[G_PKTS_IN_USE] -= 1


@kernel
def fifo_push(pt, pk, port, head_col, k):
    """Append packet k to the FIFO whose head column is ``head_col`` (tail is the next column)."""
    pk[k, PK_NEXT] = -1
    tail = pt[port, head_col + 1]
    if tail < 0:
        pt[port, head_col] = k
    else:
        pk[tail, PK_NEXT] = k
    pt[port, head_col + 1] = k


@kernel
def fifo_pop(pt, pk, port, head_col):
    """Remove and return the head packet, or -1 when empty."""
    k = pt[port, head_col]
    if k >= 0:
        nxt = pk[k, PK_NEXT]
        pt[port, head_col] = nxt
        if nxt < 0:
            pt[port, head_col + 1] = -1
        pk[k, PK_NEXT] = -1
    return k
