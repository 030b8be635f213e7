"""What the results derive from the flow table: a phase's busy time is the length of its flows' union."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wormhole_lab.results import busy_time_ps


@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 30)), max_size=30))
def test_busy_time_is_the_length_of_the_union_of_the_intervals(intervals):
    starts = np.array([s for s, _ in intervals], dtype=np.int64)
    ends = np.array([s + length for s, length in intervals], dtype=np.int64)
    covered = np.zeros(231, dtype=bool)
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        covered[s:e] = True
    assert busy_time_ps(starts, ends) == covered.sum()
