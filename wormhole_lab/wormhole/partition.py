"""Port-level partitions: connected components of the bipartite graph of active flows and the ports they use.

A flow uses the egress ports of its data path and of its ACK path (ACKs share the data class at
switches, so they interact through the same queues). Partitions are updated incrementally, in compiled
code, one batch of logged flow events per stop of the engine: a new flow joins the one partition it
touches, founds a new one, or merges several (into the largest); a finished flow leaves, and its
partition is split when that flow was the only link between groups of the others. Each flow's and each
port's partition is the engine's own ``FL_PART`` and ``PT_PART`` (-1 when unused), written as it changes.

Kept in Python (sets and dicts, a search per completion), this bookkeeping was about 30 % of the controller's
time on MoE-8x7B: 50,000 flow events at ~25 us each. A split is found by a union-find over the partition's
members, O(members x path length) per completion that leaves two or more of its ports to others. Ids are small
integers, stable while a partition lives; which free id a new partition gets changes no result (MoE-8x7B's and
GPT-7B's FCTs were the same to the picosecond with the largest free id taken first instead of the smallest).
"""

import networkx as nx
import numpy as np

from wormhole_lab.arrays import grown_ids
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.jit import kernel
from wormhole_lab.wormhole.segments import sort_segments

# what a row of the batch is (``Partitions.place``)
START, COMPLETION, PASSED_START, PASSED_COMPLETION = 0, 1, 2, 3
# columns: per flow, its neighbours in its partition's member list; for splits, a union-find parent, and at a
# component's root the component's size and partition id
_NEXT, _PREV, _ROOT, _SIZE, _TARGET = L.PM_NEXT, 1, 2, 3, 4  # the kernel's flow log reads _NEXT
# per partition: its member list, size, time of its last change in this batch, whether it is listed as touched
_HEAD, _COUNT, _CHANGED, _LISTED = L.PMP_HEAD, 1, 2, 3  # and _HEAD
# per port: how many active flows use it, and a scratch slot (one member seen there, or a visit mark)
_USERS, _SEEN = 0, 1
# scalars: free ids, partitions alive, ids listed as touched in this batch
_FREE_N, _ALIVE, _N_LISTED = 0, 1, 2


@kernel
def _path_range(fl, f, which):
    """(begin, length) in the path table of flow ``f``'s data (``which`` 0) or ACK (1) ports."""
    if which == 0:
        return fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_LEN]
    return fl[f, L.FL_APATH_BEGIN], fl[f, L.FL_APATH_LEN]


@kernel
def _note(part, listed, meta, q, t):
    """Partition ``q`` changed at ``t`` (or is gone): list it for the layer above."""
    part[q, _CHANGED] = t
    if part[q, _LISTED] == 0:
        part[q, _LISTED] = 1
        listed[meta[_N_LISTED]] = q
        meta[_N_LISTED] += 1


@kernel
def _link(flow, part, q, f):
    head = part[q, _HEAD]
    flow[f, _NEXT] = head
    flow[f, _PREV] = -1
    if head >= 0:
        flow[head, _PREV] = f
    part[q, _HEAD] = f
    part[q, _COUNT] += 1


@kernel
def _unlink(flow, part, q, f):
    nxt, prv = flow[f, _NEXT], flow[f, _PREV]
    if prv >= 0:
        flow[prv, _NEXT] = nxt
    else:
        part[q, _HEAD] = nxt
    if nxt >= 0:
        flow[nxt, _PREV] = prv
    part[q, _COUNT] -= 1


@kernel
def _label(fl, pt, path_ports, f, q):
    """Flow ``f`` and its ports belong to partition ``q``."""
    fl[f, L.FL_PART] = q
    for which in range(2):
        begin, length = _path_range(fl, f, which)
        for i in range(begin, begin + length):
            pt[path_ports[i], L.PT_PART] = q


@kernel
def _new_id(free, meta):
    """A free id (its member list is empty: ``_release`` left it so)."""
    meta[_FREE_N] -= 1
    meta[_ALIVE] += 1
    return free[meta[_FREE_N]]


@kernel
def _release(part, free, meta, q):
    part[q, _HEAD] = -1
    part[q, _COUNT] = 0
    free[meta[_FREE_N]] = q
    meta[_FREE_N] += 1
    meta[_ALIVE] -= 1


@kernel
def _add(fl, pt, path_ports, flow, part, port, free, listed, meta, f, t):
    """Place started flow ``f``: it joins, founds or merges partitions (the largest keeps its id)."""
    best = -1
    for which in range(2):  # the partitions it touches: the largest first, then the smallest id
        begin, length = _path_range(fl, f, which)
        for i in range(begin, begin + length):
            p = path_ports[i]
            if port[p, _USERS] > 0:
                q = pt[p, L.PT_PART]
                _note(part, listed, meta, q, t)
                if (
                    best < 0
                    or part[q, _COUNT] > part[best, _COUNT]
                    or (part[q, _COUNT] == part[best, _COUNT] and q < best)
                ):
                    best = q
    if best < 0:
        best = _new_id(free, meta)
    for which in range(2):  # merge the others into it
        begin, length = _path_range(fl, f, which)
        for i in range(begin, begin + length):
            p = path_ports[i]
            if port[p, _USERS] > 0 and pt[p, L.PT_PART] != best:
                q = pt[p, L.PT_PART]
                g = part[q, _HEAD]
                while g >= 0:
                    after = flow[g, _NEXT]
                    _label(fl, pt, path_ports, g, best)
                    _link(flow, part, best, g)
                    g = after
                _release(part, free, meta, q)
    for which in range(2):
        begin, length = _path_range(fl, f, which)
        for i in range(begin, begin + length):
            port[path_ports[i], _USERS] += 1
    _label(fl, pt, path_ports, f, best)
    _link(flow, part, best, f)
    _note(part, listed, meta, best, t)


@kernel
def _find(flow, g):
    while flow[g, _ROOT] != g:
        flow[g, _ROOT] = flow[flow[g, _ROOT], _ROOT]
        g = flow[g, _ROOT]
    return g


@kernel
def _remove(fl, pt, path_ports, flow, part, port, free, listed, meta, f, t):
    """Drop finished flow ``f``; its partition splits into its connected components if ``f`` joined them."""
    q = fl[f, L.FL_PART]
    fl[f, L.FL_PART] = -1
    _unlink(flow, part, q, f)
    _note(part, listed, meta, q, t)
    linked = 0  # f's ports that other flows still use
    for which in range(2):
        begin, length = _path_range(fl, f, which)
        for i in range(begin, begin + length):
            p = path_ports[i]
            port[p, _USERS] -= 1
            if port[p, _USERS] == 0:
                pt[p, L.PT_PART] = -1
            else:
                linked += 1
    if part[q, _COUNT] == 0:
        _release(part, free, meta, q)
        return
    if linked < 2:
        return  # the others met on at most one of its ports: still joined
    # union-find over the members through the ports they use (a port's _SEEN holds a member seen there)
    g = part[q, _HEAD]
    while g >= 0:
        flow[g, _ROOT] = g
        g = flow[g, _NEXT]
    g = part[q, _HEAD]
    components = part[q, _COUNT]
    while g >= 0:
        for which in range(2):
            begin, length = _path_range(fl, g, which)
            for i in range(begin, begin + length):
                p = path_ports[i]
                if port[p, _SEEN] < 0:
                    port[p, _SEEN] = g
                else:
                    a, b = _find(flow, g), _find(flow, port[p, _SEEN])
                    if a != b:
                        flow[a, _ROOT] = b
                        components -= 1
        g = flow[g, _NEXT]
    g = part[q, _HEAD]
    while g >= 0:
        for which in range(2):
            begin, length = _path_range(fl, g, which)
            for i in range(begin, begin + length):
                port[path_ports[i], _SEEN] = -1
        g = flow[g, _NEXT]
    if components == 1:
        return
    # the largest component keeps the id (the first member's root on a tie); each other one moves to a new id
    g = part[q, _HEAD]
    while g >= 0:
        r = _find(flow, g)
        flow[r, _SIZE] = 0
        flow[r, _TARGET] = -1
        g = flow[g, _NEXT]
    keep, size = -1, 0
    g = part[q, _HEAD]
    while g >= 0:
        r = _find(flow, g)
        flow[r, _SIZE] += 1
        if flow[r, _SIZE] > size:
            keep, size = r, flow[r, _SIZE]
        g = flow[g, _NEXT]
    flow[keep, _TARGET] = q
    g = part[q, _HEAD]
    part[q, _HEAD] = -1
    part[q, _COUNT] = 0
    while g >= 0:  # the members are linked afresh into their component's partition
        after = flow[g, _NEXT]
        r = _find(flow, g)
        if flow[r, _TARGET] < 0:
            flow[r, _TARGET] = _new_id(free, meta)
            _note(part, listed, meta, np.int64(flow[r, _TARGET]), t)
        target = np.int64(flow[r, _TARGET])  # an int64 id, as elsewhere: one compile of _note, _label, _link
        _label(fl, pt, path_ports, g, target)
        _link(flow, part, target, g)
        g = after


@kernel
def _place(fl, pt, parts, path_ports, flow, part, port, free, listed, meta, log, counts):
    """Apply the batch ``log`` (rows of flow, time, kind); ``counts[r]``: partitions alive after row r. The
    partitions that changed and live on have their steady test restarted at their last change."""
    for i in range(meta[_N_LISTED]):
        part[listed[i], _LISTED] = 0
    meta[_N_LISTED] = 0
    for r in range(log.shape[0]):
        f, t, kind = log[r, 0], log[r, 1], log[r, 2]
        if kind == START:
            _add(fl, pt, path_ports, flow, part, port, free, listed, meta, f, t)
        elif kind == COMPLETION:
            _remove(fl, pt, path_ports, flow, part, port, free, listed, meta, f, t)
        elif kind == PASSED_COMPLETION:
            # it never had a partition; those it touched changed at its completion, as if it had been placed
            fl[f, L.FL_PART] = -1
            for which in range(2):
                begin, length = _path_range(fl, f, which)
                for i in range(begin, begin + length):
                    if port[path_ports[i], _USERS] > 0:
                        _note(part, listed, meta, pt[path_ports[i], L.PT_PART], t)
        counts[r] = meta[_ALIVE]
    for i in range(meta[_N_LISTED]):
        q = listed[i]
        if part[q, _COUNT] > 0:
            for c in range(parts.shape[1]):
                parts[q, c] = 0
            parts[q, L.PA_CHANGED_AT] = part[q, _CHANGED]


@kernel
def _kinds(flows, started, seen, kinds):
    """``kinds[r]`` of log row r (``Partitions.kinds``); ``seen``: per flow scratch, 0 on entry and exit."""
    for r in range(len(flows)):
        if started[r] == 1:
            seen[flows[r]] = 1
    for r in range(len(flows)):
        if started[r] == 0 and seen[flows[r]] >= 1:
            seen[flows[r]] = 2
    for r in range(len(flows)):
        passed = seen[flows[r]] == 2
        if started[r] == 1:
            kinds[r] = PASSED_START if passed else START
        else:
            kinds[r] = PASSED_COMPLETION if passed else COMPLETION
    for r in range(len(flows)):
        seen[flows[r]] = 0


@kernel
def _skipping_at_ports_of(fl, pt, parts, path_ports, flows, now, mark, out):
    """Into ``out``, each once, the partitions of the data and ACK ports of ``flows`` whose skip ends after ``now``
    (``PA_SKIP_END``, as the kernel's flow log tests a start); returns how many. ``mark``: per partition id scratch,
    0 on entry and exit."""
    n = 0
    for f in flows:
        for which in range(2):
            begin, length = _path_range(fl, f, which)
            for i in range(begin, begin + length):
                q = pt[path_ports[i], L.PT_PART]
                if q >= 0 and mark[q] == 0 and parts[q, L.PA_SKIP_END] > now:
                    mark[q] = 1
                    out[n] = q
                    n += 1
    for k in range(n):
        mark[out[k]] = 0
    return n


@kernel
def _members(flow, part, q, out, n):
    """Write partition ``q``'s flows to ``out`` from ``out[n]`` on; returns the end."""
    g = part[q, _HEAD]
    while g >= 0:
        out[n] = g
        n += 1
        g = flow[g, _NEXT]
    return n


@kernel
def _members_of(flow, part, qs, out, offsets):
    n = 0
    for i in range(len(qs)):
        offsets[i] = n
        n = _members(flow, part, qs[i], out, n)
    offsets[len(qs)] = n
    return n


@kernel
def _ports(fl, path_ports, flow, part, port, q, out):
    n, g = 0, part[q, _HEAD]
    while g >= 0:
        for which in range(2):
            begin, length = _path_range(fl, g, which)
            for i in range(begin, begin + length):
                p = path_ports[i]
                if port[p, _SEEN] == -1:
                    port[p, _SEEN] = -2
                    out[n] = p
                    n += 1
        g = flow[g, _NEXT]
    for i in range(n):
        port[out[i], _SEEN] = -1
    return n


@kernel
def _ports_of(fl, path_ports, flow, part, port, qs, out, offsets):
    """``_ports`` of each partition ``qs[k]`` into ``out[offsets[k] : offsets[k + 1]]`` (partitions share no port, so
    ``out`` needs room for every port once)."""
    for k in range(len(qs)):
        offsets[k + 1] = offsets[k] + _ports(fl, path_ports, flow, part, port, qs[k], out[offsets[k] :])


class Partitions:
    """The active flows of an engine state, grouped into partitions; ids are small integers < number of flows.

    The tables indexed by partition id (the engine's ``parts``, the member lists' heads, the free ids) have a row
    per id in use or free, not per flow: they start with the rows of the state's ``parts`` and double when a batch
    might need more ids than are free. A batch needs at most one id per flow placed during it (every partition has
    a member), so MoE-32x22B on 1024 GPUs, 1.4 M flows of which ~10,000 are active at once, keeps a few thousand
    rows where it kept one per flow (144 B per flow with the skip layer's tables, ``FastForward.fit``)."""

    def __init__(self, state):
        self._state = state
        n, n_ports = len(state.fl), len(state.pt)
        ids = len(state.parts) - 1  # its last row is the bucket of flows not placed yet
        self._flow = np.full((n, 5), -1, dtype=np.int32)  # flow and partition ids, sizes: 20 B per flow
        self._part = np.zeros((ids + 1, 4), dtype=np.int64)  # a row for the bucket too, so it grows as parts does
        self._part[:, _HEAD] = -1
        state.pm_flow, state.pm_part = self._flow, self._part
        self._port = np.zeros((n_ports, 2), dtype=np.int64)
        self._port[:, _SEEN] = -1
        self._free = np.arange(ids - 1, -1, -1, dtype=np.int64)  # the smallest id on top
        self._listed = np.zeros(ids + 1, dtype=np.int64)
        self._meta = np.array([ids, 0, 0], dtype=np.int64)
        self._placed = 0  # flows in partitions
        self._out_flows = np.zeros(n, dtype=np.int64)
        self._out_ports = np.zeros(n_ports, dtype=np.int64)
        self._seen = np.zeros(n, dtype=np.int8)

    def _make_room(self, log: np.ndarray, starts: int) -> None:
        """Enough free ids for the batch ``log`` that places ``starts`` flows. The new ids go under the free ones,
        so ids are handed out as with a row per flow."""
        s = self._state
        ids = len(s.parts) - 1
        need = self._placed + starts
        if need <= ids:
            return
        grown = min(len(s.fl), max(2 * ids, need))
        s.parts = grown_ids(s.parts, grown + 1, 0)
        logged = log[:, 0]  # the flows in the bucket are those started since the last batch: the bucket moves
        s.fl[logged[s.fl[logged, L.FL_PART] == ids], L.FL_PART] = grown
        self._part = grown_ids(self._part, grown + 1, 0)
        self._part[ids:grown, _HEAD] = -1
        s.pm_part = self._part
        self._listed = np.concatenate([self._listed, np.zeros(grown - ids, dtype=np.int64)])
        # a stack with room for every id: the new ids at the bottom, the free ones (self._free[:free]) on top
        self._free = np.concatenate([np.arange(grown - 1, ids - 1, -1, dtype=np.int64), self._free])
        self._meta[_FREE_N] += grown - ids

    def kinds(self, flows: np.ndarray, started: np.ndarray) -> np.ndarray:
        """The kind of each row of a flow log (``flows``, ``started`` 1 or 0) for ``place``: a completion of a flow
        that started in the same log is ``PASSED_COMPLETION``, and that start ``PASSED_START``."""
        kinds = np.empty(len(flows), dtype=np.int64)
        _kinds(flows, started, self._seen, kinds)
        return kinds

    def skipping_at_ports_of(self, flows: np.ndarray, now: int) -> np.ndarray:
        """The partitions, ascending, that the data and ACK ports of ``flows`` belong to now and that are being
        fast-forwarded past ``now``."""
        s = self._state
        out = self._out_flows  # room for every partition id once
        n = _skipping_at_ports_of(s.fl, s.pt, s.parts, s.path_ports, flows, now, self._seen, out)
        return np.sort(out[:n])

    def place(self, log: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply a batch of flow events, rows of (flow, time, kind: ``START``, ``COMPLETION``, or a flow that
        started and completed in this batch, ``PASSED_START`` and ``PASSED_COMPLETION``). Returns the ids it
        touched (changed, merged away or emptied; ``alive_among`` and ``changed_at`` tell which is which), and the
        number of partitions after each row."""
        s = self._state
        counts = np.zeros(len(log), dtype=np.int64)
        log = np.ascontiguousarray(log, dtype=np.int64)
        starts = int(np.count_nonzero(log[:, 2] == START))
        self._make_room(log, starts)
        self._placed += starts - int(np.count_nonzero(log[:, 2] == COMPLETION))
        _place(s.fl, s.pt, s.parts, s.path_ports, self._flow, self._part, self._port, self._free, self._listed,
               self._meta, log, counts)  # fmt: skip
        return self._listed[: self._meta[_N_LISTED]].copy(), counts

    def __len__(self) -> int:
        return int(self._meta[_ALIVE])

    def alive(self, part: int) -> bool:
        return bool(self._part[part, _COUNT] > 0)

    def alive_among(self, parts: np.ndarray) -> np.ndarray:
        """Those of the ids ``parts`` that are partitions now, ascending."""
        return np.sort(parts[self._part[parts, _COUNT] > 0])

    def changed_at(self, part):
        """When partition ``part`` (an id or an array of them) last changed in the latest batch (meaningful for the
        ids that batch touched)."""
        return self._part[part, _CHANGED]

    def members(self, part: int) -> list[int]:
        """The flows of partition ``part``."""
        return self._out_flows[: _members(self._flow, self._part, part, self._out_flows, 0)].tolist()

    def member_ids(self, part: int) -> np.ndarray:
        """The flows of partition ``part``, ascending."""
        return np.sort(self._out_flows[: _members(self._flow, self._part, part, self._out_flows, 0)])

    def members_of(self, parts: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The flows of each of ``parts`` at once, ascending within each: ``flows[offsets[i] : offsets[i + 1]]``."""
        qs = np.asarray(parts, dtype=np.int64)
        offsets = np.zeros(len(qs) + 1, dtype=np.int64)
        flows = self._out_flows[: _members_of(self._flow, self._part, qs, self._out_flows, offsets)].copy()
        sort_segments(flows, offsets)
        return flows, offsets

    def ports(self, part: int) -> np.ndarray:
        """The ports of partition ``part``'s flows."""
        s = self._state
        n = _ports(s.fl, s.path_ports, self._flow, self._part, self._port, part, self._out_ports)
        return self._out_ports[:n].copy()

    def ports_of(self, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ports of each of ``parts`` at once: ``ports[offsets[i] : offsets[i + 1]]``."""
        s = self._state
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        _ports_of(s.fl, s.path_ports, self._flow, self._part, self._port, parts, self._out_ports, offsets)
        return self._out_ports[: offsets[-1]].copy(), offsets

    @property
    def flows(self) -> dict[int, set[int]]:
        """Every partition's flows, by id."""
        alive = np.flatnonzero(self._part[:, _COUNT] > 0).tolist()
        return {part: set(self.members(part)) for part in alive}

    def recompute(self) -> list[set[int]]:
        """The partitions from scratch with networkx, from the active flows' paths (the check on the compiled
        bookkeeping)."""
        s = self._state
        graph = nx.Graph()
        for f in np.flatnonzero(s.fl[:, L.FL_STATE] == L.FS_ACTIVE).tolist():
            graph.add_node(("f", f))
            for begin, length in ((L.FL_PATH_BEGIN, L.FL_PATH_LEN), (L.FL_APATH_BEGIN, L.FL_APATH_LEN)):
                first = s.fl[f, begin]
                ports = s.path_ports[first : first + s.fl[f, length]].tolist()
                graph.add_edges_from((("f", f), ("p", p)) for p in ports)
        return [{n[1] for n in comp if n[0] == "f"} for comp in nx.connected_components(graph)]
