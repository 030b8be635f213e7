"""Port-level partitions: connected components of the bipartite graph of active flows and the ports they use.

A flow uses the egress ports of its data path and of its ACK path (ACKs share the data class at
switches, so they interact through the same queues). Partitions are updated incrementally: a new flow
joins the one partition it touches, founds a new one, or merges several; a finished flow leaves, and
its partition is split locally when that flow was the only link between two groups. Ids are stable
while a partition lives (merges keep the largest one's id), so widgets can follow them.
"""

from collections import deque
from collections.abc import Iterable, Iterator, Sequence

import networkx as nx


class Partitions:
    """Active flows grouped into partitions; ids are small integers < number of flows."""

    def __init__(self, flow_ports: Sequence[Iterable[int]]):
        self._flow_ports = flow_ports
        self._port_flows: dict[int, set[int]] = {}
        self.of_flow: dict[int, int] = {}
        self.flows: dict[int, set[int]] = {}
        self._free_ids = list(range(len(flow_ports) - 1, -1, -1))  # pop() gives the smallest id first
        # kept up to date at each change: made from the flows at every change, they took 9 % of an MoE run
        self._ports: dict[int, set[int]] = {}

    def ports(self, part: int) -> set[int]:
        """The ports of partition ``part``'s flows (do not modify)."""
        return self._ports[part]

    def _ports_of(self, flows: Iterable[int]) -> set[int]:
        return {int(p) for f in flows for p in self._flow_ports[f]}

    def used_ports(self) -> list[int]:
        """The ports of the active flows."""
        return list(self._port_flows)

    def touched_by(self, f: int) -> set[int]:
        """Partitions that share a port with flow ``f``'s paths (the flows on a port are all in one: one stands for
        them)."""
        touched = set()
        for p in self._flow_ports[f]:
            users = self._port_flows.get(int(p))
            if users:
                touched.add(self.of_flow[next(iter(users))])
        return touched

    def add(self, f: int) -> tuple[int, set[int]]:
        """Insert a started flow; returns (its partition, ids of partitions merged into it)."""
        touched = self.touched_by(f)
        own = self._ports_of([f])
        for p in own:
            self._port_flows.setdefault(p, set()).add(f)
        if not touched:
            part = self._free_ids.pop()
            self.flows[part] = set()
            self._ports[part] = set()
            merged = set()
        else:
            part = max(touched, key=lambda q: (len(self.flows[q]), -q))
            merged = touched - {part}
            for q in merged:
                for g in self.flows.pop(q):
                    self.of_flow[g] = part
                    self.flows[part].add(g)
                self._ports[part] |= self._ports.pop(q)
                self._free_ids.append(q)
        self._ports[part] |= own
        self.flows[part].add(f)
        self.of_flow[f] = part
        return part, merged

    def remove(self, f: int) -> tuple[int, list[int]]:
        """Drop a finished flow; returns (its former partition, ids of partitions split off from it)."""
        part = self.of_flow.pop(f)
        linked = set()  # f's ports that other flows still use: the flows on each meet there
        for p in self._flow_ports[f]:
            users = self._port_flows[int(p)]
            users.discard(f)
            if users:
                linked.add(int(p))
            else:
                del self._port_flows[int(p)]
                self._ports[part].discard(int(p))
        members = self.flows[part]
        members.discard(f)
        if not members:
            del self.flows[part], self._ports[part]
            self._free_ids.append(part)
            return part, []
        if self._still_joined(linked):
            return part, []
        # the flows of f's ports no longer meet: the partition splits
        components = sorted(self._components(members), key=len, reverse=True)
        self.flows[part] = components[0]
        self._ports[part] = self._ports_of(components[0])
        new_ids = []
        for component in components[1:]:
            q = self._free_ids.pop()
            self.flows[q] = component
            self._ports[q] = self._ports_of(component)
            for g in component:
                self.of_flow[g] = q
            new_ids.append(q)
        return part, new_ids

    def _reach(self, start: int) -> Iterator[int]:
        """The active flows connected to ``start`` through shared ports, in breadth-first order (a local search)."""
        seen, queue, expanded = {start}, deque([start]), set()
        while queue:
            g = queue.popleft()
            yield g
            for p in self._flow_ports[g]:
                p = int(p)
                if p in expanded:  # its users are all seen: a port shared by k flows is read once, not k times
                    continue
                expanded.add(p)
                for h in self._port_flows.get(p, ()):
                    if h not in seen:
                        seen.add(h)
                        queue.append(h)

    def _still_joined(self, ports: set[int]) -> bool:
        """Whether the flows on ``ports`` (a removed flow's, each still used) are still connected to each other: then
        nothing split off (a path through the removed flow can go round it). The search stops once the flows it met
        use every one of them, a fraction of the partition for a dense all-to-all; waiting instead to meet one chosen
        flow of each port took ~8 % of an MoE run."""
        left = set(ports)
        for g in self._reach(next(iter(self._port_flows[left.pop()]))):
            left.difference_update(self._flow_ports[g])
            if not left:
                return True
        return False

    def _components(self, members: set[int]) -> list[set[int]]:
        """Connected components of ``members`` through shared ports."""
        left, components = set(members), []
        while left:
            component = set(self._reach(left.pop()))
            left -= component
            components.append(component)
        return components

    def recompute(self) -> list[set[int]]:
        """The partitions from scratch with networkx (the fallback, and the check on the incremental path)."""
        graph = nx.Graph()
        for f in self.of_flow:
            graph.add_node(("f", f))
            graph.add_edges_from((("f", f), ("p", int(p))) for p in self._flow_ports[f])
        return [{n[1] for n in comp if n[0] == "f"} for comp in nx.connected_components(graph)]
