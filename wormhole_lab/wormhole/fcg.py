"""The Flow Conflict Graph of a partition and its canonical key.

Vertices are flows, labelled by their rate quantised to 5 % of line rate plus the shape of their
paths (hops and bottleneck speed, which the paper's FCG ignores but which change the transient);
edges join flows that share ports, labelled by how many they share. The key is a Weisfeiler-Lehman
hash of that labelled graph; a hit is confirmed by a labelled isomorphism, which also maps the stored
flows onto the current ones.
"""

import json

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from wormhole_lab.engine.jit import kernel

RATE_LEVELS = 20  # rates are compared in steps of 1/20 of the line rate


@kernel
def rate_level(rate_bps, line_bps):
    """A rate (bit/s) in steps of 1/RATE_LEVELS of the line rate (halves to even, as Python's ``round``)."""
    return np.int64(np.rint(np.float64(rate_bps) / line_bps * RATE_LEVELS))


@kernel
def _rate_levels(rate_bps, line_bps, out):
    for i in range(len(rate_bps)):
        out[i] = rate_level(rate_bps[i], line_bps[i])


def rate_levels(rate_bps: np.ndarray, line_bps: np.ndarray) -> np.ndarray:
    """``rate_level`` of each rate, at its line rate."""
    out = np.empty(len(rate_bps), dtype=np.int64)
    _rate_levels(np.asarray(rate_bps, dtype=np.float64), np.asarray(line_bps, dtype=np.int64), out)
    return out


def vertex_label(level: int, hops: str, line_bps: int) -> str:
    """A flow's FCG vertex label: its rate level, path shape and line rate."""
    return f"{level}/{hops}/{line_bps}"


def conflict_graph(members, flow_ports: dict, rate_bps: dict, line_bps: dict, hops: dict) -> nx.Graph:
    graph = nx.Graph()
    members = list(members)  # nodes in the caller's order: the matcher's first isomorphism depends on it
    levels = rate_levels(np.array([rate_bps[f] for f in members], float), np.array([line_bps[f] for f in members]))
    for f, level in zip(members, levels.tolist(), strict=True):
        graph.add_node(f, label=vertex_label(level, hops[f], line_bps[f]))
    members = sorted(members)
    for i, f in enumerate(members):
        for g in members[i + 1 :]:
            shared = len(flow_ports[f] & flow_ports[g])
            if shared:
                graph.add_edge(f, g, label=str(shared))
    return graph


def canonical_key(graph: nx.Graph) -> str:
    return nx.weisfeiler_lehman_graph_hash(graph, node_attr="label", edge_attr="label", iterations=3)


def to_json(graph: nx.Graph) -> str:
    """Node order is the stored order: values are kept in that order."""
    nodes = sorted(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    return json.dumps(
        {
            "labels": [graph.nodes[n]["label"] for n in nodes],
            "edges": sorted(
                [min(index[u], index[v]), max(index[u], index[v]), d["label"]] for u, v, d in graph.edges(data=True)
            ),
        }
    )


def from_json(text: str) -> nx.Graph:
    data = json.loads(text)
    graph = nx.Graph()
    for i, label in enumerate(data["labels"]):
        graph.add_node(i, label=label)
    for u, v, label in data["edges"]:
        graph.add_edge(u, v, label=label)
    return graph


def match(stored: nx.Graph, current: nx.Graph) -> dict | None:
    """stored vertex index -> current flow id, or None when the graphs are not label-isomorphic."""
    if stored.number_of_nodes() != current.number_of_nodes() or stored.number_of_edges() != current.number_of_edges():
        return None
    matcher = GraphMatcher(
        stored,
        current,
        node_match=lambda a, b: a["label"] == b["label"],
        edge_match=lambda a, b: a["label"] == b["label"],
    )
    return next(matcher.isomorphisms_iter(), None)
