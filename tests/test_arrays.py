"""The shared array helpers."""

import numpy as np

from wormhole_lab.arrays import concat_ranges


def test_concat_ranges_is_the_aranges_one_after_another():
    starts, counts = np.array([5, 0, 9, 2]), np.array([3, 0, 1, 2])
    assert concat_ranges(starts, counts).tolist() == [5, 6, 7, 9, 2, 3]
    assert concat_ranges([], []).tolist() == []
