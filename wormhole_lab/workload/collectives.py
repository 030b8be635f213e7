"""Collectives as point-to-point flows with dependencies, appended to a FlowBuilder.

Every generator takes ``after`` (rank -> flow ids the rank must see finish first: its previous
work) and ``gap_ps`` (compute before the collective starts; an int, or a mapping rank -> int),
and returns ``{rank: flow ids}``: the flows whose completion means the rank is done (its last
sends and the last flows it receives), ready to pass as the next ``after``. A rank that takes part
in no flow (n == 1, size 0) gets back its ``after`` ids and its gap was *not* spent: the caller
must carry that compute forward (``RankClock`` does). A rank that only receives (possible only when
``size < n``) is done with its incoming flows, and its own pending compute is dropped.

Sizes follow NCCL-tests (and SimAI): ``size`` is the per-rank buffer of the collective. A share that
does not divide evenly is spread over the first pieces (``split_bytes``); a share of 0 bytes makes
no flow, and whatever waited for it waits for that flow's own dependencies instead.

``chunk_bytes`` splits each step's data into pipelined pieces, as NCCL's slices do: the pieces of
one step on one rank pair run in sequence (piece j waits for piece j-1), and piece j of step k
waits for piece j of step k-1 (sent by this rank and received from the previous one), so later
steps start before earlier steps have moved all their pieces.
"""

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np

from wormhole_lab.arrays import concat_ranges
from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import FlowBuilder

__all__ = [
    "RankClock",
    "alltoall",
    "alltoall_groups",
    "ring_allgather",
    "ring_allreduce",
    "ring_reducescatter",
    "send_recv",
    "split_bytes",
]

Done = dict[int, tuple[int, ...]]


def split_bytes(total: int, parts: int) -> list[int]:
    """``total`` bytes in ``parts`` shares differing by at most one byte, larger shares first."""
    q, r = divmod(int(total), int(parts))
    return [q + (1 if i < r else 0) for i in range(parts)]


class _Node(NamedTuple):
    """A flow that was made (``ids == (fid,)``, ``carry == 0``) or skipped (0 bytes): then ``ids`` are
    what it would have waited for and ``carry`` the compute it would have started after. A NamedTuple, not a
    frozen dataclass: an all-to-all makes one per rank, ~3x faster so (MoE-8x22B on 256 GPUs: 52,577 of them)."""

    ids: tuple[int, ...]
    carry: int = 0


def _emit(builder: FlowBuilder, src: int, dst: int, size: int, deps: Iterable[_Node], phase: str) -> _Node:
    deps = list(deps)
    if len(deps) == 1:  # most flows (every all-to-all flow): a node's ids are distinct already
        ids, carry = deps[0].ids, deps[0].carry
    else:
        ids = tuple(dict.fromkeys(i for d in deps for i in d.ids))
        carry = max((d.carry for d in deps), default=0)
    if size <= 0:
        return _Node(ids, carry)
    return _Node((builder.add(src, dst, size, deps=ids, gap_ps=carry, phase=phase),), 0)


def _chained(starts: list[tuple[int, ...]], flow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(count per flow, ids one after another) of the deps of flows ``flow`` [sender, row, piece], in that order: a
    row's first piece waits for its sender's ``starts``, each later piece for the one before. One gather from the
    senders' ids and the flows' predecessors."""
    lengths = np.fromiter(map(len, starts), dtype=np.int64, count=len(starts))
    own = np.fromiter(chain.from_iterable(starts), dtype=np.int64, count=int(lengths.sum()))
    counts = np.ones(flow.shape, dtype=np.int64)
    counts[:, :, 0] = lengths[:, None]
    begin = len(own) + np.arange(flow.size).reshape(flow.shape)  # a later piece: its own predecessor's row
    begin[:, :, 0] = (np.cumsum(lengths) - lengths)[:, None]
    counts = counts.ravel()
    return counts, np.concatenate([own, flow.ravel() - 1])[concat_ranges(begin.ravel(), counts)]


def _whole(value) -> int | None:
    """``value`` as an int if it is a whole number (int, numpy int or integral float), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return int(value) if isinstance(value, float) and value.is_integer() else None


def _check(fn: str, ranks, size, chunk_bytes) -> tuple[list[int], int, int | None]:
    ranks = [operator.index(r) for r in ranks]
    if len(set(ranks)) != len(ranks):
        raise InputError(f"{fn}(ranks)", f"ranks {ranks} repeat a rank", "list each rank of the group once")
    s = _whole(size)
    if s is None or s < 0:
        raise InputError(f"{fn}(size={size!r})", "size must be a whole number of bytes >= 0", "pass e.g. 2**20")
    if chunk_bytes is not None:
        c = _whole(chunk_bytes)
        if c is None or c < 1:
            raise InputError(
                f"{fn}(chunk_bytes={chunk_bytes!r})",
                "chunk_bytes must be a whole number >= 1",
                "pass None (no chunking) or e.g. 4 * 2**20",
            )
        chunk_bytes = c
    return ranks, s, chunk_bytes


def _distinct(ids) -> tuple[int, ...]:
    """``ids`` each once, in first-seen order. Ids handed on from a collective or a ``RankClock`` are distinct
    already, and telling so is ~5x cheaper than making them so (MoE-8x22B on 256 GPUs: 0.15 s of flow making);
    the flow table makes them int64 (``FlowBuilder``)."""
    ids = tuple(ids)
    return ids if len(set(ids)) == len(ids) else tuple(dict.fromkeys(ids))


def _starts(ranks, after, gap_ps) -> dict[int, _Node]:
    after = after or {}
    out = {}
    per_rank = isinstance(gap_ps, Mapping)
    for r in ranks:
        gap = gap_ps.get(r, 0) if per_rank else gap_ps
        if gap < 0:
            raise InputError(f"gap_ps[{r}]", f"compute gap {gap} ps is negative", "use 0 or more")
        out[r] = _Node(_distinct(after.get(r, ())), int(gap))  # ids distinct, as _emit's
    return out


def _passthrough(ranks, after) -> Done:
    after = after or {}
    return {r: tuple(map(int, after.get(r, ()))) for r in ranks}


def _n_pieces(largest: int, chunk_bytes: int | None) -> int:
    return 1 if chunk_bytes is None or largest == 0 else max(1, math.ceil(largest / chunk_bytes))


def _ring(builder, fn, ranks, size, after, gap_ps, phase, chunk_bytes, steps) -> Done:
    """Ring with ``steps`` = list of functions ``chunk_index(i, k)``; rank i sends to rank i+1."""
    ranks, size, chunk_bytes = _check(fn, ranks, size, chunk_bytes)
    n = len(ranks)
    if n < 2 or size == 0:
        return _passthrough(ranks, after)
    chunks = split_bytes(size, n)
    m = _n_pieces(chunks[0], chunk_bytes)
    start = _starts(ranks, after, gap_ps)
    if chunks[-1] >= m:  # every piece has bytes: each makes a flow
        return _ring_of_flows(builder, ranks, chunks, m, start, phase, steps)
    return _ring_by_pieces(builder, ranks, chunks, m, start, phase, steps)


def _ring_by_pieces(builder, ranks, chunks, m, start, phase, steps) -> Done:
    """``_ring`` one piece at a time, as some pieces may be empty (they make no flow, and what waits for them
    waits for their own deps)."""
    n = len(ranks)
    prev = None  # prev[i][j]: node of piece j of the previous step sent by rank index i
    for k, chunk_of in enumerate(steps):
        cur = []
        for i in range(n):
            pieces = split_bytes(chunks[chunk_of(i, k)], m)
            row = []
            for j in range(m):
                if k == 0:
                    deps = [start[ranks[i]]] if j == 0 else [row[j - 1]]
                else:
                    deps = [prev[i][j], prev[i - 1][j]] + ([row[j - 1]] if j else [])
                row.append(_emit(builder, ranks[i], ranks[(i + 1) % n], pieces[j], deps, phase))
            cur.append(row)
        prev = cur
    return {ranks[i]: tuple(dict.fromkeys(prev[i][m - 1].ids + prev[i - 1][m - 1].ids)) for i in range(n)}


def _ring_of_flows(builder, ranks, chunks, m, start, phase, steps) -> Done:
    """``_ring`` where no piece is empty, made as arrays (GPT-175B on 8192 GPUs has 2.2 M ring flows, which one
    ``_emit`` each took 10 s): piece j of step k sent by rank index i is flow ``first + (k n + i) m + j``, and it
    waits for the same deps as there."""
    n, n_steps = len(ranks), len(steps)
    index = np.arange(n)
    pieces = np.array([split_bytes(c, m) for c in chunks], dtype=np.int64)  # [chunk, piece] bytes
    chunk = np.concatenate([np.asarray(chunk_of(index, k)) for k, chunk_of in enumerate(steps)])
    size = pieces[chunk].ravel()
    sender = np.repeat(np.tile(np.asarray(ranks, dtype=np.int64), n_steps), m)
    receiver = np.repeat(np.tile(np.roll(np.asarray(ranks, dtype=np.int64), -1), n_steps), m)
    first = len(builder)
    flow = first + np.arange(n_steps * n * m).reshape(n_steps, n, m)
    gap = np.zeros(n_steps * n * m, dtype=np.int64)
    gap[: n * m : m] = [start[r].carry for r in ranks]
    first_counts, first_ids = _chained([start[r].ids for r in ranks], flow[0].reshape(n, 1, m))
    # a later step's piece waits for the same piece of the step before, sent by this rank and by the one before
    # it (the data it forwards), and but for the first piece, for this rank's previous piece
    same, left, before = flow[:-1].ravel(), np.roll(flow[:-1], 1, axis=1).ravel(), flow[1:].ravel() - 1
    has_before = np.arange(len(same)) % m > 0
    keep = np.column_stack([np.ones((len(same), 2), dtype=np.bool_), has_before])
    later_ids = np.column_stack([same, left, before])[keep]  # row by row: each flow's deps in turn
    counts, ids = np.concatenate([first_counts, 2 + has_before]), np.concatenate([first_ids, later_ids])
    builder.add_many(sender, receiver, size, counts, ids, gap, phase)
    last, before_last = flow[-1, :, -1], np.roll(flow[-1, :, -1], 1)
    return {r: (int(last[i]), int(before_last[i])) for i, r in enumerate(ranks)}


def ring_allreduce(
    builder: FlowBuilder,
    ranks: Sequence[int],
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "dp",
    chunk_bytes: int | None = None,
) -> Done:
    """Ring all-reduce = reduce-scatter then all-gather: 2(n-1) steps; in step k rank i sends chunk
    ``(i-k-1) % n`` (reduce-scatter) or ``(i-k) % n`` (all-gather) of ``size/n`` bytes to rank i+1.
    A step's send waits for the rank's previous send and for the previous step's send of rank i-1
    (the data it forwards). Each rank sends ``2(n-1)/n * size`` bytes."""
    n = len(ranks)
    steps = [lambda i, k: (i - k - 1) % n] * (n - 1) + [lambda i, k, n1=n - 1: (i - (k - n1)) % n] * (n - 1)
    return _ring(builder, "ring_allreduce", ranks, size, after, gap_ps, phase, chunk_bytes, steps)


def ring_reducescatter(
    builder: FlowBuilder,
    ranks: Sequence[int],
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "dp",
    chunk_bytes: int | None = None,
) -> Done:
    """Ring reduce-scatter of a ``size``-byte buffer per rank: n-1 steps of ``size/n`` bytes."""
    n = len(ranks)
    steps = [lambda i, k: (i - k - 1) % n] * (n - 1)
    return _ring(builder, "ring_reducescatter", ranks, size, after, gap_ps, phase, chunk_bytes, steps)


def ring_allgather(
    builder: FlowBuilder,
    ranks: Sequence[int],
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "dp",
    chunk_bytes: int | None = None,
) -> Done:
    """Ring all-gather into a ``size``-byte buffer per rank (each contributes ``size/n``): n-1 steps."""
    n = len(ranks)
    steps = [lambda i, k: (i - k) % n] * (n - 1)
    return _ring(builder, "ring_allgather", ranks, size, after, gap_ps, phase, chunk_bytes, steps)


def alltoall(
    builder: FlowBuilder,
    ranks: Sequence[int],
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "ep",
    chunk_bytes: int | None = None,
) -> Done:
    """All-to-all: rank i sends share j of its ``size``-byte buffer (``size/n``) to every rank j != i,
    all peers at once after its deps (peers in order i+1, i+2, ...). A rank is done when its sends
    and the flows sent to it have finished."""
    return alltoall_groups(builder, [ranks], size, after, gap_ps, phase, chunk_bytes)


def alltoall_groups(
    builder: FlowBuilder,
    groups: Sequence[Sequence[int]],
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "ep",
    chunk_bytes: int | None = None,
) -> Done:
    """``alltoall`` in each of ``groups`` (disjoint), the same flows in the same order as one call per group. Groups
    of one size whose pieces all have bytes are made together: MoE-32x22B on 1024 GPUs issues 1,536 dispatches and
    combines of 16 expert groups each, which one call per group made in 2.5 s of its 3.7 s of flow making."""
    if not groups:
        return {}
    checked = [_check("alltoall", g, size, chunk_bytes) for g in groups]
    groups = [g for g, _, _ in checked]
    everyone = [r for g in groups for r in g]
    if len(set(everyone)) != len(everyone):
        raise InputError("alltoall_groups(groups)", "a rank is in two groups", "give disjoint groups")
    if len({len(g) for g in groups}) > 1:
        done = {}
        for g in groups:
            done.update(alltoall_groups(builder, [g], size, after, gap_ps, phase, chunk_bytes))
        return done
    _, size, chunk_bytes = checked[0]
    n = len(groups[0])
    if n < 2 or size == 0:
        return _passthrough(everyone, after)
    shares = split_bytes(size, n)
    m = _n_pieces(shares[0], chunk_bytes)
    start = _starts(everyone, after, gap_ps)
    if shares[-1] >= m:  # every piece has bytes: each makes a flow
        return _alltoall_of_flows(builder, groups, shares, m, start, phase)
    done = {}
    for g in groups:
        done.update(_alltoall_by_pieces(builder, g, shares, m, start, phase, after))
    return done


def _alltoall_by_pieces(builder, ranks, shares, m, start, phase, after) -> Done:
    """``alltoall`` one piece at a time, as some pieces may be empty (they make no flow)."""
    n = len(ranks)
    done: dict[int, list[int]] = {r: [] for r in ranks}
    for i in range(n):
        for d in range(1, n):
            j = (i + d) % n
            node = start[ranks[i]]
            for piece in split_bytes(shares[j], m):
                node = _emit(builder, ranks[i], ranks[j], piece, [node], phase)
            if node is not start[ranks[i]]:
                done[ranks[i]].extend(node.ids)
                done[ranks[j]].extend(node.ids)
    return {r: tuple(dict.fromkeys(ids)) if ids else _passthrough([r], after)[r] for r, ids in done.items()}


def _alltoall_of_flows(builder, groups, shares, m, start, phase) -> Done:
    """``alltoall`` in groups of n ranks where no piece is empty, made as arrays: piece p that rank index i of group
    g sends to rank index ``(i + d) % n`` is flow ``first + ((g n + i) (n - 1) + d - 1) m + p``, waiting for the
    rank's start or its piece before."""
    rank = np.asarray(groups, dtype=np.int64)  # [g, i]
    n_groups, n = rank.shape
    index = np.arange(n)
    peer = (index[:, None] + np.arange(1, n)) % n  # [i, d - 1]
    pieces = np.array([split_bytes(share, m) for share in shares], dtype=np.int64)  # [share, piece] bytes
    first = len(builder)
    flow = first + np.arange(n_groups * n * (n - 1) * m).reshape(n_groups, n, n - 1, m)
    senders = rank.ravel().tolist()
    gap = np.zeros(flow.size, dtype=np.int64)
    gap[::m] = np.repeat([start[r].carry for r in senders], n - 1)
    counts, ids = _chained([start[r].ids for r in senders], flow.reshape(n_groups * n, n - 1, m))
    builder.add_many(np.repeat(rank.ravel(), (n - 1) * m), np.repeat(rank[:, peer].ravel(), m),
                     np.tile(pieces[peer].ravel(), n_groups), counts, ids, gap, phase)  # fmt: skip
    last = flow[..., -1]  # [g, i, d - 1]
    # as the piece-by-piece loop appends them: receives from senders before the rank, its own sends, the rest
    received = last[:, index[:, None], (index[None, :] - index[:, None]) % n - 1].transpose(0, 2, 1).tolist()
    last = last.tolist()
    return {
        r: (*received[g][i][:i], *last[g][i], *received[g][i][i + 1 :])
        for g, group in enumerate(groups)
        for i, r in enumerate(group)
    }


def send_recv(
    builder: FlowBuilder,
    src: int,
    dst: int,
    size: int,
    after: Mapping | None = None,
    gap_ps: int | Mapping = 0,
    phase: str = "pp",
    chunk_bytes: int | None = None,
) -> Done:
    """Point-to-point transfer of ``size`` bytes (pipeline activations or gradients), as pieces in
    sequence when ``chunk_bytes`` is set. ``after``/``gap_ps`` of ``src`` gate the send; both ends are
    done when the last piece has arrived."""
    (src, dst), size, chunk_bytes = _check("send_recv", [src, dst], size, chunk_bytes)
    if size == 0:
        return _passthrough([src, dst], after)
    node = _starts([src], after, gap_ps)[src]
    for piece in split_bytes(size, _n_pieces(size, chunk_bytes)):
        node = _emit(builder, src, dst, piece, [node], phase)
    return {src: node.ids, dst: node.ids}


class RankClock:
    """Per-rank "what must finish, then how much compute" state for building a program of ops.

    ``compute`` adds compute time, ``wait`` adds flows to wait for, ``run`` issues a collective on a
    group with each rank's pending state and, for ranks that got flows, resets the state to the
    collective's done ids. Work of a rank that never produces a flow stays pending (``gap``).
    """

    def __init__(self, ranks: Iterable[int]):
        self.deps: dict[int, tuple[int, ...]] = {r: () for r in ranks}
        self.gap: dict[int, int] = dict.fromkeys(self.deps, 0)

    def compute(self, ranks: Iterable[int], ps: int) -> None:
        for r in ranks:
            self.gap[r] += int(ps)

    def wait(self, rank: int, ids: Iterable[int]) -> None:
        self.deps[rank] = tuple(dict.fromkeys(self.deps[rank] + tuple(ids)))

    def run(self, fn, builder: FlowBuilder, ranks: Sequence[int], size: int, **kw) -> Done:
        """``fn(builder, ranks, size, after=..., gap_ps=..., **kw)``; returns its done ids."""
        return self._issue(builder, ranks, lambda after, gap: fn(builder, ranks, size, after=after, gap_ps=gap, **kw))

    def run_groups(self, fn, builder: FlowBuilder, groups: Sequence[Sequence[int]], size: int, **kw) -> Done:
        """``run`` of a generator that takes disjoint groups at once (``alltoall_groups``)."""
        ranks = [r for g in groups for r in g]
        return self._issue(builder, ranks, lambda after, gap: fn(builder, groups, size, after=after, gap_ps=gap, **kw))

    def _issue(self, builder: FlowBuilder, ranks: Sequence[int], call) -> Done:
        before = len(builder)
        done = call({r: self.deps[r] for r in ranks}, {r: self.gap[r] for r in ranks})
        if len(builder) > before:
            for r in ranks:
                if done[r] != self.deps[r]:
                    self.deps[r], self.gap[r] = done[r], 0
        return done

    def send(self, builder: FlowBuilder, src: int, dst: int, size: int, **kw) -> Done:
        """Send from ``src`` (after its pending work); ``src`` then waits for the transfer (blocking
        p2p as in Megatron). Returns the done ids; the receiver's ``wait`` is up to the caller."""
        done = send_recv(builder, src, dst, size, after={src: self.deps[src]}, gap_ps={src: self.gap[src]}, **kw)
        if size > 0:
            self.deps[src], self.gap[src] = done[src], 0
        return done
