"""Shortest-path ECMP routing with the reference's exact next-hop order and hash.

Mirrors HPCC's ns-3: ``CalculateRoute`` in ``scratch/third.cc`` (a BFS from every destination host,
hosts never transit), ``SwitchNode::GetOutDev`` (MurmurHash3 over ``[sip, dip, sport | dport<<16]``
seeded with the switch's node id, ``nexthops[h % n]``) and the base-RTT / bottleneck / BDP tables
that third.cc derives from the same BFS.

Host NICs with several equal-cost next hops (e.g. a GPU wired to an NVSwitch and a rail switch)
pick ``nexthops[h % n]`` with the same 12 bytes hashed by ``ns3::Hash32``, i.e. MurmurHash3 with
ns-3's fixed seed 0x8BADF00D, as ``RdmaHw::GetNicIdxOfQp`` does (``Routes(host_hash_seed=...)``
overrides it). The single-NIC hosts of HPCC's topologies never hash.

Twin hosts (one link each, to the same node, of the same delay in ns and rate: a rack's hosts) share one
BFS. Swapping two twins ``r`` and ``d`` (sigma) maps the graph onto itself and fixes every other node; the
BFS queues only switches and its root, so their order (descending id at each step) does not change, and the
BFS from ``d`` is the BFS from ``r`` with the two hosts swapped, and their links swapped in the egress ports
(pi: the ports out of and into ``r`` become ``d``'s).
Routes keep the tree of the group's lowest host, ``r``, and read the tree of ``d`` through sigma and pi:
bit-identical to a BFS per host, with one tree per group (8, one per rail switch, instead of 8192 for
1024 servers x 8 GPUs, rail_optimized). Hosts with several links keep a BFS of their own.
"""

from dataclasses import dataclass

import numpy as np

from wormhole_lab.arrays import concat_ranges
from wormhole_lab.errors import InputError
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.validate import check_topology
from wormhole_lab.workload.flows import FlowTable

__all__ = ["HOST_HASH_SEED", "Paths", "Routes", "host_ip", "murmur3_32"]

HOST_HASH_SEED = 0x8BADF00D  #: ns-3's Murmur3 seed (hash-murmur3.h), used by host NICs via ns3::Hash32
HEADER_BYTES = 48  #: per-packet header count in the reference's standalone FCT (with 14 B Ethernet, no INT)
_M32 = 0xFFFFFFFF
_NO_BW = np.iinfo(np.int64).max  # "infinite" bottleneck of a node to itself (third.cc uses UINT64_MAX)


def host_ip(node):
    """IPv4 address (as an int) of host ``node``: 11.(node/256).(node%256).1. Works on arrays too."""
    if np.ndim(node) == 0:
        node = int(node)
        return 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100
    node = np.asarray(node, dtype=np.int64)
    return 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Standard 32-bit MurmurHash3 (x86_32) of ``data``; equals the reference's ``SwitchNode::EcmpHash``."""
    h = seed & _M32
    n4 = len(data) // 4 * 4
    for i in range(0, n4, 4):
        h ^= _mix_k(int.from_bytes(data[i : i + 4], "little"))
        h = ((h << 13) | (h >> 19)) & _M32
        h = (h * 5 + 0xE6546B64) & _M32
    if len(data) > n4:
        h ^= _mix_k(int.from_bytes(data[n4:], "little"))
    return _fmix(h ^ len(data))


def _mix_k(k: int) -> int:
    k = (k * 0xCC9E2D51) & _M32
    k = ((k << 15) | (k >> 17)) & _M32
    return (k * 0x1B873593) & _M32


def _fmix(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


def _murmur3_words(w0, w1, w2, seed) -> np.ndarray:
    """murmur3_32 of the 12 little-endian bytes [w0, w1, w2], vectorised over arrays (uint64 results)."""
    h = np.asarray(seed, dtype=np.uint64) & np.uint64(_M32)
    for w in (w0, w1, w2):
        h = h ^ _mix_k(np.asarray(w, dtype=np.uint64) & np.uint64(_M32))
        h = ((h << np.uint64(13)) | (h >> np.uint64(19))) & np.uint64(_M32)
        h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & np.uint64(_M32)
    return _fmix(h ^ np.uint64(12))


@dataclass(frozen=True)
class Paths:
    """Egress ports hop by hop, as CSR arrays (flow ``i`` uses ``ports[offset[i]:offset[i+1]]``).

    ``data_ports`` starts at the source NIC's port and ends at the last switch's port facing the
    destination; ``ack_ports`` is the same for the ACKs from destination back to source.
    """

    data_offset: np.ndarray  # int64[n_flows + 1]
    data_ports: np.ndarray  # int64[total data hops]
    ack_offset: np.ndarray  # int64[n_flows + 1]
    ack_ports: np.ndarray  # int64[total ack hops]

    def __len__(self) -> int:
        return int(self.data_offset.shape[0] - 1)

    def data(self, i: int) -> np.ndarray:
        return self.data_ports[self.data_offset[i] : self.data_offset[i + 1]]

    def ack(self, i: int) -> np.ndarray:
        return self.ack_ports[self.ack_offset[i] : self.ack_offset[i + 1]]


@dataclass(frozen=True)
class FlowConstants:
    """What the reference computes per flow from its end points (third.cc's pair tables), in arrays."""

    standalone_ns: np.ndarray  # the FCT alone on the network (standalone_fct_ns)
    base_rtt_ns: np.ndarray  # pairRtt
    bdp_bytes: np.ndarray  # pairBdp


@dataclass(frozen=True)
class _Tree:
    """One BFS towards a destination host: hop counts, next hops and third.cc's pair tables."""

    dist: np.ndarray  # int32[n]: hops to the destination, -1 if unreachable
    nh_ptr: np.ndarray  # int64[n + 1]: CSR of next hops per node, in BFS processing order
    nh_node: np.ndarray  # int64[...]
    nh_port: np.ndarray  # int64[...]: egress port on the node towards that next hop
    delay_ns: np.ndarray  # int64[n]: link delays summed along the path on which BFS first found each node
    tx_ns: np.ndarray  # int64[n]: per-hop payload serialisation (integer ns per hop) along that path
    bw_bps: np.ndarray  # int64[n]: min link rate along that path


class Routes:
    """Next hops, ECMP paths and pair constants of a topology; BFS trees are computed lazily per group of twins.

    Parameters
    ----------
    topo
        The topology (validated again here).
    payload_bytes
        Packet payload (PACKET_PAYLOAD_SIZE), bytes; sets the per-hop tx delay in the base RTT.
    host_hash_seed
        Murmur3 seed of host NICs choosing among several next hops.
    """

    def __init__(self, topo: Topology, payload_bytes: int = 1000, host_hash_seed: int = HOST_HASH_SEED):
        check_topology(topo, where=f"Routes({topo.name})")
        if int(payload_bytes) <= 0:
            raise InputError(
                "Routes(payload_bytes)",
                f"payload_bytes must be positive, got {payload_bytes}",
                "use the packet payload size, e.g. 1000",
            )
        self.topo = topo
        self.payload_bytes = int(payload_bytes)
        self.host_hash_seed = int(host_hash_seed)
        n, nl = topo.n_nodes, topo.n_links
        self._n = n
        self._is_switch = np.asarray(topo.is_switch, dtype=bool)
        self._hosts = topo.hosts
        links = np.arange(nl, dtype=np.int64)
        u = np.concatenate([topo.link_a, topo.link_b]).astype(np.int64)
        v = np.concatenate([topo.link_b, topo.link_a]).astype(np.int64)
        port = np.concatenate([2 * links, 2 * links + 1])
        link = np.concatenate([links, links])
        # third.cc iterates a std::map keyed by node pointer; in the reference build that is descending node id.
        order = np.lexsort((-v, u))
        self._eu, self._ev, self._eport = u[order], v[order], port[order]
        elink = link[order]
        self._ptr = np.zeros(n + 1, dtype=np.int64)
        self._ptr[1:] = np.cumsum(np.bincount(self._eu, minlength=n))
        rate = topo.link_rate_bps.astype(np.int64)[elink]
        self._erate = rate
        self._edelay_ns = (topo.link_delay_ps.astype(np.int64)[elink] + 500) // 1000  # the reference's clock is ns
        self._etx_ns = self.payload_bytes * 8_000_000_000 // rate
        self._rep = self._twin_representatives()
        self._trees: dict[int, _Tree] = {}  # keyed by representative host
        self._max_rtt_bdp: tuple[int, int] | None = None

    # ------------------------------------------------------------------ BFS
    def _tree(self, rep: int) -> _Tree:
        """The BFS from representative host ``rep`` (computed once)."""
        tree = self._trees.get(rep)
        if tree is None:
            tree = self._trees[rep] = self._bfs(rep)
        return tree

    def _twin_representatives(self) -> np.ndarray:
        """int64[n]: for each host, the lowest host of its group of twins (itself if it has none); -1 for switches.

        Twins have a single link, to the same node, of the same delay (ns, as the BFS sums them) and rate (which
        sets the BFS's tx time and bottleneck). A host with several links is alone."""
        h = self._hosts
        links = self._ptr[h + 1] - self._ptr[h]
        first = np.minimum(self._ptr[h], len(self._ev) - 1)  # a host without links is checked out earlier
        key = np.stack([self._ev[first], self._edelay_ns[first], self._erate[first]], axis=1)
        key[links != 1] = -1 - np.arange(int((links != 1).sum()))[:, None]  # a host of several links is alone
        _, index, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        rep = np.full(self._n, -1, dtype=np.int64)
        rep[h] = h[index[inverse.ravel()]]  # hosts are sorted, so the first of a group is its lowest
        return rep

    def _uplink(self, host):
        """Egress port of each single-link host on its link; ``^ 1`` gives the port facing it on the other end."""
        return self._eport[self._ptr[host]]

    def _bfs(self, dst: int) -> _Tree:
        """Level-synchronous BFS that reproduces third.cc's queue order exactly.

        The queue order within a level is (queue position of the first discovering node, then
        descending node id), which is the order of the first occurrences when the frontier's edge
        lists are concatenated in queue order. Only switches (and the destination) are enqueued.
        """
        n, eu, ev = self._n, self._eu, self._ev
        dist = np.full(n, -1, dtype=np.int32)
        qpos = np.full(n, -1, dtype=np.int64)  # position in the BFS queue; -1 = never processed
        delay = np.zeros(n, dtype=np.int64)
        tx = np.zeros(n, dtype=np.int64)
        bw = np.full(n, _NO_BW, dtype=np.int64)
        dist[dst], qpos[dst] = 0, 0
        queued, frontier, d = 1, np.array([dst], dtype=np.int64), 0
        while frontier.size:
            e = concat_ranges(self._ptr[frontier], self._ptr[frontier + 1] - self._ptr[frontier])
            e = e[dist[ev[e]] < 0]
            if e.size == 0:
                break
            _, first = np.unique(ev[e], return_index=True)
            e = e[np.sort(first)]  # the discovering edge of each new node, in discovery order
            new, parent = ev[e], eu[e]
            dist[new] = d + 1
            delay[new] = delay[parent] + self._edelay_ns[e]
            tx[new] = tx[parent] + self._etx_ns[e]
            bw[new] = np.minimum(bw[parent], self._erate[e])
            frontier = new[self._is_switch[new]]
            qpos[frontier] = np.arange(queued, queued + frontier.size)
            queued += frontier.size
            d += 1
        # node x lists neighbour y as next hop iff y was processed one level closer; in processing order.
        du, dv = dist[eu], dist[ev]
        sel = np.flatnonzero((du > 0) & (dv == du - 1) & (qpos[ev] >= 0))
        sel = sel[np.argsort(eu[sel] * n + qpos[ev[sel]], kind="stable")]
        nh_ptr = np.zeros(n + 1, dtype=np.int64)
        nh_ptr[1:] = np.cumsum(np.bincount(eu[sel], minlength=n))
        return _Tree(dist, nh_ptr, ev[sel], self._eport[sel], delay, tx, bw)

    # ------------------------------------------------------------------ per-node queries
    def _next(self, node: int, dst: int) -> tuple[np.ndarray, np.ndarray]:
        """(next-hop nodes, egress ports) of ``node`` towards host ``dst``: the representative's entry of sigma(node),
        mapped back through sigma and pi."""
        dst = self._check_host(dst, "dst")
        rep = int(self._rep[dst])
        t = self._tree(rep)
        x = int(_swap(node, dst, rep))
        nodes, ports = t.nh_node[t.nh_ptr[x] : t.nh_ptr[x + 1]], t.nh_port[t.nh_ptr[x] : t.nh_ptr[x + 1]]
        if rep != dst:
            up_d, up_r = self._uplink(dst), self._uplink(rep)
            nodes, ports = _swap(nodes, dst, rep), _swap(_swap(ports, up_d, up_r), up_d ^ 1, up_r ^ 1)
        return nodes, ports

    def next_hops(self, node: int, dst: int) -> np.ndarray:
        """Next-hop node ids of ``node`` towards host ``dst``, in the reference's table order."""
        return self._next(node, dst)[0]

    def next_hop_ports(self, node: int, dst: int) -> np.ndarray:
        """Egress port ids on ``node`` matching ``next_hops(node, dst)``."""
        return self._next(node, dst)[1]

    def hop_count(self, src: int, dst: int) -> int:
        """Links on a shortest path from ``src`` to host ``dst`` (-1 if unreachable)."""
        dst = self._check_host(dst, "dst")
        rep = int(self._rep[dst])
        return int(self._tree(rep).dist[_swap(int(src), dst, rep)])

    # ------------------------------------------------------------------ pair constants (third.cc)
    def _pair(self, src, dst):
        """(delay_ns, tx_ns, bw_bps) arrays for (node, host) pairs, from the BFS of each destination."""
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        src, dst = np.broadcast_arrays(src, dst)
        bad = np.flatnonzero((src < 0) | (src >= self._n))
        if bad.size:
            raise InputError(
                f"src[{bad[0]}]",
                f"node {src[bad[0]]} is out of range 0..{self._n - 1}",
                "pass node ids of this topology",
            )
        bad = np.flatnonzero((dst < 0) | (dst >= self._n))
        if bad.size == 0:
            bad = np.flatnonzero(self._is_switch[dst])
        if bad.size:
            raise InputError(f"dst[{bad[0]}]", f"node {dst[bad[0]]} is not a host", "pass host node ids as dst")
        out = np.empty((3, src.size), dtype=np.int64)
        # a group per tree, not per destination: MoE-8x7B's 64 destinations share 8 trees
        rep = self._rep[dst]
        trees = np.unique(rep)
        for r, rows in zip(trees.tolist(), _groups(rep, trees), strict=True):
            t, s = self._tree(r), _swap(src[rows], dst[rows], r)
            out[0, rows], out[1, rows], out[2, rows] = t.delay_ns[s], t.tx_ns[s], t.bw_bps[s]
        return out

    def pair_delay_ns(self, src, dst):
        """Sum of link delays (ns) on the path third.cc's BFS found first (pairDelay); ``src`` may be any node."""
        return _out(self._pair(src, dst)[0], src, dst)

    def pair_base_rtt_ns(self, src, dst):
        """third.cc's pairRtt: 2 x path delay + sum of per-hop payload serialisation times (ns)."""
        return _out(_rtt(self._pair(src, dst)), src, dst)

    def pair_bottleneck_bps(self, src, dst):
        """Minimum link rate (bit/s) on that path (pairBw); a host to itself gives int64 max."""
        return _out(self._pair(src, dst)[2], src, dst)

    def pair_bdp_bytes(self, src, dst):
        """third.cc's pairBdp = rtt_ns * bw / 1e9 / 8, integer."""
        p = self._pair(src, dst)
        return _out(_bdp(_rtt(p), p[2]), src, dst)

    def max_rtt_bdp(self) -> tuple[int, int]:
        """(maxRtt ns, maxBdp bytes) over all ordered host pairs, as third.cc prints them."""
        if self._max_rtt_bdp is None:
            max_rtt = max_bdp = 0
            h = self._hosts
            for d in np.unique(self._rep[h]).tolist():  # sigma permutes the hosts: a twin's pairs are the same set
                t = self._tree(d)
                rtt = 2 * t.delay_ns[h] + t.tx_ns[h]  # zero for the pair (d, d), hence zero BDP too
                max_rtt = max(max_rtt, int(rtt.max()))
                max_bdp = max(max_bdp, int(_bdp(rtt, t.bw_bps[h]).max()))
            self._max_rtt_bdp = (max_rtt, max_bdp)
        return self._max_rtt_bdp

    def standalone_fct_ns(self, src, dst, size):
        """The reference's ideal FCT: base_rtt + (size + ceil(size/payload) * 48) * 8e9 // bottleneck.

        Note the reference stores the byte total in a uint32, so it wraps for flows above ~4 GB; we
        do not reproduce that wrap.
        """
        p = self._pair(src, dst)
        return _out(self._standalone(_rtt(p), p[2], size), src, dst, size)

    def flow_constants(self, src, dst, size) -> "FlowConstants":
        """Per flow (arrays ``src``, ``dst``, ``size``), ``standalone_fct_ns``, ``pair_base_rtt_ns`` and
        ``pair_bdp_bytes`` from one pass over the destinations' trees (``prepare`` made two)."""
        p = self._pair(src, dst)
        rtt = _rtt(p)
        return FlowConstants(self._standalone(rtt, p[2], size), rtt, _bdp(rtt, p[2]))

    def _standalone(self, rtt: np.ndarray, bw_bps: np.ndarray, size) -> np.ndarray:
        """``standalone_fct_ns`` of pairs of base RTT ``rtt`` (ns) and bottleneck ``bw_bps``."""
        size_arr = np.atleast_1d(np.asarray(size, dtype=np.int64))
        if (size_arr < 0).any():
            raise InputError("standalone_fct_ns(size)", "flow size must not be negative", "pass sizes in bytes >= 0")
        size_arr = np.broadcast_to(size_arr, rtt.shape)
        total = size_arr + -(-size_arr // self.payload_bytes) * HEADER_BYTES
        if total.max(initial=0) < (2**63 - 1) // 8_000_000_000:
            return rtt + total * 8_000_000_000 // bw_bps
        # exact big-integer arithmetic for multi-GB flows
        return np.array(
            [int(r) + int(t) * 8_000_000_000 // int(b) for r, t, b in zip(rtt, total, bw_bps, strict=True)],
            dtype=np.int64,
        )

    # ------------------------------------------------------------------ per-flow paths
    def paths(self, flows: FlowTable) -> Paths:
        """Egress ports of every flow's data packets and ACKs, hashed exactly as the reference does."""
        src, dst = flows.src.astype(np.int64), flows.dst.astype(np.int64)
        for name, arr in (("src", src), ("dst", dst)):
            bad = np.flatnonzero((arr < 0) | (arr >= self._n))
            if bad.size == 0:
                bad = np.flatnonzero(self._is_switch[arr])
            if bad.size:
                raise InputError(
                    f"flows.{name}[{bad[0]}]",
                    f"node {arr[bad[0]]} is not a host",
                    f"flows must run between hosts (nodes {self._hosts.min()}..{self._hosts.max()} "
                    "that are not switches)",
                )
        same = np.flatnonzero(src == dst)
        if same.size:
            raise InputError(
                f"flows.dst[{same[0]}]",
                f"flow {same[0]} has src == dst == {src[same[0]]}",
                "give every flow two different hosts",
            )
        sport = flows.sport.astype(np.int64) & 0xFFFF
        dport = flows.dport.astype(np.int64) & 0xFFFF
        sip, dip = host_ip(src), host_ip(dst)
        d_off, d_ports = self._walk(src, dst, sip, dip, sport | (dport << 16))
        a_off, a_ports = self._walk(dst, src, dip, sip, dport | (sport << 16))
        return Paths(d_off, d_ports, a_off, a_ports)

    def _walk(self, start, target, w0, w1, w2):
        """Follow the per-node next-hop tables from ``start`` to ``target`` for many packets at once.

        A packet to a twin walks the representative's tree from sigma(start); hashes are the same (sigma moves
        only hosts, which hash with one seed, and a twin has one next hop). Then pi on the ports."""
        n = self._n
        rep = self._rep[target]
        frm = _swap(start, target, rep)  # sigma(start)
        targets = np.unique(rep)
        trees = {t: self._tree(t) for t in targets.tolist()}
        hops = np.empty(frm.size, dtype=np.int64)
        for t, rows in zip(targets.tolist(), _groups(rep, targets), strict=True):
            hops[rows] = trees[t].dist[frm[rows]]
        offset = np.zeros(frm.size + 1, dtype=np.int64)
        offset[1:] = np.cumsum(hops)
        ports = np.empty(int(offset[-1]), dtype=np.int64)
        # Stack the trees' CSR tables in chunks so one vectorised walk serves many destinations
        # while the stacked copy stays small (about 4M entries).
        chunk = max(1, (1 << 22) // (n + 1))
        for c0 in range(0, targets.size, chunk):
            group = targets[c0 : c0 + chunk].tolist()
            slot = np.full(n, -1, dtype=np.int64)
            slot[group] = np.arange(len(group))
            sizes = np.array([trees[t].nh_node.size for t in group])
            base = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            ptr = np.stack([trees[t].nh_ptr + b for t, b in zip(group, base, strict=True)])
            nh_node = np.concatenate([trees[t].nh_node for t in group])
            nh_port = np.concatenate([trees[t].nh_port for t in group])
            idx = np.flatnonzero(slot[rep] >= 0)
            cur, sl = frm[idx].copy(), slot[rep[idx]]
            for step in range(int(hops[idx].max(initial=0))):
                live = np.flatnonzero(hops[idx] > step)
                c, s = cur[live], sl[live]
                lo = ptr[s, c]
                cnt = ptr[s, c + 1] - lo
                multi = np.flatnonzero(cnt > 1)
                if multi.size:
                    f = idx[live[multi]]
                    node = c[multi]
                    seed = np.where(self._is_switch[node], node, self.host_hash_seed)
                    h = _murmur3_words(w0[f], w1[f], w2[f], seed)
                    lo[multi] += (h % cnt[multi].astype(np.uint64)).astype(np.int64)
                ports[offset[idx[live]] + step] = nh_port[lo]
                cur[live] = nh_node[lo]
            assert np.array_equal(cur, rep[idx]), "walk did not end at the destination"
        # pi: a walk in the representative's tree ends on the port facing it (hosts are never transited), and it
        # starts on the twin's own link only when the packet leaves the representative (sigma(start) is the twin).
        twin = np.flatnonzero(rep != target)
        ports[offset[twin + 1] - 1] = self._uplink(target[twin]) ^ 1
        lead = twin[start[twin] == rep[twin]]
        ports[offset[lead]] = self._uplink(start[lead])
        return offset, ports

    def _check_host(self, node, name: str) -> int:
        node = int(node)
        if not 0 <= node < self._n or self._is_switch[node]:
            raise InputError(f"Routes.{name}", f"node {node} is not a host", "pass a host node id")
        return node


def _swap(x, a, b):
    """``x`` with values ``a`` and ``b`` exchanged (elementwise; ``a``, ``b`` may be arrays)."""
    return np.where(x == a, b, np.where(x == b, a, x))


def _groups(keys: np.ndarray, distinct: np.ndarray) -> list[np.ndarray]:
    """For each value of ``distinct`` (the sorted distinct ``keys``), the indices where ``keys`` holds it: one sort,
    not one pass over ``keys`` per value (a million flows to 1024 hosts took 10 s that way)."""
    order = np.argsort(keys, kind="stable")
    return np.split(order, np.searchsorted(keys[order], distinct[1:]))


def _rtt(pair: np.ndarray) -> np.ndarray:
    """third.cc's pairRtt (ns) of a ``Routes._pair`` table: 2 x path delay + the hops' serialisation times."""
    return 2 * pair[0] + pair[1]


def _bdp(rtt_ns: np.ndarray, bw_bps: np.ndarray) -> np.ndarray:
    """rtt * bw // 8e9 without int64 overflow: split bw into multiples of 8e9 and a remainder."""
    q, r = np.divmod(bw_bps, 8_000_000_000)
    return rtt_ns * q + rtt_ns * r // 8_000_000_000


def _out(values: np.ndarray, *inputs):
    """Return a Python int when every input was a scalar, else the array."""
    return int(values[0]) if all(np.ndim(x) == 0 for x in inputs) else values
