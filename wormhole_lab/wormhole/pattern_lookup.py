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
"""

import numpy as np

from wormhole_lab.wormhole.fcg import (
    canonical_key,
    conflict_graph,
    from_json,
    match,
    rate_levels,
    to_json,
    vertex_label,
)


class PatternLookup:
    """Lookups in ``memo`` (a MemoDB) under configuration ``fingerprint``. Per flow: ``paths`` (a FlowPaths:
    its data and ACK ports), ``hops`` (path shape label) and ``line_bps`` (its NIC's rate)."""

    def __init__(self, memo, fingerprint: str, paths, hops, line_bps):
        self.memo = memo
        self.fingerprint = fingerprint
        self.paths = paths
        self.hops = hops
        self.line_bps = np.asarray(line_bps)
        self._line = self.line_bps.tolist()  # Python ints: a layout is a tuple of plain values
        self._layouts: dict[tuple, tuple[str, tuple | None]] = {}
        self._parsed: dict = {}
        self._labels = {self._label_set(from_json(text)) for text in memo.graphs(fingerprint)}

    @staticmethod
    def _label_set(graph) -> tuple[str, ...]:
        return tuple(sorted(label for _, label in graph.nodes(data="label")))

    def find(self, members, rates: dict) -> tuple[dict, dict] | None:
        """For the partition of flows ``members`` sending at ``rates`` (bit/s per flow): (stored value, mapping of
        stored vertex index -> flow), or None."""
        flows = list(members)
        levels = rate_levels(np.array([rates[f] for f in flows], dtype=float), self.line_bps[flows]).tolist()
        labels = (vertex_label(level, self.hops[f], self._line[f]) for f, level in zip(flows, levels, strict=True))
        if tuple(sorted(labels)) not in self._labels:
            return None
        entries = sorted((self.paths.route(f), level, f) for f, level in zip(flows, levels, strict=True))
        order = [f for _, _, f in entries]
        number: dict[int, int] = {}
        layout = tuple(
            (
                tuple(number.setdefault(p, len(number)) for p in data),
                tuple(number.setdefault(p, len(number)) for p in ack),
                level,
                self.hops[f],
                self._line[f],
            )
            for (data, ack), level, f in entries
        )
        known = self._layouts.get(layout)
        if known is None:
            graph = self.graph(members, rates)
            key = canonical_key(graph)
            found = self._stored(key, graph)
            position = {f: i for i, f in enumerate(order)}
            known = (key, None if found is None else (found[0], {i: position[f] for i, f in found[1].items()}))
            self._layouts[layout] = known
        stored = known[1]
        if stored is None:
            return None
        value, positions = stored
        return value, {i: order[p] for i, p in positions.items()}

    def store(self, members, rates: dict, value: dict) -> None:
        """Insert an entry for the partition (``value`` lists its flows in ascending id order), unless an
        isomorphic one is stored already: the first of several alike is kept."""
        graph = self.graph(members, rates)
        key = canonical_key(graph)
        if self._stored(key, graph) is None:
            self.memo.insert(self.fingerprint, key, to_json(graph), value)
            self._labels.add(self._label_set(graph))
            # only layouts under this key can find the new entry: the others keep what they found
            self._layouts = {layout: known for layout, known in self._layouts.items() if known != (key, None)}

    def graph(self, members, rates: dict):
        """The partition's FCG, its vertices in ascending flow id: the isomorphism found first, and so which stored
        flow stands for which, depends on their order, which a set's (the order of its members' hashes and of
        how it was built) would make an accident of the bookkeeping (MoE-32x22B on 1024 GPUs came out otherwise
        within 300 ms of simulated time when the partitions' member order changed)."""
        return conflict_graph(
            sorted(members),
            {f: self.paths[f] for f in members},
            rates,
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
