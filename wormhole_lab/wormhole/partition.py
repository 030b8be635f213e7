"""Port-level partitions: connected components of the bipartite graph of active flows and the ports they use.

A flow uses the egress ports of its data path and of its ACK path (ACKs share the data class at
switches, so they interact through the same queues). Partitions are updated incrementally: a new flow
joins the one partition it touches, founds a new one, or merges several; a finished flow leaves, and
its partition is split locally when that flow was the only link between two groups. Ids are stable
while a partition lives (merges keep the largest one's id), so widgets can follow them.
"""

from collections import deque
from collections.abc import Iterable, Sequence

import networkx as nx
import numpy as np


class PathPorts(Sequence):
    """Per flow, the set of ports of its data and ACK paths, ``path_ports[begin:begin + length]`` for the two
    (begin, length) pairs of its row in ``ranges``. A set is made when first asked for: of a run of short
    flows, most are never placed (30 000 flows: 0.15-0.2 s for all the sets, on this project's machine)."""

    def __init__(self, path_ports: np.ndarray, ranges: np.ndarray):
        self._ports = path_ports
        self._ranges = ranges
        self._sets: dict[int, set[int]] = {}

    def __len__(self) -> int:
        return len(self._ranges)

    def __getitem__(self, f: int) -> set[int]:
        ports = self._sets.get(f)
        if ports is None:
            b, n, ab, an = self._ranges[f].tolist()
            ports = self._sets[f] = {*self._ports[b : b + n].tolist(), *self._ports[ab : ab + an].tolist()}
        return ports

    def flat(self, flows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(flow, port) for every port on the paths of ``flows``, as two arrays (vectorised: no set is made)."""
        flows = np.asarray(flows, dtype=np.int64)
        rows = self._ranges[flows]
        begins, lengths = rows[:, [0, 2]].ravel(), rows[:, [1, 3]].ravel()
        owners = np.repeat(np.repeat(flows, 2), lengths)
        index = np.repeat(begins - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        return owners, self._ports[index]


class Partitions:
    """Active flows grouped into partitions; ids are small integers < number of flows."""

    def __init__(self, flow_ports: Sequence[Iterable[int]]):
        self._flow_ports = flow_ports
        self._port_flows: dict[int, set[int]] = {}
        self.of_flow: dict[int, int] = {}
        self.flows: dict[int, set[int]] = {}
        self._free_ids = list(range(len(flow_ports) - 1, -1, -1))  # pop() gives the smallest id first

    def parts_of_ports(self, ports: np.ndarray) -> np.ndarray:
        """The partition using each of ``ports`` (-1 where none does)."""
        part = np.full(len(ports), -1, dtype=np.int64)
        if not self._port_flows:
            return part
        used = np.fromiter(self._port_flows, dtype=np.int64, count=len(self._port_flows))
        owner = np.fromiter((self.of_flow[next(iter(fs))] for fs in self._port_flows.values()), np.int64, len(used))
        order = np.argsort(used)
        used, owner = used[order], owner[order]
        at = np.minimum(np.searchsorted(used, ports), len(used) - 1)
        hit = used[at] == ports
        part[hit] = owner[at[hit]]
        return part

    def ports(self, part: int) -> set[int]:
        return {int(p) for f in self.flows[part] for p in self._flow_ports[f]}

    def touched_by(self, f: int) -> set[int]:
        """Partitions that share a port with flow ``f``'s paths."""
        return {self.of_flow[g] for p in self._flow_ports[f] for g in self._port_flows.get(int(p), ())}

    def add(self, f: int) -> tuple[int, set[int]]:
        """Insert a started flow; returns (its partition, ids of partitions merged into it)."""
        touched = self.touched_by(f)
        for p in self._flow_ports[f]:
            self._port_flows.setdefault(int(p), set()).add(f)
        if not touched:
            part = self._free_ids.pop()
            self.flows[part] = set()
            merged = set()
        else:
            part = max(touched, key=lambda q: (len(self.flows[q]), -q))
            merged = touched - {part}
            for q in merged:
                for g in self.flows.pop(q):
                    self.of_flow[g] = part
                    self.flows[part].add(g)
                self._free_ids.append(q)
        self.flows[part].add(f)
        self.of_flow[f] = part
        return part, merged

    def remove(self, f: int) -> tuple[int, list[int]]:
        """Drop a finished flow; returns (its former partition, ids of partitions split off from it)."""
        part = self.of_flow.pop(f)
        for p in self._flow_ports[f]:
            users = self._port_flows[int(p)]
            users.discard(f)
            if not users:
                del self._port_flows[int(p)]
        members = self.flows[part]
        members.discard(f)
        if not members:
            del self.flows[part]
            self._free_ids.append(part)
            return part, []
        components = self._components(members)
        if len(components) == 1:
            return part, []
        components.sort(key=len, reverse=True)
        self.flows[part] = components[0]
        new_ids = []
        for component in components[1:]:
            q = self._free_ids.pop()
            self.flows[q] = component
            for g in component:
                self.of_flow[g] = q
            new_ids.append(q)
        return part, new_ids

    def _components(self, members: set[int]) -> list[set[int]]:
        """Connected components of ``members`` through shared ports (a local BFS, not a full recompute)."""
        left, components = set(members), []
        while left:
            start = left.pop()
            component, queue = {start}, deque([start])
            while queue:
                g = queue.popleft()
                for p in self._flow_ports[g]:
                    for h in self._port_flows.get(int(p), ()):
                        if h in left:
                            left.discard(h)
                            component.add(h)
                            queue.append(h)
            components.append(component)
        return components

    def recompute(self) -> list[set[int]]:
        """The partitions from scratch with networkx (the fallback, and the check on the incremental path)."""
        graph = nx.Graph()
        for f in self.of_flow:
            graph.add_node(("f", f))
            graph.add_edges_from((("f", f), ("p", int(p))) for p in self._flow_ports[f])
        return [{n[1] for n in comp if n[0] == "f"} for comp in nx.connected_components(graph)]
