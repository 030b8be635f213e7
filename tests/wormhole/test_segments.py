"""Segments sorted in compiled code come out as ``np.sort`` leaves each; selected ones keep their order."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wormhole_lab.wormhole.segments import select_segments, sort_segments


@given(st.lists(st.lists(st.integers(-(2**62), 2**62), max_size=40), max_size=8))
def test_each_segment_is_sorted_as_np_sort_sorts_it(segments):
    values = np.array([v for segment in segments for v in segment], dtype=np.int64)
    offsets = np.cumsum([0, *map(len, segments)]).astype(np.int64)
    expected = np.concatenate([np.sort(np.array(s, dtype=np.int64)) for s in segments] or [values])
    sort_segments(values, offsets)
    np.testing.assert_array_equal(values, expected)


def test_selected_segments_keep_their_order_and_get_offsets_of_their_own():
    values, other = np.array([5, 6, 7, 8, 9, 10]), np.array([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    offsets = np.array([0, 2, 2, 5, 6])  # the second segment is empty
    (kept, kept_other), kept_offsets = select_segments((values, other), offsets, np.array([True, True, False, True]))
    assert kept.tolist() == [5, 6, 10] and kept_other.tolist() == [0.5, 0.6, 1.0]
    assert kept_offsets.tolist() == [0, 2, 2, 3]
    (every,), every_offsets = select_segments((values,), offsets, np.ones(4, dtype=bool))
    assert every.tolist() == values.tolist() and every_offsets.tolist() == offsets.tolist()
    (none,), none_offsets = select_segments((values,), offsets, np.zeros(4, dtype=bool))
    assert none.tolist() == [] and none_offsets.tolist() == [0]
