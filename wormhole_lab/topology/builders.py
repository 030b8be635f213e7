"""Generators of common datacenter topologies, numbered like the reference's files.

Hosts come first (``0..n_hosts-1``), then switches; host links are listed before fabric links.
Rates are bit/s (int), delays picoseconds (int). Every builder stores its parameters in
``Topology.meta`` and validates its arguments, raising InputError that names the argument.
"""

import operator

import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import MAX_NODES, check_topology

__all__ = ["DEFAULT_DELAY_PS", "DEFAULT_RATE_BPS", "dumbbell", "fat_tree", "leaf_spine", "rail_optimized", "star"]

DEFAULT_RATE_BPS = 100_000_000_000  #: 100 Gb/s, the reference's host rate
DEFAULT_DELAY_PS = 1_000_000  #: 1 us, the reference's link delay
NVLINK_RATE_BPS = 900_000_000_000  #: 900 Gb/s, as in SimAI's H20 topologies
NVLINK_DELAY_PS = 25_000  #: 25 ns (SimAI's 0.000025ms)


def _count(fn: str, arg: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool):
        raise InputError(f"{fn}({arg}={value!r})", f"{arg} must be an integer", f"pass an integer >= {minimum}")
    try:
        v = operator.index(value)
    except TypeError:
        raise InputError(
            f"{fn}({arg}={value!r})", f"{arg} must be an integer", f"pass an integer >= {minimum}"
        ) from None
    if v < minimum:
        raise InputError(f"{fn}({arg}={value!r})", f"{arg} must be at least {minimum}", f"pass an integer >= {minimum}")
    return v


def _rate(fn: str, arg: str, value) -> int:
    try:
        v = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        v = None
    if v is None:
        raise InputError(
            f"{fn}({arg}={value!r})",
            f"{arg} must be an integer number of bit/s",
            "pass e.g. 100_000_000_000 or units.parse_rate('100Gbps', ...)",
        )
    if v <= 0:
        raise InputError(f"{fn}({arg}={value!r})", f"{arg} must be positive", "pass a rate above 0 bit/s")
    return v


def _delay(fn: str, arg: str, value) -> int:
    try:
        v = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        v = None
    if v is None:
        raise InputError(
            f"{fn}({arg}={value!r})",
            f"{arg} must be an integer number of picoseconds",
            "pass e.g. 1_000_000 (1 us) or units.parse_time_ps('1us', ...)",
        )
    if v < 0:
        raise InputError(f"{fn}({arg}={value!r})", f"{arg} must not be negative", "pass a delay >= 0 ps")
    return v


def _check_size(fn: str, arg: str, value, n_nodes: int, n_links: int) -> None:
    """Refuse, before building anything, a topology too large to hold in memory."""
    if n_nodes > MAX_NODES or n_links > MAX_NODES:
        raise InputError(
            f"{fn}({arg}={value!r})",
            f"{arg}={value} is too large: {n_nodes} nodes and {n_links} links (at most {MAX_NODES} of each)",
            f"use a smaller {arg}",
        )


def _make(
    fn: str, n_hosts: int, n_nodes: int, links: list[tuple[int, int, int, int]], name: str, meta: dict
) -> Topology:
    is_switch = np.ones(n_nodes, dtype=bool)
    is_switch[:n_hosts] = False
    arr = np.array(links, dtype=np.int64).reshape(-1, 4)
    topo = Topology(
        is_switch=is_switch,
        link_a=arr[:, 0].copy(),
        link_b=arr[:, 1].copy(),
        link_rate_bps=arr[:, 2].copy(),
        link_delay_ps=arr[:, 3].copy(),
        link_error_rate=np.zeros(arr.shape[0], dtype=np.float64),
        name=name,
        meta={"builder": fn, **meta},
    )
    check_topology(topo, where=f"{fn}()")
    return topo


def star(n_hosts: int, host_rate_bps: int = DEFAULT_RATE_BPS, host_delay_ps: int = DEFAULT_DELAY_PS) -> Topology:
    """``n_hosts`` hosts on one switch (node ``n_hosts``); the reference's single-switch cases."""
    fn = "star"
    n = _count(fn, "n_hosts", n_hosts)
    rate, delay = _rate(fn, "host_rate_bps", host_rate_bps), _delay(fn, "host_delay_ps", host_delay_ps)
    _check_size(fn, "n_hosts", n, n + 1, n)
    links = [(h, n, rate, delay) for h in range(n)]
    return _make(fn, n, n + 1, links, f"star({n})", {"n_hosts": n, "host_rate_bps": rate, "host_delay_ps": delay})


def dumbbell(
    n_left: int,
    n_right: int,
    host_rate_bps: int = DEFAULT_RATE_BPS,
    host_delay_ps: int = DEFAULT_DELAY_PS,
    bottleneck_rate_bps: int = DEFAULT_RATE_BPS,
    bottleneck_delay_ps: int = DEFAULT_DELAY_PS,
) -> Topology:
    """Two switches joined by one bottleneck link.

    Hosts ``0..n_left-1`` hang off the left switch (node ``n_left+n_right``), the rest off the
    right switch (the next node). The bottleneck is the last link.
    """
    fn = "dumbbell"
    nl, nr = _count(fn, "n_left", n_left), _count(fn, "n_right", n_right)
    rate, delay = _rate(fn, "host_rate_bps", host_rate_bps), _delay(fn, "host_delay_ps", host_delay_ps)
    b_rate = _rate(fn, "bottleneck_rate_bps", bottleneck_rate_bps)
    b_delay = _delay(fn, "bottleneck_delay_ps", bottleneck_delay_ps)
    _check_size(fn, "n_left" if nl >= nr else "n_right", max(nl, nr), nl + nr + 2, nl + nr + 1)
    left, right = nl + nr, nl + nr + 1
    links = [(h, left if h < nl else right, rate, delay) for h in range(nl + nr)]
    links.append((left, right, b_rate, b_delay))
    meta = {
        "n_left": nl,
        "n_right": nr,
        "host_rate_bps": rate,
        "host_delay_ps": delay,
        "bottleneck_rate_bps": b_rate,
        "bottleneck_delay_ps": b_delay,
    }
    return _make(fn, nl + nr, nl + nr + 2, links, f"dumbbell({nl},{nr})", meta)


def leaf_spine(
    n_leaves: int,
    n_spines: int,
    hosts_per_leaf: int,
    host_rate_bps: int = DEFAULT_RATE_BPS,
    host_delay_ps: int = DEFAULT_DELAY_PS,
    fabric_rate_bps: int = DEFAULT_RATE_BPS,
    fabric_delay_ps: int = DEFAULT_DELAY_PS,
) -> Topology:
    """Two-tier Clos: every leaf links to every spine.

    Host ``h`` sits on leaf ``h // hosts_per_leaf``; leaves are nodes ``n_hosts..``, spines follow.
    """
    fn = "leaf_spine"
    nl, ns = _count(fn, "n_leaves", n_leaves), _count(fn, "n_spines", n_spines)
    hpl = _count(fn, "hosts_per_leaf", hosts_per_leaf)
    rate, delay = _rate(fn, "host_rate_bps", host_rate_bps), _delay(fn, "host_delay_ps", host_delay_ps)
    f_rate, f_delay = _rate(fn, "fabric_rate_bps", fabric_rate_bps), _delay(fn, "fabric_delay_ps", fabric_delay_ps)
    n_hosts = nl * hpl
    big = max((nl, "n_leaves"), (ns, "n_spines"), (hpl, "hosts_per_leaf"))
    _check_size(fn, big[1], big[0], n_hosts + nl + ns, n_hosts + nl * ns)
    leaf0, spine0 = n_hosts, n_hosts + nl
    links = [(h, leaf0 + h // hpl, rate, delay) for h in range(n_hosts)]
    links += [(leaf0 + i, spine0 + j, f_rate, f_delay) for i in range(nl) for j in range(ns)]
    meta = {
        "n_leaves": nl,
        "n_spines": ns,
        "hosts_per_leaf": hpl,
        "host_rate_bps": rate,
        "host_delay_ps": delay,
        "fabric_rate_bps": f_rate,
        "fabric_delay_ps": f_delay,
    }
    return _make(fn, n_hosts, n_hosts + nl + ns, links, f"leaf_spine({nl},{ns},{hpl})", meta)


def fat_tree(
    k: int,
    host_rate_bps: int = DEFAULT_RATE_BPS,
    host_delay_ps: int = DEFAULT_DELAY_PS,
    fabric_rate_bps: int = DEFAULT_RATE_BPS,
    fabric_delay_ps: int = DEFAULT_DELAY_PS,
) -> Topology:
    """k-ary fat tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores.

    Nodes: k^3/4 hosts, then edge switches (pod-major), aggregation switches (pod-major), cores.
    Host ``h`` is on edge ``h // (k/2)``; aggregation switch ``j`` of each pod links to cores
    ``j*k/2 .. j*k/2 + k/2 - 1``. Host links use ``host_rate_bps``, the others ``fabric_rate_bps``.
    ``meta`` holds the half-open id ranges of each tier (``edge_range``, ``agg_range``, ``core_range``).
    """
    fn = "fat_tree"
    k = _count(fn, "k", k, minimum=2)
    if k % 2:
        raise InputError(f"{fn}(k={k})", "k must be even", "pass an even k such as 4 or 8")
    rate, delay = _rate(fn, "host_rate_bps", host_rate_bps), _delay(fn, "host_delay_ps", host_delay_ps)
    f_rate, f_delay = _rate(fn, "fabric_rate_bps", fabric_rate_bps), _delay(fn, "fabric_delay_ps", fabric_delay_ps)
    half = k // 2
    n_hosts, n_edge, n_core = k**3 // 4, k * half, half * half
    _check_size(fn, "k", k, n_hosts + 2 * n_edge + n_core, n_hosts + 2 * k * half * half)
    edge0 = n_hosts
    agg0 = edge0 + n_edge
    core0 = agg0 + n_edge
    links = [(h, edge0 + h // half, rate, delay) for h in range(n_hosts)]
    for pod in range(k):
        for e in range(half):
            for g in range(half):
                links.append((edge0 + pod * half + e, agg0 + pod * half + g, f_rate, f_delay))
    for pod in range(k):
        for g in range(half):
            for c in range(half):
                links.append((agg0 + pod * half + g, core0 + g * half + c, f_rate, f_delay))
    meta = {
        "k": k,
        "host_rate_bps": rate,
        "host_delay_ps": delay,
        "fabric_rate_bps": f_rate,
        "fabric_delay_ps": f_delay,
        "edge_range": (edge0, agg0),
        "agg_range": (agg0, core0),
        "core_range": (core0, core0 + n_core),
    }
    return _make(fn, n_hosts, core0 + n_core, links, f"fat_tree({k})", meta)


def rail_optimized(
    n_servers: int,
    gpus_per_server: int = 8,
    n_spines: int | None = None,
    host_rate_bps: int = DEFAULT_RATE_BPS,
    host_delay_ps: int = DEFAULT_DELAY_PS,
    fabric_rate_bps: int = DEFAULT_RATE_BPS,
    fabric_delay_ps: int = DEFAULT_DELAY_PS,
    nvlink: bool = False,
    nvlink_rate_bps: int = NVLINK_RATE_BPS,
    nvlink_delay_ps: int = NVLINK_DELAY_PS,
) -> Topology:
    """Rail-optimised GPU cluster, numbered like SimAI's ``Rail_Opti_SingleToR`` files.

    One host per GPU NIC: GPU ``g`` of server ``s`` is node ``s*gpus_per_server + g`` and links to
    rail switch ``g``; every rail switch links to every spine. With ``nvlink=True`` each server
    also gets an NVSwitch joining its GPUs at ``nvlink_rate_bps``.

    Nodes: GPUs, then NVSwitches (one per server, if any), rail switches, spines. Links: per GPU its
    NVSwitch link (if any) then its rail link, then rail-spine links. ``n_spines`` defaults to the
    smallest count that makes the rails non-blocking: ceil(n_servers * host_rate / fabric_rate).
    """
    fn = "rail_optimized"
    ns_ = _count(fn, "n_servers", n_servers)
    gps = _count(fn, "gpus_per_server", gpus_per_server)
    rate, delay = _rate(fn, "host_rate_bps", host_rate_bps), _delay(fn, "host_delay_ps", host_delay_ps)
    f_rate, f_delay = _rate(fn, "fabric_rate_bps", fabric_rate_bps), _delay(fn, "fabric_delay_ps", fabric_delay_ps)
    if not isinstance(nvlink, (bool, np.bool_)):
        raise InputError(f"{fn}(nvlink={nvlink!r})", "nvlink must be True or False", "pass nvlink=True for NVSwitches")
    nv_rate, nv_delay = _rate(fn, "nvlink_rate_bps", nvlink_rate_bps), _delay(fn, "nvlink_delay_ps", nvlink_delay_ps)
    spines_given = n_spines is not None
    if n_spines is None:
        n_spines = max(1, -(-ns_ * rate // f_rate))
    n_sp = _count(fn, "n_spines", n_spines)
    n_hosts = ns_ * gps
    big = max((ns_, "n_servers"), (gps, "gpus_per_server"), (n_sp if spines_given else 0, "n_spines"))
    _check_size(
        fn, big[1], big[0], n_hosts + (ns_ if nvlink else 0) + gps + n_sp, n_hosts * (2 if nvlink else 1) + gps * n_sp
    )
    nv0 = n_hosts
    rail0 = nv0 + (ns_ if nvlink else 0)
    spine0 = rail0 + gps
    links = []
    for h in range(n_hosts):
        if nvlink:
            links.append((h, nv0 + h // gps, nv_rate, nv_delay))
        links.append((h, rail0 + h % gps, rate, delay))
    links += [(rail0 + r, spine0 + s, f_rate, f_delay) for r in range(gps) for s in range(n_sp)]
    meta = {
        "n_servers": ns_,
        "gpus_per_server": gps,
        "n_spines": n_sp,
        "host_rate_bps": rate,
        "host_delay_ps": delay,
        "fabric_rate_bps": f_rate,
        "fabric_delay_ps": f_delay,
        "nvlink": bool(nvlink),
        "nvswitch_ids": list(range(nv0, rail0)),
        "rail_ids": list(range(rail0, spine0)),
        "spine_ids": list(range(spine0, spine0 + n_sp)),
    }
    if nvlink:
        meta.update(nvlink_rate_bps=nv_rate, nvlink_delay_ps=nv_delay)
    return _make(fn, n_hosts, spine0 + n_sp, links, f"rail_optimized({ns_}x{gps})", meta)
