"""Incremental partitions equal a from-scratch recompute after every change, their kept ports are current, and ids
are stable."""

import numpy as np

from wormhole_lab.wormhole.partition import Partitions


def canonical(groups):
    return sorted(sorted(g) for g in groups)


def test_incremental_partitions_match_recompute_under_random_changes():
    rng = np.random.default_rng(3)
    n_flows, n_ports = 120, 60
    flow_ports = [rng.choice(n_ports, size=rng.integers(1, 4), replace=False) for _ in range(n_flows)]
    parts = Partitions(flow_ports)
    alive = set()
    for f in rng.permutation(n_flows).tolist() + rng.permutation(n_flows).tolist():
        if f in alive:
            parts.remove(f)
            alive.discard(f)
        else:
            parts.add(f)
            alive.add(f)
        assert canonical(parts.flows.values()) == canonical(parts.recompute())
        assert all(parts.of_flow[g] == p for p, members in parts.flows.items() for g in members)
        # ports are kept per partition between changes: what is kept is what its flows use now
        for p, members in parts.flows.items():
            assert parts.ports(p) == {int(q) for g in members for q in flow_ports[g]}
        h = int(rng.integers(n_flows))
        assert parts.touched_by(h) == {parts.of_flow[g] for g in alive if set(flow_ports[h]) & set(flow_ports[g])}


def test_merge_keeps_the_larger_id_and_split_gives_new_ids():
    flow_ports = [np.array([0]), np.array([0]), np.array([1]), np.array([0, 1])]
    parts = Partitions(flow_ports)
    a, _ = parts.add(0)
    parts.add(1)
    b, _ = parts.add(2)
    assert a != b
    joined, merged = parts.add(3)  # bridges ports 0 and 1
    assert joined == a and merged == {b}
    old, split_off = parts.remove(3)  # the bridge leaves: two partitions again
    assert old == a and len(split_off) == 1
    assert parts.of_flow[0] == a and parts.of_flow[2] == split_off[0]
