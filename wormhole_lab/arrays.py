"""Array helpers shared by the layers."""

import numpy as np


def concat_ranges(starts, counts) -> np.ndarray:
    """``arange(s, s + c)`` for every (s, c) of ``starts`` and ``counts``, one after another, without a Python loop:
    the positions of many CSR rows at once."""
    counts = np.asarray(counts, dtype=np.int64)
    before = np.cumsum(counts) - counts
    return np.repeat(np.asarray(starts, dtype=np.int64) - before, counts) + np.arange(int(counts.sum()))


def grown_ids(table: np.ndarray, rows: int, fill) -> np.ndarray:
    """``table``, indexed by id with its last row a sentinel (the bucket of flows not placed in a partition yet),
    with ``rows`` rows: each id keeps its row, the sentinel's moves to the new last row, the new ids get ``fill``."""
    out = np.full((rows, *table.shape[1:]), fill, dtype=table.dtype)
    out[: len(table) - 1] = table[:-1]
    out[-1] = table[-1]
    return out
