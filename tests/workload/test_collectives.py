"""Collectives as dependent point-to-point flows: sizes, step structure, DAG shape."""

from collections import defaultdict

import networkx as nx
import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.collectives import (
    RankClock,
    alltoall,
    alltoall_groups,
    ring_allgather,
    ring_allreduce,
    ring_reducescatter,
    send_recv,
    split_bytes,
)
from wormhole_lab.workload.flows import FlowBuilder
from wormhole_lab.workload.validate import check_dependencies


def dag(table) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(len(table)))
    for i in range(len(table)):
        g.add_edges_from((int(d), i) for d in table.deps(i))
    return g


def sent_bytes(table) -> dict[int, int]:
    out = defaultdict(int)
    for s, z in zip(table.src.tolist(), table.size.tolist(), strict=True):
        out[s] += z
    return dict(out)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_ring_allreduce_bytes_and_steps(n):
    ranks = [10 + 3 * i for i in range(n)]  # any host ids, ring in list order
    size = 6 * 1024 * n
    b = FlowBuilder()
    done = ring_allreduce(b, ranks, size)
    t = b.build()
    steps = 2 * (n - 1)
    assert len(t) == n * steps
    assert sent_bytes(t) == {r: steps * size // n for r in ranks}  # 2(n-1)/n * S each
    assert set(zip(t.src.tolist(), t.dst.tolist(), strict=True)) == {(ranks[i], ranks[(i + 1) % n]) for i in range(n)}
    g = dag(t)
    assert nx.is_directed_acyclic_graph(g)
    check_dependencies(t)
    # flows are created step-major: flow k*n + i is rank i's send of step k
    for k in range(steps):
        for i in range(n):
            f = k * n + i
            assert t.src[f] == ranks[i]
            want = set() if k == 0 else {(k - 1) * n + i, (k - 1) * n + (i - 1) % n}
            assert set(t.deps(f).tolist()) == want
    assert nx.dag_longest_path_length(g) == steps - 1  # 2(n-1) dependent steps
    for i, r in enumerate(ranks):
        last = (steps - 1) * n
        assert set(done[r]) == {last + i, last + (i - 1) % n}


def test_ring_allreduce_uneven_and_tiny_sizes():
    for n, size in ((4, 1001), (4, 3), (5, 1)):
        b = FlowBuilder()
        ring_allreduce(b, list(range(n)), size)
        t = b.build()
        assert (t.size > 0).all()
        assert int(t.size.sum()) == 2 * (n - 1) * size  # every chunk travels n-1 hops, twice
        check_dependencies(t)
        assert set(sent_bytes(t)) == set(range(n))


def test_after_and_gap_gate_first_step_only():
    b = FlowBuilder()
    pre = [b.add(0, 1, 100), b.add(1, 0, 100)]
    ring_allreduce(b, [0, 1, 2], 3000, after={0: [pre[0]], 1: [pre[1]]}, gap_ps={0: 7, 1: 8, 2: 9})
    t = b.build()
    first = range(2, 5)
    assert [t.deps(f).tolist() for f in first] == [[pre[0]], [pre[1]], []]
    assert t.gap_ps[2:5].tolist() == [7, 8, 9]
    assert (t.gap_ps[5:] == 0).all()
    assert set(t.phase[2:]) == {"dp"}


def test_chunked_ring_pipelines_pieces():
    n, size, chunk = 4, 4 * 1000, 300  # 1000-byte steps in 4 pieces (300, 300, 200, 200)
    b = FlowBuilder()
    done = ring_allreduce(b, list(range(n)), size, chunk_bytes=chunk)
    t = b.build()
    m = 4
    assert len(t) == n * 2 * (n - 1) * m
    assert sent_bytes(t) == {r: 2 * (n - 1) * size // n for r in range(n)}
    assert t.size.max() <= chunk
    check_dependencies(t)
    idx = lambda k, i, j: (k * n + i) * m + j  # noqa: E731 - creation order step, rank, piece
    assert set(t.deps(idx(0, 1, 2)).tolist()) == {idx(0, 1, 1)}  # pieces of a step in sequence
    assert set(t.deps(idx(3, 1, 2)).tolist()) == {idx(2, 1, 2), idx(2, 0, 2), idx(3, 1, 1)}
    assert set(done[0]) == {idx(5, 0, 3), idx(5, 3, 3)}


@pytest.mark.parametrize("fn", [ring_allgather, ring_reducescatter])
def test_allgather_reducescatter(fn):
    n, size = 4, 8000
    b = FlowBuilder()
    fn(b, list(range(n)), size)
    t = b.build()
    assert len(t) == n * (n - 1)
    assert sent_bytes(t) == {r: (n - 1) * size // n for r in range(n)}
    assert nx.dag_longest_path_length(dag(t)) == n - 2


def test_alltoall_sends_a_share_to_every_peer():
    n, size = 4, 4000
    b = FlowBuilder()
    pre = b.add(0, 1, 1)
    done = alltoall(b, [0, 1, 2, 3], size, after={0: [pre]}, gap_ps=5)
    t = b.build()
    pairs = defaultdict(int)
    for s, d, z in zip(t.src[1:].tolist(), t.dst[1:].tolist(), t.size[1:].tolist(), strict=True):
        pairs[(s, d)] += z
    assert pairs == {(i, j): size // n for i in range(n) for j in range(n) if i != j}
    assert all(t.deps(f).tolist() == ([pre] if t.src[f] == 0 else []) for f in range(1, len(t)))
    assert (t.gap_ps[1:] == 5).all() and set(t.phase[1:]) == {"ep"}
    for r in range(n):  # done = own sends + incoming flows
        assert {f for f in done[r]} == {f for f in range(1, len(t)) if r in (t.src[f], t.dst[f])}


def test_alltoall_chunks_in_sequence_and_uneven():
    b = FlowBuilder()
    alltoall(b, [0, 1, 2], 10, chunk_bytes=2)
    t = b.build()
    assert (t.size > 0).all() and int(t.size.sum()) == 3 * 10 - sum(split_bytes(10, 3))  # own shares stay home
    check_dependencies(t)


def test_single_rank_and_zero_size_make_no_flows():
    b = FlowBuilder()
    assert ring_allreduce(b, [5], 10**6, after={5: [1, 2]}) == {5: (1, 2)}
    assert alltoall(b, [1, 2], 0) == {1: (), 2: ()}
    assert send_recv(b, 1, 2, 0, after={1: [3]}) == {1: (3,), 2: ()}
    assert len(b) == 0


def test_send_recv_chunks():
    b = FlowBuilder()
    done = send_recv(b, 3, 4, 1000, chunk_bytes=400, gap_ps=11)
    t = b.build()
    assert t.size.tolist() == [334, 333, 333] and t.gap_ps.tolist() == [11, 0, 0]
    assert [t.deps(i).tolist() for i in range(3)] == [[], [0], [1]]
    assert done == {3: (2,), 4: (2,)} and set(t.phase) == {"pp"}


@pytest.mark.parametrize(
    ("args", "match"),
    [(([1, 2, 1], 100), "repeat"), (([1, 2], -5), "size"), (([1, 2], 2.5), "size"), (([1, 2], 10, 0), "chunk")],
)
def test_bad_arguments(args, match):
    ranks, size, *chunk = args
    with pytest.raises(InputError, match=match):
        ring_allreduce(FlowBuilder(), ranks, size, chunk_bytes=chunk[0] if chunk else None)


def test_rank_clock_carries_compute_past_empty_collectives():
    b = FlowBuilder()
    clock = RankClock(range(4))
    clock.compute(range(4), 100)
    clock.run(ring_allreduce, b, [0], 10**6)  # one rank: no flows, compute stays pending
    assert clock.gap[0] == 100 and len(b) == 0
    clock.run(ring_allreduce, b, [0, 1], 10**6)
    t = b.build()
    assert (t.gap_ps[:2] == 100).all()
    assert clock.gap[0] == 0 and clock.gap[2] == 100
    assert np.all(np.isin(np.concatenate([clock.deps[0], clock.deps[1]]), np.arange(len(t))))


def assert_made_alike(monkeypatch, fn, n, size, chunk, array_builder: str, piece_builder):
    """``fn`` made by the array builder ``collectives.<array_builder>`` and, in its place, by ``piece_builder``:
    the same flows, dependencies, gaps and done ids, with after deps and unequal gaps."""
    from wormhole_lab.workload import collectives

    def made(builder):
        monkeypatch.setattr(collectives, array_builder, builder)
        b = FlowBuilder()
        before = send_recv(b, 0, 1, 10, gap_ps=5)
        gaps = dict.fromkeys(range(n), 3) | {0: 7}
        done = fn(b, list(range(n)), size, after={0: before[0], 1: before[1]}, gap_ps=gaps, chunk_bytes=chunk)
        table = b.build()
        return done, [table.deps(i).tolist() for i in range(len(table))], table

    arrays, pieces = made(getattr(collectives, array_builder)), made(piece_builder)
    assert len(arrays[1]) > 1 and arrays[0] == pieces[0] and arrays[1] == pieces[1]
    for column in ("src", "dst", "size", "gap_ps", "phase"):
        np.testing.assert_array_equal(getattr(arrays[2], column), getattr(pieces[2], column))


SHAPES = [(2, 10, None), (4, 4097, None), (4, 1000, 100), (5, 999, 7), (3, 9, 1)]


@pytest.mark.parametrize("fn", [ring_allreduce, ring_allgather, ring_reducescatter])
@pytest.mark.parametrize("n, size, chunk", SHAPES)
def test_a_ring_made_as_arrays_is_the_ring_made_piece_by_piece(monkeypatch, fn, n, size, chunk):
    """Where no piece is empty the ring is made as arrays, standing in for the piece-by-piece builder."""
    from wormhole_lab.workload import collectives

    assert_made_alike(monkeypatch, fn, n, size, chunk, "_ring_of_flows", collectives._ring_by_pieces)


@pytest.mark.parametrize("n, size, chunk", SHAPES)
def test_an_alltoall_made_as_arrays_is_the_alltoall_made_piece_by_piece(monkeypatch, n, size, chunk):
    from wormhole_lab.workload import collectives

    def by_pieces(builder, groups, shares, m, start, phase):
        done = {}
        for ranks in groups:
            done.update(collectives._alltoall_by_pieces(builder, ranks, shares, m, start, phase, None))
        return done

    assert_made_alike(monkeypatch, alltoall, n, size, chunk, "_alltoall_of_flows", by_pieces)


@pytest.mark.parametrize("groups", [[[0, 1, 2], [5, 3, 4], [8, 7, 6]], [[0, 1], [2, 3, 4], [5]]])
@pytest.mark.parametrize("size, chunk", [(10, None), (1000, 100), (5, 2), (0, None)])
def test_alltoalls_of_many_groups_at_once_are_the_alltoalls_one_group_at_a_time(groups, size, chunk):
    """The same flows, dependencies, gaps and done ids; with groups of one size and of several, pieces of bytes
    only and empty ones."""

    def made(at_once: bool):
        b = FlowBuilder()
        clock = RankClock(range(9))
        clock.send(b, 0, 1, 10)
        clock.compute([1, 4, 8], 3)
        if at_once:
            clock.run_groups(alltoall_groups, b, groups, size, chunk_bytes=chunk)
        else:
            for ranks in groups:
                clock.run(alltoall, b, ranks, size, chunk_bytes=chunk)
        table = b.build()
        return clock.deps, clock.gap, [table.deps(i).tolist() for i in range(len(table))], table

    at_once, one_by_one = made(True), made(False)
    assert at_once[:3] == one_by_one[:3]
    for column in ("src", "dst", "size", "gap_ps", "phase"):
        np.testing.assert_array_equal(getattr(at_once[3], column), getattr(one_by_one[3], column))


def test_alltoall_groups_must_be_disjoint():
    with pytest.raises(InputError, match="a rank is in two groups"):
        alltoall_groups(FlowBuilder(), [[0, 1], [1, 2]], 100)
