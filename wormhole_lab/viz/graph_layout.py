"""Where the partition graph puts things: one cell per partition in a near-square grid, and inside a cell its flows
and ports (force-directed when small, two circles when big). NumPy and networkx only; used by the static graph
(``components.partition_graph``) and the live one (``live_views.PartitionGraphView``)."""

import networkx as nx
import numpy as np

__all__ = ["DETAIL_NODES", "SPRING_NODES", "cell_layout", "grid_centres"]

DETAIL_NODES = 400  # above this many flows + ports the graph draws one circle per partition
SPRING_NODES = 60  # partitions up to this many flows + ports get a force-directed layout, bigger ones two circles


def grid_centres(n: int) -> np.ndarray:
    """Centres of ``n`` cells one unit apart, row by row, in a near-square grid (rows go down)."""
    cols = max(1, int(np.ceil(np.sqrt(n))))
    i = np.arange(n)
    return np.column_stack([i % cols, -(i // cols)]).astype(float)


def cell_layout(cache: dict, flows: tuple, ports_of) -> dict:
    """Positions, within a cell of radius 0.4, of one partition's flows and ports, keyed ``("flow", id)`` and
    ``("port", id)``; kept in ``cache`` per set of flows. Small partitions get a force-directed layout, bigger ones
    flows on an inner and ports on an outer circle: both are numpy only (networkx's spring layout needs scipy from
    500 nodes on) and fast."""
    if flows not in cache:
        g = nx.Graph()
        g.add_nodes_from(("flow", f) for f in flows)
        g.add_edges_from((("flow", f), ("port", p)) for f in flows for p in ports_of(f))
        if len(g) <= SPRING_NODES:
            cache[flows] = nx.spring_layout(g, seed=1, iterations=50, method="force", scale=0.4)
        else:
            shells = [[n for n in g if n[0] == "flow"], [n for n in g if n[0] == "port"]]
            cache[flows] = nx.shell_layout(g, shells, scale=0.4)
    return cache[flows]
