"""Structural checks of a Topology: everything the routing and the engine assume without re-checking."""

from collections.abc import Sequence

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology

__all__ = ["MAX_LINK_DELAY_PS", "MAX_LINK_RATE_BPS", "MAX_NODES", "check_topology"]

MAX_NODES = 10_000_000  # nodes of one topology: beyond this, building it would exhaust memory before any check
MAX_LINK_RATE_BPS = 10**15  # 1 Pbit/s: far above any link; keeps bit/s arithmetic well inside int64
MAX_LINK_DELAY_PS = 10**15  # 1000 s: far above any link; keeps sums of delays along paths inside int64


def check_topology(topo: Topology, where: str = "topology", link_where: Sequence[str] | None = None) -> None:
    """Raise InputError for the first problem found; return None for a usable topology.

    Parameters
    ----------
    topo
        The topology to check.
    where
        Location used for node-level and whole-graph problems (e.g. ``"topology.txt:2"``).
    link_where
        Optional location of every link (e.g. ``"topology.txt:7"``), used for per-link problems.
        Defaults to ``f"{where}.links[{l}]"``.

    Checks, in order: array shapes, node ids, rates > 0, delays >= 0, error rates in [0, 1],
    self loops, duplicate links (the reference keys neighbours by node, so parallel links
    cannot be represented), hosts without links, and mutual reachability of all hosts through
    switches only (hosts never forward, as in the reference's BFS).
    """
    _check_shapes(topo, where)
    n = topo.n_nodes

    def at(link: int) -> str:
        return link_where[link] if link_where is not None else f"{where}.links[{link}]"

    a = topo.link_a.astype(np.int64)
    b = topo.link_b.astype(np.int64)
    bad = np.flatnonzero((a < 0) | (a >= n) | (b < 0) | (b >= n))
    if bad.size:
        i = int(bad[0])
        raise InputError(
            at(i),
            f"link {i} joins nodes {a[i]} and {b[i]}, outside 0..{n - 1}",
            f"use node ids below the node count {n}",
        )
    bad = np.flatnonzero(topo.link_rate_bps <= 0)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            at(i), f"link {i} has rate {topo.link_rate_bps[i]} bit/s", "use a positive rate such as 100Gbps"
        )
    bad = np.flatnonzero(topo.link_rate_bps > MAX_LINK_RATE_BPS)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            at(i), f"link {i} has rate {topo.link_rate_bps[i]} bit/s, above 1 Pbit/s", "check the unit, e.g. 100Gbps"
        )
    bad = np.flatnonzero(topo.link_delay_ps < 0)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            at(i), f"link {i} has negative delay {topo.link_delay_ps[i]} ps", "use a delay >= 0, e.g. 1000ns"
        )
    bad = np.flatnonzero(topo.link_delay_ps > MAX_LINK_DELAY_PS)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            at(i), f"link {i} has delay {topo.link_delay_ps[i]} ps, above 1000 s", "check the unit, e.g. 1000ns or 1us"
        )
    err = np.asarray(topo.link_error_rate, dtype=np.float64)
    bad = np.flatnonzero(~((err >= 0.0) & (err <= 1.0)))  # also catches NaN
    if bad.size:
        i = int(bad[0])
        raise InputError(at(i), f"link {i} has error rate {err[i]}", "use an error rate between 0 and 1, usually 0")
    bad = np.flatnonzero(a == b)
    if bad.size:
        i = int(bad[0])
        raise InputError(at(i), f"link {i} is a self loop on node {a[i]}", "join two different nodes")
    _check_duplicates(a, b, n, at)

    is_switch = np.asarray(topo.is_switch, dtype=bool)
    hosts = np.flatnonzero(~is_switch)
    if hosts.size == 0:
        raise InputError(
            where,
            "the topology has no host (every node is a switch)",
            "leave the host (NIC) nodes out of the switch list",
        )
    degree = np.bincount(np.concatenate([a, b]), minlength=n)
    lonely = hosts[degree[hosts] == 0]
    if lonely.size:
        raise InputError(
            where,
            f"host {lonely[0]} has no link (disconnected)",
            f"add a link from node {lonely[0]} to a switch, or drop the node",
        )
    _check_reachability(a, b, is_switch, hosts, where)


def _check_shapes(topo: Topology, where: str) -> None:
    is_switch = np.asarray(topo.is_switch)
    if is_switch.ndim != 1 or is_switch.size == 0:
        raise InputError(where, "is_switch must be a non-empty 1-D array", "give one entry per node")
    arrays = {
        "link_a": topo.link_a,
        "link_b": topo.link_b,
        "link_rate_bps": topo.link_rate_bps,
        "link_delay_ps": topo.link_delay_ps,
        "link_error_rate": topo.link_error_rate,
    }
    lengths = {k: np.asarray(v).shape for k, v in arrays.items()}
    if any(len(s) != 1 for s in lengths.values()) or len(set(lengths.values())) != 1:
        desc = ", ".join(f"{k}{list(s)}" for k, s in lengths.items())
        raise InputError(
            where, f"link arrays have inconsistent shapes: {desc}", "give one 1-D entry per link in every array"
        )
    for k in ("link_a", "link_b", "link_rate_bps", "link_delay_ps"):
        if not np.issubdtype(np.asarray(arrays[k]).dtype, np.integer):
            raise InputError(
                where,
                f"{k} must hold integers, not {np.asarray(arrays[k]).dtype}",
                "use int64 arrays (rates in bit/s, delays in ps)",
            )


def _check_duplicates(a: np.ndarray, b: np.ndarray, n: int, at) -> None:
    key = np.minimum(a, b) * n + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if same.size:
        # Report the later link of the first duplicated pair (in file order), naming the earlier one.
        pairs = [(int(order[s + 1]), int(order[s])) for s in same]
        later, earlier = min(pairs)
        raise InputError(
            at(later),
            f"link {later} duplicates link {earlier} between nodes {a[later]} and {b[later]}",
            "keep one link per node pair (parallel links are not supported by the reference); raise its rate instead",
        )


def _check_reachability(a, b, is_switch, hosts, where) -> None:
    """Every pair of hosts must be joined by a path whose inner nodes are all switches."""
    n = is_switch.size
    # Components of the switch-only graph, by min-label propagation (converges in diameter steps).
    label = np.arange(n)
    ss = is_switch[a] & is_switch[b]
    sa, sb = a[ss], b[ss]
    while sa.size:
        low = np.minimum(label[sa], label[sb])
        new = label.copy()
        np.minimum.at(new, sa, low)
        np.minimum.at(new, sb, low)
        new = new[new]  # pointer jumping speeds up long chains
        if np.array_equal(new, label):
            break
        label = new
    # Host h touches switch component c if linked to a switch of c.
    hs_host = np.concatenate([a[~is_switch[a] & is_switch[b]], b[is_switch[a] & ~is_switch[b]]])
    hs_comp = np.concatenate([label[b[~is_switch[a] & is_switch[b]]], label[a[is_switch[a] & ~is_switch[b]]]])
    hh = ~is_switch[a] & ~is_switch[b]
    comps, comp_idx = np.unique(hs_comp, return_inverse=True)
    host_idx = np.full(n, -1)
    host_idx[hosts] = np.arange(hosts.size)
    touch = np.zeros((hosts.size, comps.size), dtype=bool)
    touch[host_idx[hs_host], comp_idx] = True
    if comps.size and touch.all(axis=0).any():
        return  # one switch component reaches every host: the common case
    direct = np.zeros((hosts.size, hosts.size), dtype=bool)
    direct[host_idx[a[hh]], host_idx[b[hh]]] = True
    direct |= direct.T
    t = touch.astype(np.int64)
    for i in range(hosts.size):
        reach = (t @ t[i] > 0) | direct[i]
        reach[i] = True
        if not reach.all():
            j = int(np.flatnonzero(~reach)[0])
            raise InputError(
                where,
                f"hosts {hosts[i]} and {hosts[j]} cannot reach each other through switches "
                "(hosts never forward traffic)",
                "add switch links so that every host pair is connected",
            )
