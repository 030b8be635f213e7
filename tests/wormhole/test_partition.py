"""The compiled partition bookkeeping equals a from-scratch recompute after every batch of flow events, labels the
engine's flows and ports, merges into the largest partition and splits where a leaving flow was the only link."""

from types import SimpleNamespace

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.wormhole.partition import COMPLETION, PASSED_COMPLETION, PASSED_START, START, Partitions


def fake_state(data_ports, ack_ports, n_ports, ids=None):
    """The columns of an engine state the bookkeeping reads: each flow's data and ACK ports in one path table, and
    rows for ``ids`` partition ids (default: one per flow) plus the bucket of unplaced flows."""
    n = len(data_ports)
    fl = np.zeros((n, L.FL_N), dtype=np.int64)
    table, at = [], 0
    for f, (data, ack) in enumerate(zip(data_ports, ack_ports, strict=True)):
        fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_LEN] = at, len(data)
        fl[f, L.FL_APATH_BEGIN], fl[f, L.FL_APATH_LEN] = at + len(data), len(ack)
        table += [*data, *ack]
        at += len(data) + len(ack)
    pt = np.zeros((n_ports, L.PT_N), dtype=np.int64)
    pt[:, L.PT_PART] = -1
    fl[:, L.FL_PART] = -1
    parts = np.zeros((n + 1 if ids is None else ids + 1, L.PA_N), dtype=np.int64)
    return SimpleNamespace(fl=fl, pt=pt, parts=parts, path_ports=np.array(table, dtype=np.int64))


def canonical(groups):
    return sorted(sorted(g) for g in groups)


def components(active, ports_of):
    """Connected components of the active flows through shared ports, by brute force."""
    left, out = set(active), []
    while left:
        seen, stack = set(), [left.pop()]
        while stack:
            f = stack.pop()
            seen.add(f)
            stack += [g for g in left if ports_of[g] & ports_of[f]]
            left -= seen | set(stack)
        out.append(seen)
    return out


def random_batches(rng, n_flows: int, n_batches: int = 40):
    """Batches of flow events, and the active flows after each: random starts and completions, plus a flow that
    starts and completes within the batch."""
    active, t = set(), 0
    for _ in range(n_batches):
        rows = []
        for f in rng.choice(n_flows, size=rng.integers(1, 12), replace=False).tolist():
            t += 1
            rows.append((f, t, COMPLETION if f in active else START))
            (active.discard if f in active else active.add)(f)
        newcomer = next(f for f in range(n_flows) if f not in active)  # started and completed within the batch
        rows[len(rows) // 2 : len(rows) // 2] = [(newcomer, t, PASSED_START), (newcomer, t, PASSED_COMPLETION)]
        yield rows, active


def random_paths(rng, n_flows: int, n_ports: int):
    data = [rng.choice(n_ports, size=rng.integers(1, 4), replace=False).tolist() for _ in range(n_flows)]
    ack = [
        [p for p in rng.choice(n_ports, size=rng.integers(0, 3), replace=False).tolist() if p not in d] for d in data
    ]
    return data, ack


def place(state, parts, rows):
    state.fl[[f for f, _, kind in rows if kind in (START, PASSED_START)], L.FL_STATE] = L.FS_ACTIVE
    touched, counts = parts.place(np.array(rows))
    state.fl[[f for f, _, kind in rows if kind in (COMPLETION, PASSED_COMPLETION)], L.FL_STATE] = L.FS_DONE
    return touched, counts


@pytest.mark.parametrize("ids", [None, 1])
def test_batches_of_random_starts_and_completions_give_the_exact_partitions(ids):
    """With a row per flow for partition ids, or one row that doubles as more ids are needed."""
    rng = np.random.default_rng(3)
    n_flows, n_ports = 150, 70
    data, ack = random_paths(rng, n_flows, n_ports)
    ports_of = [set(d) | set(a) for d, a in zip(data, ack, strict=True)]
    state = fake_state(data, ack, n_ports, ids)
    parts = Partitions(state)
    for rows, active in random_batches(rng, n_flows):
        before = state.parts[:, L.PA_CHANGED_AT].copy()
        touched, counts = place(state, parts, rows)
        expected = components(active, ports_of)
        assert canonical(parts.flows.values()) == canonical(expected) == canonical(parts.recompute())
        assert counts[-1] == len(parts) == len(expected)
        for part, members in parts.flows.items():
            assert set(state.fl[list(members), L.FL_PART]) == {part}
            assert sorted(parts.ports(part)) == sorted(set().union(*(ports_of[f] for f in members)))
            assert set(state.pt[parts.ports(part), L.PT_PART]) == {part}
            changed = state.parts[part, L.PA_CHANGED_AT]
            assert changed == (parts.changed_at(part) if part in touched else before[part])
        used = set().union(*(ports_of[f] for f in active)) if active else set()
        assert (state.pt[[p for p in range(n_ports) if p not in used], L.PT_PART] == -1).all()
        assert (state.fl[[f for f in range(n_flows) if f not in active], L.FL_PART] == -1).all()


def test_partition_ids_grown_as_needed_are_those_of_a_row_per_flow():
    """The tables indexed by partition id start with one row and grow when a batch might need more ids: each flow
    gets the id it gets with a row per flow, and the tables stay near the partitions alive at once."""
    rng = np.random.default_rng(7)
    n_flows, n_ports = 400, 300
    data, ack = random_paths(rng, n_flows, n_ports)
    full, small = fake_state(data, ack, n_ports), fake_state(data, ack, n_ports, ids=1)
    by_flow, grown = Partitions(full), Partitions(small)
    most = 0
    for rows, active in random_batches(rng, n_flows, 60):
        place(full, by_flow, rows)
        place(small, grown, rows)
        np.testing.assert_array_equal(small.fl[:, L.FL_PART], full.fl[:, L.FL_PART])
        np.testing.assert_array_equal(small.pt[:, L.PT_PART], full.pt[:, L.PT_PART])
        most = max(most, len(active))
    assert len(small.parts) - 1 <= 2 * (most + 12) < n_flows


def test_merge_keeps_the_larger_id_and_split_gives_new_ids():
    state = fake_state([[0], [0], [1], [0, 1]], [[], [], [], []], 2)
    parts = Partitions(state)
    parts.place(np.array([(0, 1, START), (1, 2, START), (2, 3, START)]))
    a, b = state.fl[[0, 2], L.FL_PART]
    assert a != b and len(parts) == 2
    touched, _ = parts.place(np.array([(3, 4, START)]))  # bridges ports 0 and 1
    assert state.fl[[0, 1, 2, 3], L.FL_PART].tolist() == [a] * 4 and len(parts) == 1
    assert set(touched) == {a, b} and not parts.alive(b) and parts.changed_at(a) == 4
    assert state.parts[a, L.PA_CHANGED_AT] == 4
    touched, _ = parts.place(np.array([(3, 5, COMPLETION)]))  # the bridge leaves: two partitions again
    assert state.fl[0, L.FL_PART] == state.fl[1, L.FL_PART] == a != state.fl[2, L.FL_PART]
    assert len(parts) == 2 and {parts.changed_at(q) for q in touched} == {5}


def test_a_flow_that_came_and_went_restarts_the_partitions_it_touched_and_holds_no_id():
    state = fake_state([[0], [0], [5]], [[], [], []], 6)
    parts = Partitions(state)
    parts.place(np.array([(0, 1, START), (2, 1, START)]))
    touched, counts = parts.place(np.array([(1, 7, PASSED_START), (1, 9, PASSED_COMPLETION)]))
    assert touched == [state.fl[0, L.FL_PART]] and parts.changed_at(touched[0]) == 9
    assert state.parts[touched[0], L.PA_CHANGED_AT] == 9 and state.fl[1, L.FL_PART] == -1
    assert counts.tolist() == [2, 2]


def test_a_flow_log_s_kinds_tell_the_flows_that_came_and_went_within_it():
    state = fake_state([[0], [1], [2]], [[], [], []], 3)
    parts = Partitions(state)
    # 1 starts and completes within the log, 2 only starts; a start and a completion of 0 make it one that came and
    # went too, whichever row comes first
    flows = np.array([0, 1, 2, 1, 0], dtype=np.int64)
    started = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    kinds = parts.kinds(flows, started)
    assert kinds.tolist() == [PASSED_COMPLETION, PASSED_START, START, PASSED_COMPLETION, PASSED_START]
    assert parts.kinds(np.array([2, 1]), np.array([0, 1])).tolist() == [COMPLETION, START]  # scratch left clean


def test_the_skipped_partitions_at_a_flow_s_ports_are_read_before_it_is_placed():
    state = fake_state([[0, 1], [1], [3]], [[2], [], [4]], 5)
    parts = Partitions(state)
    parts.place(np.array([(1, 1, START), (2, 1, START)]))
    one, two = state.fl[1, L.FL_PART], state.fl[2, L.FL_PART]
    assert parts.skipping_at_ports_of(np.array([0, 2]), 5).tolist() == []  # neither is being skipped
    state.parts[[one, two], L.PA_SKIP_END] = 5, 9
    assert parts.skipping_at_ports_of(np.array([0]), 5).tolist() == []  # ports 0, 1 and 2: only 1's, skipped up to now
    assert parts.skipping_at_ports_of(np.array([0, 2]), 5).tolist() == [two]
    assert parts.skipping_at_ports_of(np.array([2, 0, 2]), 4).tolist() == sorted([one, two])  # each once


def test_the_ports_of_several_partitions_at_once_are_each_one_s_ports():
    state = fake_state([[0, 1], [1], [3]], [[2], [], [4]], 5)
    parts = Partitions(state)
    parts.place(np.array([(0, 1, START), (1, 1, START), (2, 1, START)]))
    ids = np.array(sorted({int(state.fl[f, L.FL_PART]) for f in range(3)}), dtype=np.int64)
    ports, offsets = parts.ports_of(ids[::-1])
    assert len(offsets) == len(ids) + 1 and offsets[0] == 0 and offsets[-1] == len(ports)
    for k, part in enumerate(ids[::-1].tolist()):
        assert sorted(ports[offsets[k] : offsets[k + 1]].tolist()) == sorted(parts.ports(part).tolist())
    assert sorted(ports.tolist()) == [0, 1, 2, 3, 4]  # each port once: partitions share none
