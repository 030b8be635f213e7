"""Event queue: a 4-ary min-heap of events in one int64 array (a row each), ordered by (time, sequence number).

Keys are unique (the sequence number is), so any correct heap pops in the same order. Four children per
node halve a binary heap's depth, and a sift moves a hole (one row copy per level) instead of swapping rows.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import G_HEAP_SIZE, G_SEQ, H_A, H_B, H_KIND, H_N, H_SEQ, H_TIME

ARITY = 4


@kernel
def _earlier(heap, i, time, seq):
    """Row i comes before the key (time, seq)."""
    t = heap[i, H_TIME]
    return t < time or (t == time and heap[i, H_SEQ] < seq)


@kernel
def _move(heap, dst, src):
    for c in range(H_N):
        heap[dst, c] = heap[src, c]


@kernel
def _put(heap, i, time, seq, kind, a, b):
    heap[i, H_TIME] = time
    heap[i, H_SEQ] = seq
    heap[i, H_KIND] = kind
    heap[i, H_A] = a
    heap[i, H_B] = b


@kernel
def insert(g, heap, time, seq, kind, a, b):
    """Schedule an event under a sequence number taken earlier (``g[G_SEQ]`` is not advanced)."""
    i = g[G_HEAP_SIZE]
    g[G_HEAP_SIZE] = i + 1
    while i > 0:
        parent = (i - 1) // ARITY
        if not (time < heap[parent, H_TIME] or (time == heap[parent, H_TIME] and seq < heap[parent, H_SEQ])):
            break
        _move(heap, i, parent)
        i = parent
    _put(heap, i, time, seq, kind, a, b)


@kernel
def push(g, heap, time, kind, a, b):
    """Schedule an event after every event scheduled so far at the same time. The caller guarantees room
    (the kernel checks before each event)."""
    seq = g[G_SEQ]
    g[G_SEQ] = seq + 1
    insert(g, heap, time, seq, kind, a, b)


@kernel
def _sift_down(heap, i, n, time, seq, kind, a, b):
    """Place the event (time, seq, kind, a, b) in the hole at row i of a heap of n rows."""
    while True:
        first = ARITY * i + 1
        if first >= n:
            break
        best = first
        for c in range(first + 1, min(first + ARITY, n)):
            if _earlier(heap, c, heap[best, H_TIME], heap[best, H_SEQ]):
                best = c
        if not _earlier(heap, best, time, seq):
            break
        _move(heap, i, best)
        i = best
    _put(heap, i, time, seq, kind, a, b)


@kernel
def pop(g, heap):
    """Remove the earliest event (read its row first: ``heap[0]``)."""
    n = g[G_HEAP_SIZE] - 1
    g[G_HEAP_SIZE] = n
    if n > 0:
        _sift_down(heap, 0, n, heap[n, H_TIME], heap[n, H_SEQ], heap[n, H_KIND], heap[n, H_A], heap[n, H_B])


@kernel
def pop_into(g, heap, out):
    """Remove the earliest event and copy its row into ``out`` (length H_N)."""
    for c in range(H_N):
        out[c] = heap[0, c]
    pop(g, heap)


@kernel
def heapify(heap, n):
    """Restore the heap order of the first n rows after their times were edited or rows removed."""
    for i in range((n - 2) // ARITY, -1, -1):
        _sift_down(heap, i, n, heap[i, H_TIME], heap[i, H_SEQ], heap[i, H_KIND], heap[i, H_A], heap[i, H_B])
