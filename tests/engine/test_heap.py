"""The event heap pops in (time, scheduling order), like a sort."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.heap import heapify, pop_into, push


def test_heap_pops_in_time_then_insertion_order():
    rng = np.random.default_rng(5)
    times = rng.integers(0, 50, size=500)  # many ties
    g = np.zeros(L.G_N, dtype=np.int64)
    heap = np.zeros((600, L.H_N), dtype=np.int64)
    for i, t in enumerate(times):
        push(g, heap, int(t), 0, i, 0)
    out = np.empty(L.H_N, dtype=np.int64)
    popped = []
    while g[L.G_HEAP_SIZE]:
        pop_into(g, heap, out)
        popped.append((out[L.H_TIME], out[L.H_A]))
    assert popped == sorted(zip(times.tolist(), range(len(times)), strict=True))


def test_heapify_restores_the_order_of_edited_rows():
    rng = np.random.default_rng(7)
    n = 333
    heap = np.zeros((n, L.H_N), dtype=np.int64)
    heap[:, L.H_TIME] = rng.integers(0, 40, size=n)
    heap[:, L.H_SEQ] = rng.permutation(n)
    heap[:, L.H_A] = np.arange(n)
    expected = sorted(zip(heap[:, L.H_TIME].tolist(), heap[:, L.H_SEQ].tolist(), range(n), strict=True))
    heapify(heap, n)
    g = np.zeros(L.G_N, dtype=np.int64)
    g[L.G_HEAP_SIZE] = n
    out = np.empty(L.H_N, dtype=np.int64)
    popped = []
    while g[L.G_HEAP_SIZE]:
        pop_into(g, heap, out)
        popped.append((out[L.H_TIME], out[L.H_SEQ], out[L.H_A]))
    assert popped == expected
