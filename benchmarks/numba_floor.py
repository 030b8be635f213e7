"""Numba's own cost of the first cached kernel a fresh process calls: the floor under any Numba engine's set-up.

The kernel sums an array; its first call in a process loads it from the cache (after one process that compiled
it) and, before that, initialises Numba's typing and target contexts. ``python numba_floor.py`` prints that
first call's seconds; ``bench_scale.py`` runs it in processes of their own, beside its cases.
"""

import time

import numba
import numpy as np


@numba.njit(cache=True)
def total(values):
    s = 0
    for v in values:
        s += v
    return s


if __name__ == "__main__":
    values = np.arange(8)
    t0 = time.perf_counter()
    total(values)
    print(time.perf_counter() - t0)
