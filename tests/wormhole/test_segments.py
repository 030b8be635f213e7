"""Segments sorted in compiled code come out as ``np.sort`` leaves each."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wormhole_lab.wormhole.segments import sort_segments


@given(st.lists(st.lists(st.integers(-(2**62), 2**62), max_size=40), max_size=8))
def test_each_segment_is_sorted_as_np_sort_sorts_it(segments):
    values = np.array([v for segment in segments for v in segment], dtype=np.int64)
    offsets = np.cumsum([0, *map(len, segments)]).astype(np.int64)
    expected = np.concatenate([np.sort(np.array(s, dtype=np.int64)) for s in segments] or [values])
    sort_segments(values, offsets)
    np.testing.assert_array_equal(values, expected)
