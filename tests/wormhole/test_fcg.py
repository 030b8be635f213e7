"""The FCG key is the same for the same contention pattern, whatever the flow ids, and differs otherwise; rates are
levelled as Python rounds."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from wormhole_lab.wormhole.fcg import RATE_LEVELS, canonical_key, conflict_graph, from_json, match, rate_levels, to_json

LINE = 100 * 10**9


def graph(ids, ports, rates):
    line = {f: LINE for f in ids}
    hops = {f: 4 for f in ids}
    return conflict_graph(ids, dict(zip(ids, ports, strict=True)), dict(zip(ids, rates, strict=True)), line, hops)


def test_same_pattern_with_other_ids_has_the_same_key_and_a_mapping():
    a = graph([0, 1, 2], [{1, 2}, {2, 3}, {9}], [LINE, LINE / 2, LINE])
    b = graph([7, 3, 5], [{10, 11}, {11, 12}, {20}], [LINE, LINE / 2, LINE])
    assert canonical_key(a) == canonical_key(b)
    mapping = match(from_json(to_json(a)), b)
    assert mapping == {0: 7, 1: 3, 2: 5}


def test_different_rates_or_sharing_change_the_key():
    base = graph([0, 1], [{1, 2}, {2, 3}], [LINE, LINE])
    assert canonical_key(graph([0, 1], [{1, 2}, {2, 3}], [LINE, LINE / 2])) != canonical_key(base)
    assert canonical_key(graph([0, 1], [{1, 2}, {1, 2}], [LINE, LINE])) != canonical_key(base)
    assert match(from_json(to_json(base)), graph([0, 1], [{1}, {2}], [LINE, LINE])) is None


@given(st.lists(st.integers(0, 400_000_000_000), min_size=1, max_size=30), st.sampled_from([25, 100, 400]))
def test_rate_levels_round_halves_to_even_as_python_s_round(rates, line_gbps):
    line = line_gbps * 1_000_000_000
    expected = [round(r / line * RATE_LEVELS) for r in rates]
    assert rate_levels(np.array(rates), np.full(len(rates), line)).tolist() == expected
    assert rate_levels(np.array([line // 40, 3 * line // 40]), np.array([line, line])).tolist() == [0, 2]  # 0.5, 1.5
