"""Array helpers shared by the layers."""

import numpy as np


def concat_ranges(starts, counts) -> np.ndarray:
    """``arange(s, s + c)`` for every (s, c) of ``starts`` and ``counts``, one after another, without a Python loop:
    the positions of many CSR rows at once."""
    counts = np.asarray(counts, dtype=np.int64)
    before = np.cumsum(counts) - counts
    return np.repeat(np.asarray(starts, dtype=np.int64) - before, counts) + np.arange(int(counts.sum()))
