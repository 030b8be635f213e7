"""Finding a partition's stored transient: its FCG, the canonical key, the memo DB's entries under that key
and a labelled isomorphism that maps a stored entry onto the partition's flows.

The partitions of a training job repeat, on the same ports (every layer's all-to-all runs on the same NICs
and switch ports) and on others alike (each expert group's all-to-all), so each outcome is also kept for the
run by the partition's layout: its flows in the order of their paths, each with its rate level, path shape
and line rate, and its ports renumbered in order of first use. A layout seen before needs neither the FCG,
the hash nor the isomorphism: two partitions of one layout have the same FCG, flow for flow in that order (the
renumbering is a one-to-one map of their ports, so every flow pair shares as many), and the stored mapping
carries over position by position. Layouts found in no entry are forgotten when an entry is stored under their key.

Most partitions of a growing collective match nothing stored: before any of that, the multiset of the FCG's vertex
labels (rate level, path shape, line rate per flow), which isomorphic graphs share, is looked up among those of
the stored entries. On MoE-32x22B's 1.3 M lookups (1024 GPUs), layouts and their hashes took a third of the run.
Labels and layouts are int64 codes, a layout made in compiled code and kept by its bytes: built in Python as
tuples, they were 40 % of MoE-8x7B's memo lookups.
"""

from typing import NamedTuple

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.wormhole.fcg import (
    canonical_key,
    conflict_graph,
    from_json,
    match,
    rate_levels,
    to_json,
)

LABEL_SHIFT = 24  # bits of a path-shape code and of a line-rate code in a vertex label's int64


class Found(NamedTuple):
    """A stored transient that fits a partition: the memo DB's ``value`` and, per stored flow (in the value's
    order), the partition's flow that stands for it, the bytes it moved and the CCA state it ended with (the
    ``STATE_INT`` and ``STATE_FLOAT`` columns of fastforward)."""

    value: dict
    flows: np.ndarray
    moved: np.ndarray
    state_int: np.ndarray
    state_float: np.ndarray

    @property
    def mapping(self) -> dict[int, int]:
        """Stored vertex index -> flow."""
        return dict(enumerate(self.flows.tolist()))


class PatternLookup:
    """Lookups in ``memo`` (a MemoDB) under configuration ``fingerprint``. Per flow: ``paths`` (a FlowPaths:
    its data and ACK ports), ``shapes`` (``FlowPaths.shape_codes``: a path-shape code per flow and each code's
    label) and ``line_bps`` (its NIC's rate)."""

    def __init__(self, memo, fingerprint: str, paths, shapes: tuple[np.ndarray, list[str]], line_bps):
        self.memo = memo
        self.fingerprint = fingerprint
        self.paths = paths
        self.shapes = shapes
        codes, names = np.asarray(shapes[0], dtype=np.int64), list(shapes[1])
        self.hops = np.array(names, dtype=object)[codes]
        self.line_bps = np.asarray(line_bps)
        lines, line_code = np.unique(self.line_bps, return_inverse=True)
        if len(names) >= 1 << LABEL_SHIFT or len(lines) >= 1 << LABEL_SHIFT:
            raise ValueError(f"more than {1 << LABEL_SHIFT} path shapes or line rates")
        # a flow's FCG label but for its rate level: path shape and line rate, each as a code
        self._flow_label = (codes << LABEL_SHIFT) | line_code.ravel()
        self._code_of = ({name: i for i, name in enumerate(names)}, {int(b): i for i, b in enumerate(lines.tolist())})
        self._layouts: dict[bytes, tuple[str, tuple | None]] = {}
        self._parsed: dict = {}
        self._labels = {self._stored_labels(from_json(text)) for text in memo.graphs(fingerprint)}
        self._number = np.full(int(paths.table[0].max(initial=-1)) + 1, -1, dtype=np.int64)

    def _stored_labels(self, graph) -> bytes | None:
        """The multiset of a stored FCG's vertex labels (``fcg.vertex_label``: ``level/shape/line``) coded as those
        of ``find``; None when a shape or line rate is none of this run's flows' (no partition can match it)."""
        shape_of, line_of = self._code_of
        codes = []
        for _, label in graph.nodes(data="label"):
            level, shape, line = label.split("/")
            if shape not in shape_of or int(line) not in line_of:
                return None
            codes.append((int(level) << 2 * LABEL_SHIFT) | (shape_of[shape] << LABEL_SHIFT) | line_of[int(line)])
        return np.sort(np.array(codes, dtype=np.int64)).tobytes()

    def find(self, flows: np.ndarray, rates: np.ndarray, labels=None, label_set=None) -> Found | None:
        """The stored transient for the partition of ``flows`` (ids, any order) sending at ``rates`` (bit/s, one per
        flow), or None. ``labels`` (``labels_of``) and ``label_set`` (their sorted bytes) may come computed
        already."""
        flows = np.asarray(flows, dtype=np.int64)
        if labels is None:
            labels = self.labels_of(flows, rates)
        if label_set is None:
            label_set = np.sort(labels).tobytes()
        if label_set not in self._labels:
            return None
        layout, order = self._layout(flows, labels)
        known = self._layouts.get(layout)
        if known is None:
            graph = self.graph(flows, rates)
            known = self._remember(layout, order, graph, canonical_key(graph))
        stored = known[1]
        if stored is None:
            return None
        value, positions, moved, state_int, state_float = stored
        return Found(value, np.asarray(order, dtype=np.int64)[positions], moved, state_int, state_float)

    def labels_of(self, flows: np.ndarray, rates) -> np.ndarray:
        """The FCG vertex labels of ``flows`` at ``rates`` as int64 codes."""
        levels = rate_levels(np.asarray(rates, dtype=float), self.line_bps[flows])
        return (levels << 2 * LABEL_SHIFT) | self._flow_label[flows]

    def _remember(self, layout: bytes, order: list[int], graph, key: str) -> tuple[str, tuple | None]:
        """What a partition of ``layout`` (its flows in ``order``, its FCG ``graph`` under ``key``) finds stored,
        kept for the next partition of that layout."""
        found = self._stored(key, graph)
        stored = None
        if found is not None:  # kept as arrays, made once per layout rather than at every hit
            value, mapping = found
            position = {f: i for i, f in enumerate(order)}
            entries = value["flows"]
            stored = (
                value,
                np.array([position[mapping[i]] for i in range(len(entries))], dtype=np.int64),
                np.array([entry["bytes"] for entry in entries], dtype=np.int64),
                np.array([entry["int"] for entry in entries], dtype=np.int64).reshape(len(entries), -1),
                np.array([entry["float"] for entry in entries], dtype=np.float64).reshape(len(entries), -1),
            )
        known = (key, stored)
        self._layouts[layout] = known
        return known

    def _layout(self, flows: np.ndarray, labels: np.ndarray) -> tuple[bytes, list[int]]:
        """The partition's layout and its flows in layout order (see the module's docstring)."""
        paths = self.paths.table
        data_length, ack_length = paths[2], paths[4]
        out = np.empty(int(data_length[flows].sum() + ack_length[flows].sum()) + 3 * len(flows), dtype=np.int64)
        order = np.arange(len(flows), dtype=np.int64)
        used = _layout_of(*paths, flows, labels, self._number, order, out)
        return out[:used].tobytes(), flows[order].tolist()

    def store(self, flows: np.ndarray, rates: np.ndarray, value: dict) -> None:
        """Insert an entry for the partition of ``flows`` at ``rates`` (as ``find``; ``value`` lists its flows in
        ascending id order), unless an isomorphic one is stored already: the first of several alike is kept.

        A layout known to find an entry is not stored again, without building its FCG: in the first 100 ms of
        MoE-32x22B on 1024 GPUs, 528 outcomes were stored or found stored, at 1.3 ms each."""
        flows = np.asarray(flows, dtype=np.int64)
        labels = self.labels_of(flows, rates)
        layout = None
        if np.sort(labels).tobytes() in self._labels:
            layout, order = self._layout(flows, labels)
            known = self._layouts.get(layout)
            if known is not None and known[1] is not None:
                return
        graph = self.graph(flows, rates)
        key = canonical_key(graph)
        if (self._stored(key, graph) if layout is None else self._remember(layout, order, graph, key)[1]) is not None:
            return
        self.memo.insert(self.fingerprint, key, to_json(graph), value)
        self._labels.add(self._stored_labels(graph))
        # only layouts under this key can find the new entry: the others keep what they found
        self._layouts = {layout: known for layout, known in self._layouts.items() if known != (key, None)}

    def graph(self, flows: np.ndarray, rates: np.ndarray):
        """The partition's FCG, its vertices in ascending flow id: the isomorphism found first, and so which stored
        flow stands for which, depends on their order, which a set's (the order of its members' hashes and of
        how it was built) would make an accident of the bookkeeping (MoE-32x22B on 1024 GPUs came out otherwise
        within 300 ms of simulated time when the partitions' member order changed)."""
        members = np.asarray(flows, dtype=np.int64).tolist()
        rate_of = dict(zip(members, np.asarray(rates, dtype=float).tolist(), strict=True))
        return conflict_graph(
            sorted(members),
            {f: self.paths[f] for f in members},
            rate_of,
            {f: int(self.line_bps[f]) for f in members},
            {f: self.hops[f] for f in members},
        )

    def _stored(self, key: str, graph) -> tuple[dict, dict] | None:
        for text, value in self.memo.candidates(self.fingerprint, key):
            if text not in self._parsed:
                self._parsed[text] = from_json(text)
            mapping = match(self._parsed[text], graph)
            if mapping is not None:
                return value, mapping
        return None


@kernel
def _compare(table, b1, n1, b2, n2):
    """-1, 0 or 1 as ``table[b1 : b1 + n1]`` compares with ``table[b2 : b2 + n2]`` (as tuples do)."""
    for k in range(min(n1, n2)):
        if table[b1 + k] != table[b2 + k]:
            return -1 if table[b1 + k] < table[b2 + k] else 1
    return -1 if n1 < n2 else (1 if n1 > n2 else 0)


@kernel
def _before(table, data_begin, data_length, ack_begin, ack_length, flows, labels, i, j):
    """Entry i comes before entry j in a layout: by data ports, then ACK ports, rate level and flow id (the level is
    the high part of ``labels``; flows of one path have one shape and line rate)."""
    f, g = flows[i], flows[j]
    c = _compare(table, data_begin[f], data_length[f], data_begin[g], data_length[g])
    if c == 0:
        c = _compare(table, ack_begin[f], ack_length[f], ack_begin[g], ack_length[g])
    if c == 0:
        c = -1 if labels[i] < labels[j] else (1 if labels[i] > labels[j] else 0)
    if c == 0:
        c = -1 if f < g else 1
    return c < 0


@kernel
def _number_ports(table, begin, length, number, count, out, used):
    """Append the ports' count and their numbers in order of first use (new ones get the next)."""
    out[used] = length
    used += 1
    for k in range(begin, begin + length):
        p = table[k]
        if number[p] < 0:
            number[p] = count
            count += 1
        out[used] = number[p]
        used += 1
    return count, used


@kernel
def _layout_of(table, data_begin, data_length, ack_begin, ack_length, flows, labels, number, order, out):
    """Sort ``order`` (positions in ``flows``) by path, then rate level and flow id, and write the layout into
    ``out``: per flow its data and ACK ports (each a count, then port numbers by first use) and its label code
    (rate level, path shape, line rate). Returns how much of ``out`` it used; ``number`` (-1 per port) is left
    as found."""
    n = len(order)
    for a in range(1, n):  # insertion sort: a partition has tens of flows, and is mostly in order already
        x = order[a]
        b = a - 1
        while b >= 0 and _before(table, data_begin, data_length, ack_begin, ack_length, flows, labels, x, order[b]):
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = x
    count, used = 0, 0
    for a in range(n):
        i = order[a]
        f = flows[i]
        count, used = _number_ports(table, data_begin[f], data_length[f], number, count, out, used)
        count, used = _number_ports(table, ack_begin[f], ack_length[f], number, count, out, used)
        out[used] = labels[i]
        used += 1
    for a in range(n):
        f = flows[order[a]]
        for k in range(data_begin[f], data_begin[f] + data_length[f]):
            number[table[k]] = -1
        for k in range(ack_begin[f], ack_begin[f] + ack_length[f]):
            number[table[k]] = -1
    return used
