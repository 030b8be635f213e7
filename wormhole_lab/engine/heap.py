"""Binary min-heap of events in one int64 array, ordered by (time, sequence number)."""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import G_HEAP_SIZE, G_SEQ, H_A, H_B, H_KIND, H_SEQ, H_TIME


@kernel
def _less(heap, i, j):
    return heap[i, H_TIME] < heap[j, H_TIME] or (heap[i, H_TIME] == heap[j, H_TIME] and heap[i, H_SEQ] < heap[j, H_SEQ])


@kernel
def _swap(heap, i, j):
    for c in range(heap.shape[1]):
        tmp = heap[i, c]
        heap[i, c] = heap[j, c]
        heap[j, c] = tmp


@kernel
def push(g, heap, time, kind, a, b):
    """Schedule an event. The caller guarantees room (the kernel checks before each event)."""
    i = g[G_HEAP_SIZE]
    g[G_HEAP_SIZE] = i + 1
    heap[i, H_TIME] = time
    heap[i, H_SEQ] = g[G_SEQ]
    g[G_SEQ] += 1
    heap[i, H_KIND] = kind
    heap[i, H_A] = a
    heap[i, H_B] = b
    while i > 0:
        parent = (i - 1) >> 1
        if not _less(heap, i, parent):
            break
        _swap(heap, i, parent)
        i = parent


@kernel
def pop_into(g, heap, out):
    """Remove the earliest event and copy its row into ``out`` (length H_N)."""
    for c in range(heap.shape[1]):
        out[c] = heap[0, c]
    pop(g, heap)


@kernel
def pop(g, heap):
    """Remove the earliest event (read its row first: ``heap[0]``)."""
    n = g[G_HEAP_SIZE] - 1
    g[G_HEAP_SIZE] = n
    if n == 0:
        return
    for c in range(heap.shape[1]):
        heap[0, c] = heap[n, c]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        if left + 1 < n and _less(heap, left + 1, left):
            child = left + 1
        if not _less(heap, child, i):
            break
        _swap(heap, i, child)
        i = child
