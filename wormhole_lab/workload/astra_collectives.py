"""Collectives as ASTRA-sim 2.0 runs them, as point-to-point flows with dependencies.

The semantics are ASTRA-sim's (``astra-sim/system/Sys.cc`` ``generate_collective``, ``astraccl/native_collectives/
collective_algorithm/{Ring,AllToAll,HalvingDoubling,DoubleBinaryTreeAllReduce}.cc``, commit 518bd513); the code is
ours. What ASTRA-sim's timing needs and our flows express:

- A collective of ``size`` bytes is cut into chunks of ``size // preferred-dataset-splits`` (at least one byte per
  NPU, except all-gather); every chunk is a stream of phases, one per network dimension the collective involves.
  Only ``active-chunks-per-dimension`` streams run at once: stream ``j`` starts where stream ``j - a`` ended.
- A phase is one algorithm over the NPUs of one dimension (``members``, in ring order). Its messages are flows;
  the next message a rank sends waits for the message it received (ASTRA-sim's receive completion, which our
  engine releases at the last byte's delivery) plus the endpoint delay, plus a reduction's time
  (3 passes over local memory) where the algorithm reduces.
- ``Token`` is "when something on a rank is done": the flows it waits for, each with the time after it, and a time
  it is not done before. A rank's first message of a phase leaves one endpoint delay after the phase starts.

Where ASTRA-sim's timing takes a maximum with an event that is never the later one when every rank advances
together (a receive posted before its data arrives), the flows leave it out: exact on the symmetric networks of
the comparison (docs/chakra.md).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from wormhole_lab.errors import InputError
from wormhole_lab.workload.astra_system import AstraSystem
from wormhole_lab.workload.flows import FlowBuilder

__all__ = ["AstraContext", "Token", "collective", "merge", "plan_phases"]

PS_PER_NS = 1000


class Token(NamedTuple):
    """Done at max(each flow's delivery plus its own delay, ``floor_ps``): ``waits`` is ``((flow id, delay ps),
    ...)``. The engine starts a flow at max(each dependency plus that edge's gap, its start time), so a token is
    exactly what one flow can wait for."""

    waits: tuple[tuple[int, int], ...] = ()
    floor_ps: int = 0

    @classmethod
    def after(cls, flows, delay_ps: int = 0) -> "Token":
        """Done ``delay_ps`` after the last of ``flows`` is delivered."""
        return cls(tuple((f, delay_ps) for f in flows))

    def later(self, ps: int) -> "Token":
        return Token(tuple((f, d + ps) for f, d in self.waits), self.floor_ps + ps)


def merge(tokens: Sequence[Token]) -> Token:
    """Done when all of ``tokens`` are (a flow waited for twice keeps the longer delay)."""
    if len(tokens) == 1:
        return tokens[0]
    waits: dict[int, int] = {}
    for t in tokens:
        for f, d in t.waits:
            if d >= waits.get(f, d):
                waits[f] = d
    return Token(tuple(waits.items()), max(t.floor_ps for t in tokens))


@dataclass
class AstraContext:
    """What every phase needs: the flows being built, rank -> host, the system's delays, and the per-dimension
    counters of double binary trees (ASTRA-sim alternates its two trees chunk by chunk, per rank, across
    collectives)."""

    builder: FlowBuilder
    hosts: Sequence[int]
    system: AstraSystem
    tree_turns: dict

    @property
    def d_ps(self) -> int:
        return self.system.endpoint_delay_ns * PS_PER_NS

    def reduction_ps(self, nbytes: int) -> int:
        return self.system.reduction_ns(nbytes) * PS_PER_NS

    def send(self, src: int, dst: int, nbytes: int, after: Token, phase: str) -> int:
        """A flow from rank ``src`` to rank ``dst`` that starts once ``after`` is done."""
        if nbytes <= 0:
            raise InputError("collective", f"a message from rank {src} to rank {dst} would carry {nbytes} bytes "
                             "(ASTRA-sim asserts on it)", "use a larger collective size or fewer chunks")  # fmt: skip
        deps = tuple(f for f, _ in after.waits)
        gaps = tuple(d for _, d in after.waits)
        return self.builder.add(
            self.hosts[src], self.hosts[dst], nbytes, deps=deps, dep_gaps=gaps, phase=phase, start_ps=after.floor_ps
        )


Starts = dict[int, Token]


def _ring(ctx: AstraContext, kind: str, members: list[int], size: int, starts: Starts, step: int) -> Starts:
    """Ring.cc: every message goes to the next member and comes from the previous one; the k-th send waits for
    the (k-1)-th receive. All-reduce: 2(N-1) messages of size/N, the first N-1 receives reduced; reduce-scatter:
    N-1 of size/N, all reduced; all-gather: N-1 of the whole size; all-to-all: N(N-1)/2 of size/N."""
    n = len(members)
    count = {"all_reduce": 2 * (n - 1), "reduce_scatter": n - 1, "all_gather": n - 1, "all_to_all": n * (n - 1) // 2}
    msg = size if kind == "all_gather" else size // n
    reduce_ps = ctx.reduction_ps(msg) if kind in ("all_reduce", "reduce_scatter") else 0
    reduced = n - 1 if kind == "all_reduce" else (count[kind] if kind == "reduce_scatter" else 0)
    last = {i: None for i in range(n)}  # the flow member i sent last
    for k in range(1, count[kind] + 1):
        sent = {}
        for i in range(n):
            if k == 1:
                after = starts[members[i]].later(ctx.d_ps)
            else:
                after = Token.after((last[(i - step) % n],), ctx.d_ps + (reduce_ps if k - 1 <= reduced else 0))
            sent[i] = ctx.send(members[i], members[(i + step) % n], msg, after, kind)
        last = sent
    tail = ctx.d_ps + (reduce_ps if count[kind] <= reduced else 0)
    return {members[i]: Token.after((last[(i - step) % n],), tail) for i in range(n)}


def _direct(ctx: AstraContext, kind: str, members: list[int], size: int, starts: Starts, step: int, window: int):
    """AllToAll.cc: member i's k-th message goes to member i + k (k = 1..N-1), a window of ``window`` in flight,
    each receive letting the next one go. All-reduce sends a second round of the same messages once every first
    round message has arrived."""
    n = len(members)
    window = n - 1 if window == 0 else min(window, n - 1)
    if kind == "all_reduce" and window < n - 1:
        raise InputError("all-reduce-implementation", f"direct{window} all-reduce on {n} NPUs is not modelled",
                         "use direct (no window), ring or halvingDoubling")  # fmt: skip
    msg = size if kind == "all_gather" else size // n
    reduce_ps = ctx.reduction_ps(msg) if kind in ("all_reduce", "reduce_scatter") else 0

    def one_round(first: Starts, gap_ps: int) -> dict:
        """The flows member i receives, k = 1..N-1; its k-th send leaves after ``first``'s, or after its
        (k - window)-th receive plus ``gap_ps``."""
        out = {i: [] for i in range(n)}
        for k in range(1, n):
            for i in range(n):
                if k <= window:
                    after = first[members[i]]
                else:
                    src = (i - (k - window) * step) % n
                    after = Token.after((out[src][k - window - 1],), gap_ps)
                out[i].append(ctx.send(members[i], members[(i + k * step) % n], msg, after, kind))
        return {i: tuple(out[(i - k * step) % n][k - 1] for k in range(1, n)) for i in range(n)}

    first = {r: starts[r].later(ctx.d_ps) for r in members}
    into = one_round(first, ctx.d_ps + reduce_ps)
    if kind != "all_reduce":
        return {members[i]: Token.after(into[i], ctx.d_ps + reduce_ps) for i in range(n)}
    second = {members[i]: Token.after(into[i], ctx.d_ps + reduce_ps) for i in range(n)}
    into = one_round(second, ctx.d_ps)
    return {members[i]: Token.after(into[i], ctx.d_ps) for i in range(n)}


def _halving_doubling(ctx: AstraContext, kind: str, members: list[int], size: int, starts: Starts) -> Starts:
    """HalvingDoubling.cc: partners at distance 1, 2, 4, ... (the partner of i at distance o is i XOR o).
    Reduce-scatter halves the message each step, all-gather starts at the whole size at distance N/2 and doubles
    it, all-reduce is the first then the second; a receive before the last of the reducing half is reduced at
    the size of the next message."""
    n = len(members)
    levels = n.bit_length() - 1
    if n != 1 << levels:
        raise InputError("halvingDoubling", f"needs a power-of-two number of NPUs, got {n}", "use ring or direct")
    steps = []  # (distance, bytes, reduced at the size of the next message)
    if kind in ("all_reduce", "reduce_scatter"):
        msg = size
        for level in range(levels):
            msg //= 2
            steps.append((1 << level, msg))
        if kind == "all_reduce":
            for level in reversed(range(levels)):
                steps.append((1 << level, msg))
                msg *= 2
    elif kind == "all_gather":
        msg = size
        for level in reversed(range(levels)):
            steps.append((1 << level, msg))
            msg *= 2
    else:
        raise InputError("all-to-all-implementation", "halvingDoubling cannot run an all-to-all (ASTRA-sim exits)",
                         "use ring or direct")  # fmt: skip
    reducing = levels - 1 if kind in ("all_reduce", "reduce_scatter") else 0
    last = None
    for k, (distance, nbytes) in enumerate(steps, 1):
        sent = {}
        for i in range(n):
            if k == 1:
                after = starts[members[i]].later(ctx.d_ps)
            else:
                extra = ctx.reduction_ps(nbytes) if k - 1 <= reducing else 0
                after = Token.after((last[i ^ steps[k - 2][0]],), ctx.d_ps + extra)
            sent[i] = ctx.send(members[i], members[i ^ distance], nbytes, after, kind)
        last = sent
    return {members[i]: Token.after((last[i ^ steps[-1][0]],), ctx.d_ps) for i in range(n)}


def binary_tree(n: int, root_max: bool) -> tuple[list[int], list[list[int]]]:
    """(parent of each index or -1, children of each index) of ASTRA-sim's BinaryTree over indices 0..n-1: a root
    with one complete subtree of depth log2(n), numbered in order (RootMax: the subtree on the left, so the root
    is n-1; RootMin: on the right, the root is 0)."""
    depth = n.bit_length()
    parent, children = [-1] * n, [[] for _ in range(n)]
    counter = iter(range(n))

    def build(levels: int) -> int:
        """In-order numbering of a complete subtree of ``levels`` levels; returns its root's index."""
        left = build(levels - 1) if levels > 1 else None
        me = next(counter)
        right = build(levels - 1) if levels > 1 else None
        for child in (left, right):
            if child is not None:
                parent[child] = me
                children[me].append(child)
        return me

    if root_max:
        sub = build(depth - 1)
        root = next(counter)
    else:
        root = next(counter)
        sub = build(depth - 1)
    parent[sub] = root
    children[root].append(sub)
    return parent, children


def _double_binary_tree(ctx: AstraContext, members: list[int], size: int, starts: Starts, dim_key) -> Starts:
    """DoubleBinaryTreeAllReduce.cc: an all-reduce of the whole size up one of two trees and back down; chunks
    alternate trees. A leaf sends to its parent and ends when its parent's data arrives; an inner node sends up
    once both children's data are reduced, and down to both children once its parent's are; the root sends back
    down once its child's data are reduced."""
    n = len(members)
    if n & (n - 1):
        raise InputError("doubleBinaryTree", f"needs a power-of-two number of NPUs, got {n}", "use ring or direct")
    turn = ctx.tree_turns.get(dim_key, 0)
    ctx.tree_turns[dim_key] = turn + 1
    parent, children = binary_tree(n, root_max=turn % 2 == 0)
    reduce_ps = ctx.reduction_ps(size)
    up = {}  # flow from index i to its parent

    def send_up(i: int) -> None:
        if parent[i] < 0 or i in up:
            return
        kids = children[i]
        for c in kids:
            send_up(c)
        if kids:  # a receive posted at the stream's start completes at max(its data's arrival, that start)
            after = merge([Token.after(tuple(up[c] for c in kids)), starts[members[i]]]).later(ctx.d_ps + reduce_ps)
        else:
            after = starts[members[i]].later(ctx.d_ps)
        up[i] = ctx.send(members[i], members[parent[i]], size, after, "all_reduce")

    for i in range(n):
        send_up(i)
    root = parent.index(-1)
    exits, down = {}, {}  # down: flow from a parent to index i
    order = [root]
    for i in order:  # breadth first from the root: a parent's flows down exist before its children's
        if i == root:
            got = merge([Token.after((up[children[i][0]],)), starts[members[i]]]).later(ctx.d_ps + reduce_ps)
        else:
            got = Token.after((down[i],), ctx.d_ps + (reduce_ps if children[i] else 0))
        for c in children[i]:
            down[c] = ctx.send(members[i], members[c], size, got, "all_reduce")
            order.append(c)
        exits[members[i]] = got
    return exits


def _phase(ctx, algorithm: tuple[str, int], kind: str, members, size: int, starts: Starts, step: int, dim_key):
    name, window = algorithm
    if name == "doubleBinaryTree":
        return _double_binary_tree(ctx, members, size, starts, dim_key)
    if len(members) == 1:
        return dict(starts)
    if name == "ring":
        return _ring(ctx, kind, members, size, starts, step)
    if name == "direct":
        return _direct(ctx, kind, members, size, starts, step, window)
    return _halving_doubling(ctx, kind, members, size, starts)


def plan_phases(system: AstraSystem, kind: str, dims: Sequence[int], involved: Sequence[bool]):
    """ASTRA-sim's phases of one chunk: ``[(dim, kind, step)]`` with step +1 (clockwise) or -1. All-reduce under
    localBWAware is reduce-scatters up the involved dimensions, an all-reduce on the last, all-gathers back down;
    other collectives (and baseline all-reduce) run once per involved dimension, all-gather from the last."""
    used = [q for q, n in enumerate(dims) if n > 1 and (q >= len(involved) or involved[q])]
    if kind == "all_reduce" and system.collective_optimization == "localBWAware" and used:
        return (
            [(q, "reduce_scatter", 1) for q in used[:-1]]
            + [(used[-1], "all_reduce", 1)]
            + [(q, "all_gather", -1) for q in reversed(used[:-1])]
        )
    order = reversed(used) if kind == "all_gather" else used
    return [(q, kind, 1) for q in order]


def _resized(kind: str, size: int, n: int) -> int:
    return size // n if kind == "reduce_scatter" else size * n if kind == "all_gather" else size


def collective(
    ctx: AstraContext, kind: str, size: int, ranks: Sequence[int], dims: Sequence[int], involved: Sequence[bool],
    starts: Starts, group_of: Callable[[int, int], list[int]],
) -> Starts:  # fmt: skip
    """Flows of one collective over ``ranks`` (a network of ``dims`` NPUs per dimension); ``group_of(rank, dim)``
    lists the rank's peers in that dimension in ring order. Returns each rank's end."""
    given = kind
    ctx.system.algorithm(given, 0)  # an error naming the key if the system gives no algorithm for it
    if any(name == "doubleBinaryTree" for name, _ in ctx.system.implementations[given]):
        kind = "all_reduce"  # ASTRA-sim runs any collective given a double binary tree as an all-reduce
    total = len(ranks)
    chunk = size // ctx.system.splits
    if kind != "all_gather" and total > chunk:
        chunk, size = total, ctx.system.splits * total
    if chunk == 0:
        raise InputError("comm_size", f"{size} bytes in {ctx.system.splits} chunks leaves 0 bytes per chunk",
                         "use a larger size or fewer preferred-dataset-splits")  # fmt: skip
    streams = max(1, math.ceil(size / chunk))
    phases = [(None, kind, 1)] if ctx.system.flat.get(given) else plan_phases(ctx.system, kind, dims, involved)
    if not phases:
        return dict(starts)
    active = ctx.system.active_chunks
    ends: list[Starts] = []  # per stream, per phase: each rank's end of that phase
    finished = []
    for j in range(streams):
        here, done = dict(starts), []
        nbytes = chunk
        for p, (dim, phase_kind, step) in enumerate(phases):
            if j >= active:  # a slot of this phase's queue frees when the stream ``active`` places earlier leaves it
                slot = ends[j - active][p]
                here = {r: merge([here[r], slot[r]]) for r in ranks}
            algorithm = ctx.system.algorithm(given, 0 if dim is None else dim)
            out: Starts = {}
            for r in ranks:
                if r in out:
                    continue
                members = list(ranks) if dim is None else group_of(r, dim)
                key = "flat" if dim is None else dim
                out |= _phase(ctx, algorithm, phase_kind, members, nbytes, here, step, key)
            done.append(out)
            here = out
            nbytes = _resized(phase_kind, nbytes, len(ranks) if dim is None else dims[dim])
        ends.append(done)
        finished.append(here)
    # stream j starts on a rank where stream j - active ended, so only the last ``active`` streams can end last
    return {r: merge([f[r] for f in finished[-active:]]) for r in ranks}
