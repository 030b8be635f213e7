"""FlowTable building: source ports numbered per host pair as the reference numbers them."""

import numpy as np

from wormhole_lab.workload.flows import FlowBuilder, assign_sports


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
