"""FlowTable building: source ports numbered per host pair as the reference numbers them."""

from dataclasses import replace

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import FlowBuilder, assign_sports, make_flows, stack_tables


def test_sports_count_each_pairs_flows_in_table_order():
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 6, 500), rng.integers(3, 9, 500)
    seen: dict = {}
    expected = []
    for pair in zip(src.tolist(), dst.tolist(), strict=True):
        expected.append(10000 + seen.get(pair, 0))
        seen[pair] = seen.get(pair, 0) + 1
    assert assign_sports(src, dst).tolist() == expected
    assert assign_sports(np.array([], int), np.array([], int)).tolist() == []


def test_builder_keeps_dependencies_and_gaps():
    b = FlowBuilder()
    first = b.add(0, 1, 100)
    b.add(1, 0, 200, deps=[np.int64(first)], gap_ps=7, phase="dp")
    t = b.build()
    assert t.deps(1).tolist() == [first] and t.deps(0).tolist() == [] and t.gap_ps.tolist() == [0, 7]
    assert t.sport.tolist() == [10000, 10000] and t.phase.tolist() == ["", "dp"]


def test_flows_added_one_at_a_time_and_as_arrays_keep_their_order():
    """``add`` and ``add_many`` interleaved give the table ``make_flows`` gives for the same flows in that order."""
    b = FlowBuilder()
    assert len(b.build()) == 0
    b.add(0, 1, 100)
    first = b.add_many([1, 2], [2, 3], [200, 300], [1, 2], [0, 0, 1], [5, 6], "ep")
    b.add(3, 0, 400, deps=(first, first + 1), phase="pp", start_ps=9)
    b.add_many([4], [5], [500], [0], [], [0], "dp")
    table = b.build(tail_ps=3)
    expected = make_flows(
        [0, 1, 2, 3, 4], [1, 2, 3, 0, 5], [100, 200, 300, 400, 500], [0, 0, 0, 9, 0],
        deps=[(), (0,), (0, 1), (1, 2), ()], gap_ps=[0, 5, 6, 0, 0], phase=["", "ep", "ep", "pp", "dp"], tail_ps=3,
    )  # fmt: skip
    assert first == 1 and len(b) == 5
    for column in ("src", "dst", "size", "start_ps", "pg", "dport", "sport", "dep_offset", "dep_ids", "gap_ps"):
        assert getattr(table, column).tolist() == getattr(expected, column).tolist(), column
    assert table.phase.tolist() == expected.phase.tolist() and table.tail_ps == 3


def test_dependency_ids_are_kept_in_32_bits_and_one_that_does_not_fit_is_an_error():
    """4 B per edge (an MoE iteration has ~13 per flow); an id past 32 bits would wrap into a valid-looking one."""
    b = FlowBuilder()
    first = b.add(0, 1, 100)
    b.add_many([1, 2], [2, 3], [200, 300], [1, 1], [first, first], [0, 0], "ep")
    assert b.build().dep_ids.dtype == np.int32
    with pytest.raises(InputError, match=r"deps \(edge 1\).*flow id 4294967296 is out of range"):
        make_flows([0, 1, 2], [1, 2, 0], [1, 1, 1], 0, deps=[(), (0,), (2**32,)])


def test_release_on_delivery_is_off_unless_asked_and_kept_by_each_way_of_making_a_table():
    chain = {"deps": [(), (0,)]}
    assert make_flows([0, 1], [1, 2], [10, 10], 0, **chain).release_on_delivery is False
    assert make_flows([0, 1], [1, 2], [10, 10], 0, **chain, release_on_delivery=True).release_on_delivery is True
    b = FlowBuilder()
    b.add(1, 2, 10, deps=[b.add(0, 1, 10)])
    assert b.build().release_on_delivery is False and b.build(release_on_delivery=True).release_on_delivery is True
    table = replace(make_flows([0], [1], [10], 0), release_on_delivery=np.bool_(True))
    assert table.release_on_delivery is True
    with pytest.raises(InputError, match="release_on_delivery.*must be True or False, got 'yes'"):
        replace(table, release_on_delivery="yes")


def test_stack_tables_refuses_tables_with_dependencies_that_disagree_on_release_on_delivery():
    """One rule per merged table: mixing would change when one table's flows start. A table without dependencies
    (background traffic) releases nobody, so its flag does not count."""
    chain = make_flows([0, 1], [1, 2], [10, 10], 0, deps=[(), (0,)])
    early = replace(chain, release_on_delivery=True)
    with pytest.raises(InputError, match=r"release_on_delivery.*tables \[1\].*tables \[0, 2\].*replace\(table"):
        stack_tables([chain, early, chain])
    assert stack_tables([early, early]).release_on_delivery is True
    assert stack_tables([chain, chain]).release_on_delivery is False
    background = make_flows([3], [4], [10], 0)
    assert stack_tables([background, early]).release_on_delivery is True
    assert stack_tables([replace(background, release_on_delivery=True), chain]).release_on_delivery is False
