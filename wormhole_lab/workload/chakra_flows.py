"""A Chakra trace as dependent flows, with ASTRA-sim 2.0's semantics (``astra-sim/workload/Workload.cc``).

- Nodes start when their data and control dependencies are done. A rank runs one compute node and one
  communication node (collective or send) at a time, in ASTRA-sim's issue order (dependency-free nodes by
  ascending id); receives never wait for a slot.
- Compute lasts ``duration_micros`` (1 ns when 0, as ASTRA-sim replays it).
- A send is done when its message is delivered; a receive when both it is posted and its message arrived.
  Sends and receives pair by (source, destination, tag, size), first come first served.
- A collective pairs up across its communicator group (all ranks, or a ``pg_name`` of the comm-group file) by
  issue order, and becomes flows per ``astra_collectives`` (or a custom collective's own trace).

A rank is done when its last node is; ``ChakraLayout`` keeps, for each node, when it starts and ends as
``Token``s over the flows, so that results can give ASTRA-sim's ``sys[i] finished, N cycles`` and each node's
times from the simulated flows.
"""

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from wormhole_lab.errors import InputError
from wormhole_lab.workload.astra_collectives import PS_PER_NS, AstraContext, Token, collective, merge
from wormhole_lab.workload.astra_system import AstraSystem
from wormhole_lab.workload.chakra import ChakraNode, ChakraTrace, CollectiveType, NodeType, issue_order, read_chakra
from wormhole_lab.workload.flows import FlowBuilder, FlowTable

__all__ = ["COLLECTIVE_NAMES", "ChakraLayout", "NodeSpan", "chakra_flows"]

COLLECTIVE_NAMES = {
    CollectiveType.ALL_REDUCE: "all_reduce",
    CollectiveType.ALL_GATHER: "all_gather",
    CollectiveType.REDUCE_SCATTER: "reduce_scatter",
    CollectiveType.ALL_TO_ALL: "all_to_all",
}
KIND = {
    NodeType.COMP_NODE: "comp",
    NodeType.COMM_COLL_NODE: "coll",
    NodeType.COMM_SEND_NODE: "send",
    NodeType.COMM_RECV_NODE: "recv",
}


@dataclass(frozen=True)
class NodeSpan:
    """One trace node on one rank: when it starts and ends, as tokens over the flows."""

    rank: int
    node: int
    name: str
    kind: str  # comp, coll, send, recv or other
    start: Token
    end: Token


@dataclass(frozen=True)
class ChakraLayout:
    """What ties a run's flows back to the trace (``FlowTable.meta["chakra"]``)."""

    n_ranks: int
    hosts: tuple[int, ...]  # rank -> host
    spans: tuple[NodeSpan, ...]
    rank_ends: tuple[tuple[Token, ...], ...]  # per rank, the ends of its last nodes: it finishes at the latest
    compute_ns: tuple[int, ...]  # per rank, the sum of its compute nodes (ASTRA-sim's exposed-communication basis)
    prefix: str = ""
    assumed: tuple[str, ...] = ()


@dataclass
class _Program:
    """One rank's nodes to walk (``where``: its file, for errors), and their issue order once the walk starts."""

    rank: int
    nodes: list[ChakraNode]
    where: str
    order: list[int] = field(default_factory=list)


class _Walk:
    """Walks rank programs to flows: each node once its dependencies (and slot, and partner) are known."""

    def __init__(self, ctx: AstraContext, programs: list[_Program], starts: dict[int, Token], slots: bool,
                 on_collective: Callable, spans: list):  # fmt: skip
        self.ctx, self.programs, self.slots, self.on_collective, self.spans = ctx, programs, slots, on_collective, spans
        self.starts = starts
        self.end: dict[tuple[int, int], Token] = {}
        self.sends: dict[tuple, deque] = defaultdict(deque)  # (src, dst, tag, size) -> flows not yet received
        self.recv_waiting: dict[tuple[int, int], tuple] = {}
        self.slot_of: dict[tuple[int, int], tuple[int, int] | None] = {}  # node -> the node before it in its slot
        self.coll_index: dict[tuple[int, int], tuple[str, int]] = {}  # node -> (group, k-th collective of it)
        self.pending_coll: dict[tuple[str, int], dict[int, tuple[ChakraNode, Token]]] = defaultdict(dict)
        self.parked: set[tuple[int, int]] = set()  # collectives waiting for the rest of their group
        for p in programs:
            p.order = issue_order(p.nodes)
            by_id = {n.id: n for n in p.nodes}
            last = {"comp": None, "comm": None}
            count = defaultdict(int)
            for i in p.order:
                node = by_id[i]
                kind = KIND.get(node.type, "other")
                slot = "comp" if kind == "comp" else "comm" if kind in ("coll", "send") else None
                if slot:
                    self.slot_of[p.rank, i] = last[slot] if slots else None
                    last[slot] = (p.rank, i)
                if kind == "coll":
                    group = node.pg_name or "0"
                    self.coll_index[p.rank, i] = (group, count[group])
                    count[group] += 1

    def run(self) -> dict[int, list[Token]]:
        """Every node's start and end; returns each rank's sink ends (nodes nothing on the rank waits for)."""
        left = {p.rank: deque(p.order) for p in self.programs}
        by_id = {p.rank: {n.id: n for n in p.nodes} for p in self.programs}
        while any(left.values()):
            progress = False
            for p in self.programs:
                queue = left[p.rank]
                for _ in range(len(queue)):
                    i = queue.popleft()
                    if self._try(p, by_id[p.rank][i]):
                        progress = True
                    else:
                        queue.append(i)
            if not progress:
                self._stuck(left)
        if self.pending_coll:  # a collective some rank of its group never issues
            self._stuck(left)
        sinks = {}
        for p in self.programs:
            used = {d for n in p.nodes for d in n.deps}
            sinks[p.rank] = [self.end[p.rank, n.id] for n in p.nodes if n.id not in used]
        return sinks

    def _start(self, p: _Program, node: ChakraNode) -> Token | None:
        before = [self.end.get((p.rank, d)) for d in node.deps]
        slot = self.slot_of.get((p.rank, node.id))
        if slot is not None:
            before.append(self.end.get(slot))
        if any(t is None for t in before):
            return None
        return merge([self.starts[p.rank], *before])

    def _try(self, p: _Program, node: ChakraNode) -> bool:
        key = (p.rank, node.id)
        if key in self.recv_waiting:
            return self._receive(p, node, *self.recv_waiting[key])
        start = self._start(p, node)
        if start is None:
            return False
        kind = KIND.get(node.type, "other")
        if kind == "comp":
            ns = node.duration_micros * 1000 or 1  # ASTRA-sim replays a node of no duration in 1 ns
            return self._done(p.rank, node, kind, start, start.later(ns * PS_PER_NS))
        if kind == "send":
            flow = self.ctx.send(p.rank, node.comm_dst, node.comm_size, start, "p2p")
            self.sends[p.rank, node.comm_dst, node.comm_tag, node.comm_size].append(flow)
            return self._done(p.rank, node, kind, start, Token.after((flow,)))
        if kind == "recv":
            self.recv_waiting[key] = (start, (node.comm_src, p.rank, node.comm_tag, node.comm_size))
            return self._receive(p, node, *self.recv_waiting[key])
        if kind == "coll":
            return self._collective(p, node, start)
        return self._done(p.rank, node, kind, start, start)

    def _receive(self, p: _Program, node: ChakraNode, start: Token, match: tuple) -> bool:
        if not self.sends[match]:
            return False
        del self.recv_waiting[p.rank, node.id]
        return self._done(p.rank, node, "recv", start, merge([start, Token.after((self.sends[match].popleft(),))]))

    def _collective(self, p: _Program, node: ChakraNode, start: Token) -> bool:
        group, k = self.coll_index[p.rank, node.id]
        pending = self.pending_coll[group, k]
        pending[p.rank] = (node, start)
        members = self.on_collective.members(group)
        if len(pending) < len(members):
            self.parked.add((p.rank, node.id))  # done when the last member of its group gets here
            return True
        ends = self.on_collective(group, {r: pending[r] for r in members})
        del self.pending_coll[group, k]
        for r in members:
            n, s = pending[r]
            self.parked.discard((r, n.id))
            self._done(r, n, "coll", s, ends[r])
        return True

    def _done(self, rank: int, node: ChakraNode, kind: str, start: Token, end: Token) -> bool:
        self.end[rank, node.id] = end
        self.spans.append(NodeSpan(rank, node.id, node.name, kind, start, end))
        return True

    def _stuck(self, left) -> None:
        """Nothing can go on: name a collective some rank never reaches, or a receive that never gets its send."""
        where = {p.rank: p.where for p in self.programs}
        for (group, k), pending in self.pending_coll.items():
            rank, (node, _) = next(iter(pending.items()))
            missing = sorted(set(self.on_collective.members(group)) - set(pending))
            raise InputError(f"{where[rank]}: node {node.id}", f"collective #{k} of group {group!r} never starts: "
                             f"rank(s) {missing[:8]} never reach theirs", "give every rank of the group the same "
                             "collectives in the same order")  # fmt: skip
        for (rank, i), (_, (src, _, tag, size)) in self.recv_waiting.items():
            raise InputError(
                f"{where[rank]}: node {i}",
                f"the receive from rank {src} (tag {tag}, {size} B) never gets its send: the ranks wait for each other",
                "check the order of sends and receives",
            )
        first = next(p for p in self.programs if left[p.rank])
        raise InputError(f"{first.where}: node {left[first.rank][0]}", "the trace deadlocks here",
                         "check its dependencies")  # fmt: skip


class _Collectives:
    """Runs each collective when its whole group has issued it: the group's ranks, and flows per
    ``astra_collectives`` or a custom collective's trace."""

    def __init__(self, ctx: AstraContext, trace: ChakraTrace, dims: Sequence[int], groups: dict, custom_root: Path,
                 spans: list):  # fmt: skip
        self.ctx, self.trace, self.dims, self.groups, self.custom_root, self.spans = (
            ctx, trace, tuple(dims), groups, custom_root, spans,
        )  # fmt: skip
        self.custom_traces: dict[str, ChakraTrace] = {}

    def members(self, group: str) -> list[int]:
        if group == "0":
            return list(range(self.trace.n_ranks))
        if group not in self.groups:
            raise InputError(
                "pg_name", f"a collective names communicator group {group!r}, which the comm-group configuration "
                "does not define", 'give --comm-group-configuration a JSON {"' + group + '": [ranks...]}',
            )  # fmt: skip
        return list(self.groups[group])

    def group_of(self, rank: int, dim: int) -> list[int]:
        """The ranks that differ from ``rank`` only in digit ``dim`` (dim 0 varies fastest), in digit order."""
        stride = 1
        for n in self.dims[:dim]:
            stride *= n
        base = rank - (rank // stride) % self.dims[dim] * stride
        return [base + k * stride for k in range(self.dims[dim])]

    def __call__(self, group: str, issued: dict[int, tuple[ChakraNode, Token]]) -> dict[int, Token]:
        ranks = list(issued)
        first_rank, (first, _) = next(iter(issued.items()))
        for r, (node, _) in issued.items():
            if (node.comm_type, node.comm_size) != (first.comm_type, first.comm_size):
                raise InputError(
                    f"{self.trace.ranks[r].path}: node {node.id} comm_type",
                    f"is {node.comm_type.name} of {node.comm_size} B where rank {first_rank} issues "
                    f"{first.comm_type.name} of {first.comm_size} B as the same collective of group {group!r}",
                    "give every rank of the group the same collectives in the same order",
                )  # fmt: skip
        starts = {r: start for r, (_, start) in issued.items()}
        kind = COLLECTIVE_NAMES.get(first.comm_type)
        if first.comm_type == CollectiveType.BROADCAST:  # ASTRA-sim replays it by its duration, moving no data
            ns = first.duration_micros * 1000 or 1
            return {r: starts[r].later(ns * PS_PER_NS) for r in ranks}
        if kind is None:
            raise InputError(
                f"{self.trace.ranks[first_rank].path}: node {first.id} comm_type",
                f"{first.comm_type.name} is a collective ASTRA-sim does not simulate",
                "use ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL or BROADCAST",
            )  # fmt: skip
        if kind in self.ctx.system.custom:
            return self._custom(kind, ranks, starts)
        involved = first.involved_dim or (True,) * len(self.dims)
        if group == "0":
            return collective(self.ctx, kind, first.comm_size, ranks, self.dims, involved, starts, self.group_of)
        return collective(self.ctx, kind, first.comm_size, ranks, [len(ranks)], (True,), starts,
                          lambda r, d: ranks)  # fmt: skip

    def _custom(self, kind: str, ranks: list[int], starts: dict[int, Token]) -> dict[int, Token]:
        """A custom collective: its own trace per position in the group, walked without slots (CustomAlgorithm
        issues every ready node at once, with no endpoint delay)."""
        prefix = self.ctx.system.custom[kind]
        if prefix not in self.custom_traces:
            path = Path(prefix)
            candidates = [path] if path.is_absolute() else [self.custom_root / path, Path.cwd() / path]
            found = next((c for c in candidates if any(c.parent.glob(f"{c.name}.*.et*"))), candidates[0])
            self.custom_traces[prefix] = read_chakra(found)
        custom = self.custom_traces[prefix]
        if custom.n_ranks != len(ranks):
            raise InputError(
                self.ctx.system.where(f"{kind.replace('_', '-')}-implementation-custom"),
                f"the custom collective {prefix} has {custom.n_ranks} ranks, the group has {len(ranks)}",
                "give a custom collective written for this many NPUs",
            )  # fmt: skip
        # the custom trace numbers peers by position in the group; ours are ranks
        programs = [
            _Program(r, [_renumbered(n, ranks) for n in custom.ranks[pos].nodes], str(custom.ranks[pos].path))
            for pos, r in enumerate(ranks)
        ]
        nested = _Walk(self.ctx, programs, starts, False, self, self.spans)
        sinks = nested.run()
        return {r: merge(sinks[r]) for r in ranks}


def _renumbered(node: ChakraNode, ranks: list[int]) -> ChakraNode:
    if node.type == NodeType.COMM_SEND_NODE:
        return replace(node, comm_dst=ranks[node.comm_dst])
    if node.type == NodeType.COMM_RECV_NODE:
        return replace(node, comm_src=ranks[node.comm_src])
    return node


def chakra_flows(
    trace: ChakraTrace, system: AstraSystem, hosts: Sequence[int], dims: Sequence[int] | None = None,
    comm_groups: dict | None = None,
) -> FlowTable:  # fmt: skip
    """The flows of ``trace`` run as ASTRA-sim runs it under ``system``: rank ``r`` on host ``hosts[r]``, the ranks
    laid out as a network of ``dims`` NPUs per dimension (dim 0 varies fastest; default one dimension of all).
    ``comm_groups`` maps a ``pg_name`` to its ranks. The table releases dependants at delivery (ASTRA-sim's
    message completion) and carries a ``ChakraLayout`` in ``meta["chakra"]``."""
    n = trace.n_ranks
    dims = tuple(dims) if dims else (n,)
    total = 1
    for d in dims:
        total *= d
    if total != n:
        raise InputError(
            str(trace.prefix), f"the trace has {n} ranks but the network has {total} NPUs ({dims})",
            "give a trace with one file per NPU of the network",
        )  # fmt: skip
    if len(hosts) < n:
        raise InputError(str(trace.prefix), f"the trace has {n} ranks but the topology only {len(hosts)} hosts",
                         "use a topology with a host per rank")  # fmt: skip
    ctx = AstraContext(FlowBuilder(), tuple(int(h) for h in hosts[:n]), system, {})
    spans: list[NodeSpan] = []
    root = system.path.parent if system.path else Path.cwd()
    collectives = _Collectives(ctx, trace, dims, comm_groups or {}, root, spans)
    programs = [_Program(r.rank, list(r.nodes), str(r.path)) for r in trace.ranks]
    sinks = _Walk(ctx, programs, {r: Token() for r in range(n)}, True, collectives, spans).run()
    compute = [0] * n
    for r in trace.ranks:
        compute[r.rank] = sum(node.duration_micros * 1000 or 1 for node in r.nodes if node.type == NodeType.COMP_NODE)
    layout = ChakraLayout(
        n_ranks=n,
        hosts=ctx.hosts,
        spans=tuple(spans),
        rank_ends=tuple(tuple(sinks[r]) for r in range(n)),
        compute_ns=tuple(compute),
        prefix=str(trace.prefix),
        assumed=system.assumed,
    )
    flows = ctx.builder.build(release_on_delivery=True)
    flows.meta["chakra"] = layout
    return flows
