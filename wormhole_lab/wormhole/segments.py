"""Arrays cut into segments, one per partition (its flows at ``values[offsets[i] : offsets[i + 1]]``): some of them
selected, and each sorted in compiled code (``np.lexsort`` by segment and value took a fifth of the time of a look
at the partitions formed at one stop of MoE-8x7B, and kernels do not allocate, so Numba's own sort is not theirs to
call)."""

import numpy as np

from wormhole_lab.engine.jit import kernel


def select_segments(columns: tuple, offsets: np.ndarray, keep: np.ndarray) -> tuple[tuple, np.ndarray]:
    """The segments ``keep`` (one bool per segment) of each of ``columns`` (arrays cut at ``offsets``), and their
    offsets."""
    if keep.all():  # as at most stops: every partition looked up is tried, and every memo hit goes on
        return columns, offsets
    sizes = np.diff(offsets)
    mask = np.repeat(keep, sizes)
    kept = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[keep], out=kept[1:])
    return tuple(column[mask] for column in columns), kept


@kernel
def sort_segments(values, offsets):
    """Sort each segment of ``values`` in place, as ``np.sort`` would."""
    for i in range(len(offsets) - 1):
        lo, n = offsets[i], offsets[i + 1] - offsets[i]
        for root in range(n // 2 - 1, -1, -1):  # heapsort: no scratch, and no worst case
            _sift(values, lo, root, n)
        for end in range(n - 1, 0, -1):
            values[lo], values[lo + end] = values[lo + end], values[lo]
            _sift(values, lo, 0, end)


@kernel
def _sift(values, lo, root, end):
    """Move ``values[lo + root]`` down the max-heap ``values[lo : lo + end]`` to where it belongs."""
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and values[lo + child] < values[lo + child + 1]:
            child += 1
        if values[lo + root] >= values[lo + child]:
            return
        values[lo + root], values[lo + child] = values[lo + child], values[lo + root]
        root = child
