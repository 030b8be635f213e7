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


def test_per_edge_delays_are_kept_by_each_way_of_making_a_table_and_cost_nothing_when_unused():
    """``dep_gap_ps`` stays None (no array, no memory) unless some flow has a delay on an edge; then it is aligned
    with ``dep_ids``, 0 on the edges of flows that gave none."""
    b = FlowBuilder()
    a = b.add(0, 1, 10)
    b.add(1, 2, 10, deps=[a])
    plain = b.build()
    assert plain.dep_gap_ps is None and plain.nbytes == make_flows([0, 1], [1, 2], [10, 10], 0, deps=[(), (0,)]).nbytes
    b.add(2, 3, 10, deps=(0, 1), dep_gaps=(5, 6))
    first = b.add_many([3, 4], [4, 5], [10, 10], [1, 0], [2], [0, 0], "pp")  # a block without delays
    b.add_many([5], [6], [10], [2], [first, 0], [0], "pp", dep_gaps=[7, 8])
    table = b.build()
    assert table.dep_gap_ps.dtype == np.int64
    assert table.dep_ids.tolist() == [0, 0, 1, 2, 3, 0]
    assert table.dep_gap_ps.tolist() == [0, 5, 6, 0, 7, 8]
    made = make_flows([0, 1, 2], [1, 2, 3], [10] * 3, 0, deps=[(), (0,), (0, 1)], dep_gaps=[(), (4,), (5, 6)])
    assert made.dep_gap_ps.tolist() == [4, 5, 6]
    assert make_flows([0, 1], [1, 2], [10, 10], 0, deps=[(), (0,)]).dep_gap_ps is None
    assert stack_tables([plain, plain]).dep_gap_ps is None
    assert stack_tables([plain, made]).dep_gap_ps.tolist() == [0, 4, 5, 6]  # plain's one edge, then made's


def test_edge_delays_that_do_not_match_the_deps_are_errors():
    with pytest.raises(InputError, match=r"dep_gaps\[2\].*has 1 delays for flow 2's 2 dependencies"):
        make_flows([0, 1, 2], [1, 2, 3], [10] * 3, 0, deps=[(), (0,), (0, 1)], dep_gaps=[(), (4,), (5,)])
    b = FlowBuilder()
    with pytest.raises(InputError, match=r"FlowBuilder.add \(flow 0\): dep_gaps.*2 delays for 1 deps"):
        b.add(0, 1, 10, deps=(3,), dep_gaps=(1, 2))
    with pytest.raises(InputError, match=r"add_many.*1 delays for 2 dependency ids"):
        b.add_many([0], [1], [10], [2], [3, 4], [0], "", dep_gaps=[1])
