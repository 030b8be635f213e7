"""The cluster as plain arrays: nodes, links, and the two ports every link has."""

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Topology:
    """Nodes ``0..n_nodes-1``; ``is_switch[i]`` marks switches, every other node is a host (a NIC).

    Link ``l`` joins ``link_a[l]`` and ``link_b[l]`` with its own rate (bit/s) and one-way
    propagation delay (ps). Link order fixes interface numbers, as in the reference.
    Port ``2*l`` sits on ``link_a[l]`` and sends towards ``link_b[l]``; port ``2*l+1`` the reverse.
    """

    is_switch: np.ndarray  # bool[n_nodes]
    link_a: np.ndarray  # int64[n_links]
    link_b: np.ndarray  # int64[n_links]
    link_rate_bps: np.ndarray  # int64[n_links]
    link_delay_ps: np.ndarray  # int64[n_links]
    link_error_rate: np.ndarray  # float64[n_links]
    name: str = "topology"
    meta: dict = field(default_factory=dict)  # builder parameters, e.g. {"k": 4} or gpus_per_server

    @property
    def n_nodes(self) -> int:
        return int(self.is_switch.shape[0])

    @property
    def n_links(self) -> int:
        return int(self.link_a.shape[0])

    @property
    def n_ports(self) -> int:
        return 2 * self.n_links

    @property
    def hosts(self) -> np.ndarray:
        return np.flatnonzero(~self.is_switch)

    @property
    def switches(self) -> np.ndarray:
        return np.flatnonzero(self.is_switch)

    def port_node(self) -> np.ndarray:
        """Node that owns each port."""
        return np.stack([self.link_a, self.link_b], axis=1).reshape(-1)

    def port_peer_node(self) -> np.ndarray:
        """Node at the far end of each port's link."""
        return np.stack([self.link_b, self.link_a], axis=1).reshape(-1)

    def port_ifindex(self) -> np.ndarray:
        """ns-3 interface index of each port on its node: 1 + the order of its link among the node's links."""
        nodes = self.port_node()
        ifindex = np.zeros(self.n_ports, dtype=np.int64)
        seen = np.zeros(self.n_nodes, dtype=np.int64)
        for p in range(self.n_ports):
            seen[nodes[p]] += 1
            ifindex[p] = seen[nodes[p]]
        return ifindex
