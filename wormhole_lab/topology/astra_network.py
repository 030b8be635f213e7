"""ASTRA-sim's network configuration (the analytical backend's YAML) and the Topology that carries it.

ASTRA-sim describes a network as dimensions (``topology``, ``npus_count``, ``bandwidth``, ``latency``, one
entry per dimension, dimension 0 the fastest-varying digit of an NPU id). ``read_astra_network`` reads and
checks such a file; ``AstraNetwork`` reproduces the congestion-unaware backend's per-message time
(``message_ns``); ``astra_topology`` builds links with the same per-hop latency and per-link bandwidth for the
packet engine. Semantics: astra-network-analytical ``NetworkParser.cpp``, ``BasicTopology.cpp``, ``Ring.cpp``,
``MultiDimTopology.cpp``; see docs/chakra.md, "ASTRA-sim network configurations".
"""

import difflib
import math
import operator
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from wormhole_lab.errors import InputError, read_yaml_file
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import MAX_LINK_DELAY_PS, MAX_LINK_RATE_BPS, MAX_NODES, check_topology

__all__ = ["TOPOLOGY_NAMES", "AstraDim", "AstraNetwork", "astra_topology", "read_astra_network"]

TOPOLOGY_NAMES = ("Ring", "Switch", "FullyConnected")  #: ASTRA-sim's building blocks (names are case-sensitive)
_KEYS = ("topology", "npus_count", "bandwidth", "latency")  # the parser reads these and nothing else
_EXAMPLE = {"topology": "[ Ring ]", "npus_count": "[ 8 ]", "bandwidth": "[ 50.0 ]", "latency": "[ 500.0 ]"}
# Beyond these the link would not fit the Topology's limits even before headers (1 Pbit/s, 1000 s).
_MAX_GBPS = MAX_LINK_RATE_BPS / 8 / 2**30
_MAX_LATENCY_NS = MAX_LINK_DELAY_PS / 1000
# PyYAML reads YAML 1.1, where "1e3" is text; ASTRA-sim's yaml-cpp reads it as a number, so accept it too.
_NUMBER_TEXT = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


def _value_problem(key: str, value) -> tuple[str, str] | None:
    """(problem, fix) if ``value`` is not a valid entry of ``key``'s list, else None."""
    if key == "topology":
        if isinstance(value, str) and value in TOPOLOGY_NAMES:
            return None
        close = difflib.get_close_matches(str(value), TOPOLOGY_NAMES, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (
            f"is {value!r}, not a topology ASTRA-sim knows",
            f"{hint}allowed (case-sensitive): Ring, Switch, FullyConnected",
        )
    if key == "npus_count":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"is {value!r}, not an integer", "write a whole number of NPUs above 1, e.g. 8"
        if value <= 1:
            return f"is {value}; each dimension needs more than 1 NPU", "write 2 or more (drop a dimension of 1 NPU)"
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        unit = "GB/s (2^30 bytes/s), e.g. 50.0" if key == "bandwidth" else "ns per hop, e.g. 500.0"
        return f"is {value!r}, not a finite number", f"write a number of {unit}"
    if key == "bandwidth" and not 0 < value <= _MAX_GBPS:
        return f"is {value} GB/s; it must be above 0 and at most {_MAX_GBPS:.0f}", "write a positive rate, e.g. 50.0"
    if key == "latency" and not 0 <= value <= _MAX_LATENCY_NS:
        return f"is {value} ns; it must be 0 or more and at most 1e12", "write a latency >= 0 ns per hop, e.g. 500.0"
    return None


@dataclass(frozen=True)
class AstraDim:
    """One dimension of an ASTRA-sim network: ``npus`` NPUs joined as ``topology``, each link carrying
    ``bandwidth_GBps`` (ASTRA-sim's GB/s, i.e. 2^30 bytes/s, per link and direction), ``latency_ns`` per hop."""

    topology: str
    npus: int
    bandwidth_GBps: float
    latency_ns: float

    def __post_init__(self):
        for key, attr in zip(_KEYS, ("topology", "npus", "bandwidth_GBps", "latency_ns"), strict=True):
            bad = _value_problem(key, getattr(self, attr))
            if bad:
                raise InputError(f"AstraDim({attr}={getattr(self, attr)!r})", f"{attr} {bad[0]}", bad[1])
        object.__setattr__(self, "bandwidth_GBps", float(self.bandwidth_GBps))
        object.__setattr__(self, "latency_ns", float(self.latency_ns))

    @property
    def bytes_per_ns(self) -> float:
        """Bandwidth in bytes/ns, computed as ASTRA-sim does (``bw_GBps_to_Bpns``: "1 GB is 2^30 B")."""
        return self.bandwidth_GBps * 2**30 / 1e9

    def hops(self, a: int, b: int) -> int:
        """ASTRA-sim's hop count between local ids ``a != b``: Switch 2, FullyConnected 1, (bidirectional) Ring
        the shorter way round."""
        if self.topology == "Switch":
            return 2
        if self.topology == "FullyConnected":
            return 1
        cw = (b - a) % self.npus
        return min(cw, self.npus - cw)


@dataclass(frozen=True)
class AstraNetwork:
    """ASTRA-sim's network: ``dims`` (dimension 0 is the fastest-varying digit of an NPU id) and the file read."""

    dims: tuple[AstraDim, ...]
    path: Path | None = None

    def __post_init__(self):
        dims = tuple(self.dims)
        if not dims or not all(isinstance(d, AstraDim) for d in dims):
            raise InputError("AstraNetwork(dims)", "dims must be one or more AstraDim", "pass e.g. (AstraDim(...),)")
        object.__setattr__(self, "dims", dims)

    @property
    def n_npus(self) -> int:
        return math.prod(d.npus for d in self.dims)

    def coords(self, npu: int) -> tuple[int, ...]:
        """The digits of ``npu``, dimension 0 first (it varies fastest), as ASTRA-sim's ``translate_address``."""
        npu = self._npu("coords", "npu", npu)
        digits = []
        for d in self.dims:
            npu, digit = divmod(npu, d.npus)
            digits.append(digit)
        return tuple(digits)

    def hops(self, src: int, dst: int) -> int:
        """ASTRA-sim's hop count: that of the lowest dimension whose digits differ (it never routes across dims)."""
        dim, a, b = self._dim_of(src, dst, "hops")
        return dim.hops(a, b)

    def message_ns(self, src: int, dst: int, nbytes: int) -> int:
        """The congestion-unaware backend's delivery time (ns) of one message: ``hops * latency + bytes / (B/ns)``
        of the lowest differing dimension, truncated (serialisation counted once, as cut-through)."""
        dim, a, b = self._dim_of(src, dst, "message_ns")
        try:
            n = operator.index(nbytes) if not isinstance(nbytes, bool) else 0
        except TypeError:
            n = 0
        if n <= 0:  # ASTRA-sim asserts chunk_size > 0
            raise InputError(
                f"AstraNetwork.message_ns(nbytes={nbytes!r})", "nbytes must be a positive integer", "pass bytes >= 1"
            )
        return int(dim.hops(a, b) * dim.latency_ns + n / dim.bytes_per_ns)

    def _npu(self, fn: str, arg: str, npu) -> int:
        n = self.n_npus
        try:
            v = operator.index(npu) if not isinstance(npu, bool) else -1
        except TypeError:
            v = -1
        if not 0 <= v < n:
            raise InputError(
                f"AstraNetwork.{fn}({arg}={npu!r})", f"{arg} is not an NPU id 0..{n - 1}", "pass an NPU id"
            )
        return v

    def _dim_of(self, src, dst, fn: str) -> tuple[AstraDim, int, int]:
        s, t = self.coords(self._npu(fn, "src", src)), self.coords(self._npu(fn, "dst", dst))
        for dim, a, b in zip(self.dims, s, t, strict=True):
            if a != b:
                return dim, a, b
        raise InputError(
            f"AstraNetwork.{fn}(src={src}, dst={dst})",
            "src and dst are the same NPU",
            "ASTRA-sim never sends to itself",
        )


def read_astra_network(path) -> AstraNetwork:
    """Read and check an ASTRA-sim network YAML; every error names ``file:line``, the key and the fix."""
    path = Path(path)
    root, doc = read_yaml_file(path, "network configuration", "save ASTRA-sim's network YAML as UTF-8 text")
    example = "; ".join(f"{k}: {v}" for k, v in _EXAMPLE.items())
    if root is None:
        raise InputError(f"{path}:1", "the network configuration is empty", f"write the four keys, e.g. {example}")
    if not isinstance(root, yaml.MappingNode):
        raise InputError(
            f"{path}:{root.start_mark.line + 1}",
            "the network configuration must be a mapping of topology, npus_count, bandwidth and latency",
            f"write 'key: [ ... ]' lines, e.g. {example}",
        )
    nodes: dict[str, tuple[int, yaml.Node]] = {}
    for key_node, value_node in root.value:
        key, line = str(key_node.value), key_node.start_mark.line + 1
        if key in nodes:
            raise InputError(f"{path}:{line}", f"{key}: key given twice (first on line {nodes[key][0]})", "keep one")
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(
                f"{path}:{line}",
                f"unknown key {key!r}: ASTRA-sim's network configuration has no other keys",
                f"{hint}allowed: {', '.join(_KEYS)}",
            )
        nodes[key] = (line, value_node)
    for key in _KEYS:
        if key not in nodes:
            raise InputError(
                f"{path}:{root.start_mark.line + 1}",
                f"missing key {key!r}",
                f"add '{key}: {_EXAMPLE[key]}' (one entry per dimension)",
            )
    columns = {key: _column(path, key, *nodes[key], doc[key]) for key in _KEYS}
    n_dims = len(columns["topology"])
    for key in _KEYS[1:]:
        if len(columns[key]) != n_dims:
            raise InputError(
                f"{path}:{nodes[key][0]}",
                f"{key} has {len(columns[key])} entries but topology has {n_dims}",
                "give one entry per dimension in each of topology, npus_count, bandwidth and latency",
            )
    dims = tuple(AstraDim(*row) for row in zip(*columns.values(), strict=True))
    return AstraNetwork(dims, path)


def _column(path: Path, key: str, line: int, node: yaml.Node, value) -> list:
    """The checked entries of ``key``'s list; an error names the line of the entry (or of the key)."""
    if not isinstance(node, yaml.SequenceNode) or not isinstance(value, list):
        raise InputError(
            f"{path}:{line}", f"{key} must be a list, one entry per dimension", f"write '{key}: {_EXAMPLE[key]}'"
        )
    if not value:
        raise InputError(f"{path}:{line}", f"{key} lists no dimension", f"write '{key}: {_EXAMPLE[key]}'")
    out = []
    for i, (item, v) in enumerate(zip(node.value, value, strict=True)):
        if key in ("bandwidth", "latency") and isinstance(v, str) and item.style is None and _NUMBER_TEXT.match(v):
            v = float(v)
        bad = _value_problem(key, v)
        if bad:
            raise InputError(f"{path}:{item.start_mark.line + 1}", f"{key}[{i}] {bad[0]}", bad[1])
        out.append(v)
    return out


def astra_topology(network: AstraNetwork, wire_per_payload: float = 1.0) -> Topology:
    """The Topology of ``network``: NPU ``i`` is host ``i``; every link has its dimension's bandwidth and latency.

    Rates: ASTRA-sim's bandwidth is the rate at which *message* bytes move, while our packets also carry
    headers, so each link runs at ``round(bytes_per_ns * 1e9 * 8 * wire_per_payload)`` bit/s. Pass
    ``wire_per_payload = (payload + header) / payload`` of the packets to be simulated so that their payload
    moves at ASTRA-sim's rate; the default 1.0 is the raw rate. Delays: ``latency`` per link, so a path crosses
    as many latencies as ASTRA-sim counts hops.

    A 1-D ``Switch`` is a star (hosts on switch node ``n``). Otherwise every NPU gets a router switch
    ``n + i`` (hosts cannot forward), joined to host ``i`` by a 0-delay link as fast as the router's fabric
    links together; per dimension, each group of NPUs that differ only in that digit is joined as a ring
    (neighbours ``k``, ``k+1 mod n``), fully (every pair), or through one switch of its own (nodes ``2n..``).
    """
    fn = "astra_topology"
    try:
        wpp = float(wire_per_payload)
    except (TypeError, ValueError):
        wpp = math.nan
    if isinstance(wire_per_payload, bool) or not (math.isfinite(wpp) and wpp >= 1.0):
        raise InputError(
            f"{fn}(wire_per_payload={wire_per_payload!r})",
            "wire_per_payload must be a finite number >= 1 (headers only add bytes)",
            "pass (payload + header) / payload of a packet, e.g. 1048 / 1000, or 1.0 for the raw rate",
        )
    dims, n = network.dims, network.n_npus
    source = str(network.path) if network.path is not None else "AstraNetwork"
    name = "astra(" + ", ".join(f"{d.topology} {d.npus}" for d in dims) + ")"
    rates = [round(d.bytes_per_ns * 1e9 * 8 * wpp) for d in dims]
    delays = [round(d.latency_ns * 1000) for d in dims]
    star = len(dims) == 1 and dims[0].topology == "Switch"

    # Count before building: a huge npus_count must fail here, not while allocating its links.
    n_switches = sum(n // d.npus for d in dims if d.topology == "Switch")
    per_group = {"Ring": lambda k: k if k > 2 else 1, "FullyConnected": lambda k: k * (k - 1) // 2, "Switch": int}
    n_fabric = sum(n // d.npus * per_group[d.topology](d.npus) for d in dims)
    n_nodes, n_links = (n + 1, n) if star else (2 * n + n_switches, n + n_fabric)
    if n_nodes > MAX_NODES or n_links > MAX_NODES:
        raise InputError(
            f"{fn}({source})",
            f"{name} needs {n_nodes} nodes and {n_links} links (at most {MAX_NODES} of each)",
            "use fewer NPUs (npus_count)",
        )
    for d, dim in enumerate(dims):
        if rates[d] > MAX_LINK_RATE_BPS:
            raise InputError(
                f"{fn}({source})",
                f"bandwidth[{d}] = {dim.bandwidth_GBps} GB/s x wire_per_payload {wpp} is above 1 Pbit/s",
                "use a smaller bandwidth or wire_per_payload",
            )

    if star:
        a = np.arange(n, dtype=np.int64)
        b = np.full(n, n, dtype=np.int64)
        rate = np.full(n, rates[0], dtype=np.int64)
        delay = np.full(n, delays[0], dtype=np.int64)
    else:
        a, b, rate, delay = _fabric(dims, rates, delays, n)
        # The NPU's injection link runs at its router's fastest fabric link, and has no latency (the fabric links
        # hold all of it). Not at their sum: a NIC starts every flow at its own rate, so a flow would enter its
        # dimension at twice that dimension's rate, queue at the router and be throttled by DCQCN (a 16 MiB ring
        # all-reduce on Ring 8 took 3.0x ASTRA-sim's time so); the price is that an NPU sending on several links
        # at once (direct algorithms, chunks in different dimensions) shares this one.
        inject = np.zeros(2 * n, dtype=np.int64)
        for end in (a, b):
            routers = end < 2 * n
            np.maximum.at(inject, end[routers], rate[routers])
        hosts = np.arange(n, dtype=np.int64)
        a = np.concatenate([hosts, a])
        b = np.concatenate([hosts + n, b])
        rate = np.concatenate([inject[n:], rate])
        delay = np.concatenate([np.zeros(n, dtype=np.int64), delay])
    is_switch = np.ones(n_nodes, dtype=bool)
    is_switch[:n] = False
    meta = {
        "builder": "astra_network",
        "dims": [
            {"topology": d.topology, "npus": d.npus, "bandwidth_GBps": d.bandwidth_GBps, "latency_ns": d.latency_ns}
            for d in dims
        ],
        "npus": n,
        "wire_per_payload": wpp,
        "path": None if network.path is None else str(network.path),
        "router_range": (n, n) if star else (n, 2 * n),
        "switch_range": (n, n + 1) if star else (2 * n, 2 * n + n_switches),
    }
    topo = Topology(
        is_switch=is_switch,
        link_a=a,
        link_b=b,
        link_rate_bps=rate,
        link_delay_ps=delay,
        link_error_rate=np.zeros(a.shape[0], dtype=np.float64),
        name=name,
        meta=meta,
    )
    check_topology(topo, where=f"{fn}({source})")
    return topo


def _fabric(dims, rates, delays, n) -> tuple[np.ndarray, ...]:
    """Router-to-router and router-to-switch links of every dimension, in dimension then group order."""
    npus = np.arange(n, dtype=np.int64)
    parts, next_switch, stride = [], 2 * n, 1
    for dim, rate, delay in zip(dims, rates, delays, strict=True):
        k = dim.npus
        bases = npus[(npus // stride) % k == 0]  # one NPU per group: the one whose digit is 0
        members = n + bases[:, None] + stride * np.arange(k)[None, :]  # routers, [group, digit]
        if dim.topology == "Switch":
            switch = next_switch + np.arange(bases.size)
            next_switch += bases.size
            a, b = members.ravel(), np.repeat(switch, k)
        else:
            if dim.topology == "Ring":
                i = np.arange(k if k > 2 else 1)  # two NPUs share one link, not two parallel ones
                j = (i + 1) % k
            else:
                i, j = np.triu_indices(k, 1)
            a, b = members[:, i].ravel(), members[:, j].ravel()
        parts.append((a, b, np.full(a.size, rate, dtype=np.int64), np.full(a.size, delay, dtype=np.int64)))
        stride *= k
    return tuple(np.concatenate(col) for col in zip(*parts, strict=True))
