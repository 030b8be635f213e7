"""Checks of a FlowTable against the topology it will run on (what a flow file alone cannot tell)."""

import numpy as np

from wormhole_lab.arrays import concat_ranges
from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import FlowTable

N_PRIORITY_GROUPS = 8  # queues per port in the reference; pg indexes them


def check_flows(flows: FlowTable, topo: Topology, where: str = "flows") -> None:
    """Raise InputError for the first flow that cannot run on ``topo``.

    ``where`` names the source (a file name or ``Scenario.flows``); the error's ``where`` is
    ``<where>[<flow index>]``. Vectorized, so millions of flows check in milliseconds.
    """
    n = len(flows)
    names = ("src", "dst", "size", "start_ps", "pg", "dport", "sport")
    columns = {name: np.asarray(getattr(flows, name)) for name in names}
    for name, col in columns.items():
        if col.shape != (n,):
            raise InputError(
                f"{where}.{name}",
                f"has shape {col.shape}, expected ({n},) like src",
                "build the table with make_flows so every column has one entry per flow",
            )
    if n == 0:
        return
    src, dst = columns["src"], columns["dst"]
    n_nodes = topo.n_nodes
    if n_nodes == 0:
        raise InputError(f"{where}[0]", "the topology has no nodes", "give a topology with hosts")
    src_in = (src >= 0) & (src < n_nodes)
    dst_in = (dst >= 0) & (dst < n_nodes)
    # Clip so the switch lookup is safe on out-of-range ids; those rows are already flagged above.
    src_switch = src_in & topo.is_switch[np.clip(src, 0, n_nodes - 1)]
    dst_switch = dst_in & topo.is_switch[np.clip(dst, 0, n_nodes - 1)]
    pg, dport = columns["pg"], columns["dport"]
    host_hint = f"hosts are {_some(topo.hosts)}"
    checks = [
        (~src_in, lambda i: f"src node {src[i]} is out of range (topology has nodes 0..{n_nodes - 1})", host_hint),
        (~dst_in, lambda i: f"dst node {dst[i]} is out of range (topology has nodes 0..{n_nodes - 1})", host_hint),
        (src_switch, lambda i: f"src node {src[i]} is a switch; flows run between hosts", host_hint),
        (dst_switch, lambda i: f"dst node {dst[i]} is a switch; flows run between hosts", host_hint),
        (src == dst, lambda i: f"flow from node {src[i]} to itself", "give different src and dst hosts"),
        (columns["size"] <= 0, lambda i: f"size {columns['size'][i]} B must be positive", "give at least 1 byte"),
        (columns["start_ps"] < 0, lambda i: f"start {columns['start_ps'][i]} ps is negative", "start at 0 or later"),
        (
            (pg < 0) | (pg >= N_PRIORITY_GROUPS),
            lambda i: f"pg {pg[i]} is not a priority group",
            f"use 0..{N_PRIORITY_GROUPS - 1} (3 in the reference's files)",
        ),
        ((dport < 0) | (dport > 65535), lambda i: f"dport {dport[i]} does not fit 16 bits", "use 0..65535"),
    ]
    first = None
    for mask, problem, fix in checks:
        if mask.any():
            i = int(np.argmax(mask))
            if first is None or i < first[0]:
                first = (i, problem, fix)
    if first is not None:
        i, problem, fix = first
        raise InputError(f"{where}[{i}]", f"flow {i} ({src[i]} -> {dst[i]}): {problem(i)}", fix)
    check_dependencies(flows, where)


def check_dependencies(flows: FlowTable, where: str = "flows") -> None:
    """Dependency ids in range, no flow waiting for itself, no cycle, gaps not negative."""
    n = len(flows)
    offset, ids = np.asarray(flows.dep_offset), np.asarray(flows.dep_ids)
    if offset.shape != (n + 1,) or offset[0] != 0 or offset[-1] != len(ids) or np.any(np.diff(offset) < 0):
        raise InputError(f"{where}.dep_offset", "is not a valid index into dep_ids", "build the table with FlowBuilder")
    if np.asarray(flows.gap_ps).shape != (n,) or np.any(flows.gap_ps < 0):
        i = int(np.argmax(flows.gap_ps < 0))
        raise InputError(f"{where}[{i}].gap_ps", f"compute gap {int(flows.gap_ps[i])} ps is negative", "use 0 or more")
    if flows.dep_gap_ps is not None:
        _check_edge_gaps(np.asarray(flows.dep_gap_ps), offset, ids, where)
    if not len(ids):
        return
    waits = np.flatnonzero(np.diff(offset))  # flows with dependencies; each segment's extremes, without a row per edge
    first = offset[waits]
    if np.all(np.minimum.reduceat(ids, first) >= 0) and np.all(np.maximum.reduceat(ids, first) < waits):
        return  # every flow waits only for existing earlier ones (all that FlowBuilder makes): no cycle
    owner = np.repeat(np.arange(n), np.diff(offset))
    bad = (ids < 0) | (ids >= n) | (ids == owner)
    if bad.any():
        j = int(np.argmax(bad))
        reason = "itself" if ids[j] == owner[j] else f"flow {int(ids[j])}, which does not exist"
        raise InputError(
            f"{where}[{int(owner[j])}].deps",
            f"flow {int(owner[j])} waits for {reason}",
            f"list ids of other flows, 0..{n - 1}",
        )
    blocked = _unorderable(flows.dependant_offset(), owner[np.argsort(ids, kind="stable")], np.diff(offset))
    if blocked.size:
        import networkx as nx  # only to name a cycle: a million-flow DAG as a networkx graph needs ~5 GB

        inside = np.isin(owner, blocked) & np.isin(ids, blocked)
        graph = nx.DiGraph(zip(ids[inside].tolist(), owner[inside].tolist(), strict=True))
        cycle = [u for u, _ in nx.find_cycle(graph)]
        raise InputError(
            f"{where}[{cycle[0]}].deps",
            f"dependency cycle: flows {' -> '.join(map(str, cycle))} -> {cycle[0]} would never start",
            "remove one dependency of the cycle",
        )


def _check_edge_gaps(gaps: np.ndarray, offset: np.ndarray, ids: np.ndarray, where: str) -> None:
    """``FlowTable.dep_gap_ps``: one whole, non-negative number of ps per dependency edge."""
    fix = "give one delay (int ps) per entry of dep_ids, e.g. FlowBuilder.add(..., deps=[a, b], dep_gaps=[da, db])"
    if gaps.shape != ids.shape:
        raise InputError(
            f"{where}.dep_gap_ps", f"has shape {gaps.shape} for {len(ids)} dependency edges (dep_ids)", fix
        )  # fmt: skip
    if gaps.dtype.kind not in "iu":
        raise InputError(f"{where}.dep_gap_ps", f"holds {gaps.dtype} values, not integers (whole ps)", fix)
    if len(gaps) and gaps.min() < 0:
        e = int(np.argmax(gaps < 0))
        f = int(np.searchsorted(offset, e, side="right")) - 1  # the flow whose edge it is
        raise InputError(
            f"{where}[{f}].dep_gap_ps",
            f"delay {int(gaps[e])} ps after flow {int(ids[e])} (edge {e}) is negative",
            "use 0 or more",
        )


def _unorderable(first: np.ndarray, children: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Nodes left after peeling, generation by generation, every node whose parents are all peeled (Kahn's
    algorithm on arrays: the work is one pass over the edges); node r's children are ``children[first[r] :
    first[r + 1]]`` and it has ``parents[r]`` parents. Empty when the edges form a DAG; otherwise the nodes on or
    after a cycle."""
    waiting = parents.copy()
    ready = np.flatnonzero(waiting == 0)
    while ready.size:
        counts = first[ready + 1] - first[ready]
        if not counts.any():
            break
        hit, times = np.unique(children[concat_ranges(first[ready], counts)], return_counts=True)
        waiting[hit] -= times
        ready = hit[waiting[hit] == 0]
    return np.flatnonzero(waiting > 0)


def _some(ids: np.ndarray, k: int = 8) -> str:
    """A short listing of node ids for messages."""
    shown = ", ".join(str(int(x)) for x in ids[:k])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > k else "") if len(ids) else "none"
