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
    rate_level,
    to_json,
)
from wormhole_lab.wormhole.grown import Grown

LABEL_SHIFT = 24  # bits of a path-shape code and of a line-rate code in a vertex label's int64


class Found(NamedTuple):
    """A stored transient that fits a partition: the memo DB's ``value`` and, per stored flow (in the value's
    order), the partition's flow that stands for it, the bytes it moved and the CCA state it ended with
    (fastforward.cca_state's)."""

    value: dict
    flows: np.ndarray
    moved: np.ndarray
    state_int: np.ndarray
    state_float: np.ndarray

    @property
    def mapping(self) -> dict[int, int]:
        """Stored vertex index -> flow."""
        return dict(enumerate(self.flows.tolist()))


class Stored(NamedTuple):
    """The entries this run found or stored, as arrays: entry e's stored flows are rows ``offsets[e]`` to
    ``offsets[e + 1]`` of ``positions`` (where the partition's flow that stands for each is in its layout's order),
    ``moved``, ``state_int`` and ``state_float`` (as ``Found``'s); per entry, its ``t_conv`` and whether it
    ``settled``."""

    offsets: np.ndarray
    positions: np.ndarray
    moved: np.ndarray
    state_int: np.ndarray
    state_float: np.ndarray
    t_conv: np.ndarray
    settled: np.ndarray


class PatternLookup:
    """Lookups in ``memo`` (a MemoDB) under configuration ``fingerprint``. Per flow: ``paths`` (a FlowPaths:
    its data and ACK ports), ``shapes`` (``FlowPaths.shape_codes``: a path-shape code per flow and each code's
    label) and ``line_bps`` (its NIC's rate). ``state_widths``: how many int and float values of CCA state an
    entry holds per flow (an entry with others is an error: the compiled restore does not check its bounds)."""

    def __init__(self, memo, fingerprint: str, paths, shapes: tuple[np.ndarray, list[str]], line_bps,
                 state_widths: tuple[int, int]):  # fmt: skip
        self.state_widths = state_widths
        self.memo = memo
        self.fingerprint = fingerprint
        self.paths = paths
        self.shapes = shapes
        codes, names = np.asarray(shapes[0], dtype=np.int64), list(shapes[1])
        self.hops = np.array(names, dtype=object)[codes]
        self.line_bps = np.asarray(line_bps, dtype=np.int64)
        lines, line_code = np.unique(self.line_bps, return_inverse=True)
        if len(names) >= 1 << LABEL_SHIFT or len(lines) >= 1 << LABEL_SHIFT:
            raise ValueError(f"more than {1 << LABEL_SHIFT} path shapes or line rates")
        # a flow's FCG label but for its rate level: path shape and line rate, each as a code
        self._flow_label = (codes << LABEL_SHIFT) | line_code.ravel()
        self._code_of = ({name: i for i, name in enumerate(names)}, {int(b): i for i, b in enumerate(lines.tolist())})
        self._layouts_seen: dict[bytes, tuple[str, int]] = {}  # layout -> its FCG key and entry (-1: none)
        self._values: list[dict] = []  # per entry found or stored, the memo DB's value; the rest as arrays:
        self._store = (
            Grown(np.int64),  # offsets (with a leading 0)
            Grown(np.int64),  # positions
            Grown(np.int64),  # moved
            Grown(np.int64, state_widths[0]),
            Grown(np.float64, state_widths[1]),
            Grown(np.int64),  # t_conv
            Grown(np.bool_),  # settled
        )
        self._store[0].extend(np.zeros(1, dtype=np.int64))
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

    def find(self, flows: np.ndarray, rates: np.ndarray) -> Found | None:
        """The stored transient for the partition of ``flows`` (ids, any order) sending at ``rates`` (bit/s, one per
        flow), or None."""
        flows = np.asarray(flows, dtype=np.int64)
        labels = self.labels_of(flows, rates)
        offsets = np.array([0, len(flows)], dtype=np.int64)
        which = np.zeros(1, dtype=np.int64)
        entries, ordered = self.find_all(flows, offsets, np.asarray(rates), labels, np.sort(labels), which)
        return self.found(int(entries[0]), ordered)

    def find_all(
        self, flows, offsets, rates, labels, sorted_labels, which: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``find`` for the partitions ``which`` of several, the i-th of ``flows[offsets[i] : offsets[i + 1]]`` at
        those ``rates``, with their ``labels`` (``labels_of``) and ``sorted_labels`` (each partition's in order):
        per partition, the entry it finds (-1 for none, and for those not in ``which``), and its flows in the order
        of its layout (``ordered``, cut at ``offsets`` as ``flows``), which entries' ``positions`` index. Their
        layouts are made in one compiled call. Once the memo DB turns unusable the rest find nothing
        (``WormholeController._look_up`` looks no further either)."""
        sets, bounds = sorted_labels.tobytes(), (offsets * 8).tolist()
        entries = np.full(len(offsets) - 1, -1, dtype=np.int64)
        known = [i for i in which.tolist() if sets[bounds[i] : bounds[i + 1]] in self._labels]
        if not known:
            return entries, flows
        layouts, ordered = self._layouts(flows, offsets, labels, np.array(known, dtype=np.int64))
        for i, layout in zip(known, layouts, strict=True):
            if not self.memo.usable:
                break
            seen = self._layouts_seen.get(layout)
            if seen is None:
                a, b = offsets[i], offsets[i + 1]
                rate_of = dict(zip(flows[a:b].tolist(), rates[a:b].tolist(), strict=True))
                order = ordered[a:b].tolist()
                graph = self.graph(ordered[a:b], np.array([rate_of[f] for f in order]))
                seen = self._remember(layout, order, graph, canonical_key(graph))
            entries[i] = seen[1]
        return entries, ordered

    def found(self, entry: int, ordered: np.ndarray) -> Found | None:
        """Entry ``entry`` (-1: none) for a partition whose flows, in the order of its layout, are ``ordered``."""
        if entry < 0:
            return None
        stored = self.stored
        rows = slice(stored.offsets[entry], stored.offsets[entry + 1])
        return Found(self._values[entry], ordered[stored.positions[rows]], stored.moved[rows],
                     stored.state_int[rows], stored.state_float[rows])  # fmt: skip

    @property
    def stored(self) -> Stored:
        """Every entry found or stored so far, as arrays (views: valid until the next entry is added)."""
        return Stored(*(column.values for column in self._store))

    def labels_of(self, flows: np.ndarray, rates) -> np.ndarray:
        """The FCG vertex labels of ``flows`` at ``rates`` as int64 codes."""
        labels = np.empty(len(flows), dtype=np.int64)
        _labels_of(np.asarray(rates, dtype=np.float64), self.line_bps, self._flow_label, flows, labels)
        return labels

    def _remember(self, layout: bytes, order: list[int], graph, key: str) -> tuple[str, int]:
        """What a partition of ``layout`` (its flows in ``order``, its FCG ``graph`` under ``key``) finds stored:
        its key and entry (-1: none), kept for the next partition of that layout."""
        found = self._stored_entry(key, graph)
        entry = -1
        if found is not None:  # kept as arrays, made once per layout rather than at every hit
            value, mapping = found
            entries = value["flows"]
            if len(entries) != len(order):  # checked here: the compiled hit trusts it
                raise ValueError(
                    f"memo DB {self.memo.path}: an entry holds {len(entries)} flows for an FCG of {len(order)}; "
                    "delete the file or give another --memo"
                )
            position = {f: i for i, f in enumerate(order)}
            offsets, positions, moved, state_int, state_float, t_conv, settled = self._store
            ints, floats = self._cca_state(entries)
            positions.extend(np.array([position[mapping[i]] for i in range(len(entries))], dtype=np.int64))
            moved.extend(np.array([entry["bytes"] for entry in entries], dtype=np.int64))
            state_int.extend(ints)
            state_float.extend(floats)
            offsets.extend(np.array([positions.n]))
            t_conv.extend(np.array([value["t_conv"]], dtype=np.int64))
            settled.extend(np.array([value.get("settled", True)], dtype=np.bool_))
            self._values.append(value)
            entry = len(self._values) - 1
        known = (key, entry)
        self._layouts_seen[layout] = known
        return known

    def _cca_state(self, entries: list[dict]) -> tuple[np.ndarray, np.ndarray]:
        """An entry's CCA state per flow, as int and float arrays of ``state_widths`` columns."""
        widths = self.state_widths
        ints, floats = ([entry[kind] for entry in entries] for kind in ("int", "float"))
        if any(len(row) != widths[0] for row in ints) or any(len(row) != widths[1] for row in floats):
            raise ValueError(
                f"memo DB {self.memo.path}: an entry holds CCA state of shape other than {widths[0]} int and "
                f"{widths[1]} float values for each of its {len(entries)} flows; delete the file or give another --memo"
            )
        n = len(entries)
        ints, floats = np.array(ints, dtype=np.int64), np.array(floats, dtype=np.float64)
        return ints.reshape(n, widths[0]), floats.reshape(n, widths[1])

    def _layouts(self, flows, offsets, labels, which: np.ndarray) -> tuple[list[bytes], np.ndarray]:
        """The layouts of partitions ``which`` (as ``find_all``'s), and ``flows`` with those partitions' flows in
        layout order (see the module's docstring)."""
        paths = self.paths.table
        room = paths[2][flows] + paths[4][flows] + 3
        out = np.empty(int(room.sum()), dtype=np.int64)
        order, ends, ordered = np.empty(len(flows), dtype=np.int64), np.empty(len(which), dtype=np.int64), flows.copy()
        _layouts_of(*paths, flows, labels, offsets, which, self._number, order, out, ends, ordered)
        begins = [0, *ends[:-1].tolist()]
        return [out[a:b].tobytes() for a, b in zip(begins, ends.tolist(), strict=True)], ordered

    def store(self, flows: np.ndarray, rates: np.ndarray, value: dict) -> None:
        """Insert an entry for the partition of ``flows`` at ``rates`` (as ``find``; ``value`` lists its flows in
        ascending id order), unless an isomorphic one is stored already: the first of several alike is kept.

        A layout known to find an entry is not stored again, without building its FCG: in the first 100 ms of
        MoE-32x22B on 1024 GPUs, 528 outcomes were stored or found stored, at 1.3 ms each."""
        flows = np.asarray(flows, dtype=np.int64)
        labels = self.labels_of(flows, rates)
        layout = None
        if np.sort(labels).tobytes() in self._labels:
            whole = np.array([0, len(flows)], dtype=np.int64)
            (layout,), ordered = self._layouts(flows, whole, labels, np.zeros(1, dtype=np.int64))
            order = ordered.tolist()
            known = self._layouts_seen.get(layout)
            if known is not None and known[1] >= 0:
                return
        graph = self.graph(flows, rates)
        key = canonical_key(graph)
        if layout is None:
            if self._stored_entry(key, graph) is not None:
                return
        elif self._remember(layout, order, graph, key)[1] >= 0:
            return
        self.memo.insert(self.fingerprint, key, to_json(graph), value)
        self._labels.add(self._stored_labels(graph))
        # only layouts under this key can find the new entry: the others keep what they found
        self._layouts_seen = {layout: known for layout, known in self._layouts_seen.items() if known != (key, -1)}

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

    def _stored_entry(self, key: str, graph) -> tuple[dict, dict] | None:
        for text, value in self.memo.candidates(self.fingerprint, key):
            if text not in self._parsed:
                self._parsed[text] = from_json(text)
            mapping = match(self._parsed[text], graph)
            if mapping is not None:
                return value, mapping
        return None


@kernel
def _labels_of(rates, line_bps, flow_label, flows, out):
    """``PatternLookup.labels_of`` into ``out``."""
    for i in range(len(flows)):
        out[i] = (rate_level(rates[i], line_bps[flows[i]]) << 2 * LABEL_SHIFT) | flow_label[flows[i]]


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


@kernel
def _layouts_of(table, data_begin, data_length, ack_begin, ack_length, flows, labels, offsets, which, number, order,
                out, ends, ordered):  # fmt: skip
    """``_layout_of`` for partitions ``which``, the i-th of ``flows[offsets[i] : offsets[i + 1]]``: their layouts one
    after another in ``out``, the k-th ending at ``ends[k]``, and their flows in layout order in ``ordered`` (``order``:
    scratch of a flow each)."""
    used = 0
    for k in range(len(which)):
        a, b = offsets[which[k]], offsets[which[k] + 1]
        for j in range(b - a):
            order[a + j] = j
        used += _layout_of(table, data_begin, data_length, ack_begin, ack_length, flows[a:b], labels[a:b], number,
                           order[a:b], out[used:])  # fmt: skip
        ends[k] = used
        for j in range(b - a):
            ordered[a + j] = flows[a + order[a + j]]
