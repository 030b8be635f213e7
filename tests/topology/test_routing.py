"""Routing against a literal transcription of HPCC's third.cc, the shipped fct.txt files, and murmur3 vectors."""

import struct
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology import (
    HOST_HASH_SEED,
    Routes,
    Topology,
    fat_tree,
    host_ip,
    leaf_spine,
    murmur3_32,
    rail_optimized,
    read_topology,
    star,
)
from wormhole_lab.topology.routing import _murmur3_words
from wormhole_lab.workload.flows import make_flows

SHARED = Path(__file__).parents[2] / ".." / "shared"
REF = SHARED / "reference"
G = 1_000_000_000


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared reference data not found at {path}")
    return path


# ---------------------------------------------------------------- reference transcriptions
def third_cc_route(topo: Topology, dst: int, payload: int = 1000):
    """CalculateRoute(dst) of third.cc, line by line: neighbours visited in descending node id."""
    nbr = defaultdict(dict)
    for a, b, rate, delay in zip(topo.link_a, topo.link_b, topo.link_rate_bps, topo.link_delay_ps, strict=True):
        nbr[int(a)][int(b)] = nbr[int(b)][int(a)] = (int(delay) // 1000, int(rate))
    q, dis = [dst], {dst: 0}
    delay, tx, bw = {dst: 0}, {dst: 0}, {dst: 2**64 - 1}
    next_hop = defaultdict(list)
    i = 0
    while i < len(q):
        now = q[i]
        d = dis[now]
        for nxt in sorted(nbr[now], reverse=True):
            link_delay, rate = nbr[now][nxt]
            if nxt not in dis:
                dis[nxt] = d + 1
                delay[nxt] = delay[now] + link_delay
                tx[nxt] = tx[now] + payload * 1_000_000_000 * 8 // rate
                bw[nxt] = min(bw[now], rate)
                if topo.is_switch[nxt]:
                    q.append(nxt)
            if d + 1 == dis[nxt]:
                next_hop[nxt].append(now)
        i += 1
    return next_hop, delay, tx, bw


def scalar_walk(routes: Routes, src, dst, key_src, key_dst, sport, dport):
    """Hop-by-hop port choice as SwitchNode::GetOutDev / RdmaHw::GetNicIdxOfQp do it."""
    key = struct.pack("<III", host_ip(key_src), host_ip(key_dst), sport | dport << 16)
    node, ports = src, []
    while node != dst:
        nh, pp = routes.next_hops(node, dst), routes.next_hop_ports(node, dst)
        seed = node if routes.topo.is_switch[node] else routes.host_hash_seed
        i = murmur3_32(key, seed) % len(nh)
        ports.append(int(pp[i]))
        node = int(nh[i])
    return ports


def assert_chain(topo, ports, src, dst):
    owner, peer = topo.port_node(), topo.port_peer_node()
    assert len(ports) > 0 and owner[ports[0]] == src
    for p, q in zip(ports[:-1], ports[1:], strict=True):
        assert peer[p] == owner[q]
    assert peer[ports[-1]] == dst


def random_topology(rng, n_hosts, n_switches, extra):
    """Connected switch fabric (random tree + extra edges), each host on 1-2 switches."""
    sw = list(range(n_hosts, n_hosts + n_switches))
    edges = {(sw[i], sw[int(rng.integers(0, i))]) for i in range(1, n_switches)}
    while len(edges) < n_switches - 1 + extra:
        a, b = rng.choice(sw, 2, replace=False)
        if (a, b) not in edges and (b, a) not in edges:
            edges.add((int(a), int(b)))
    for h in range(n_hosts):
        for s in rng.choice(sw, int(rng.integers(1, 3)), replace=False):
            edges.add((h, int(s)))
    edges = sorted(edges, key=lambda e: rng.random())
    m = len(edges)
    is_switch = np.zeros(n_hosts + n_switches, dtype=bool)
    is_switch[n_hosts:] = True
    return Topology(
        is_switch=is_switch,
        link_a=np.array([e[0] for e in edges], dtype=np.int64),
        link_b=np.array([e[1] for e in edges], dtype=np.int64),
        link_rate_bps=rng.choice([25 * G, 100 * G, 400 * G], m).astype(np.int64),
        link_delay_ps=rng.choice([1_000_000, 500_000, 25_000], m).astype(np.int64),
        link_error_rate=np.zeros(m),
    )


# ---------------------------------------------------------------- hashing
def test_murmur3_vectors():
    assert murmur3_32(b"", 0) == 0
    assert murmur3_32(b"", 1) == 0x514E28B7
    assert murmur3_32(b"hello", 0) == 0x248BFA47
    assert murmur3_32(b"", 0xFFFFFFFF) == 0x81F16F39
    assert murmur3_32(b"\x21\x43\x65\x87", 0) == 0xF55B516B
    assert murmur3_32(b"\x21\x43\x65", 0) == 0x7E4A8634
    assert murmur3_32(b"Hello, world!", 1234) == 0xFAF6CDB3


def test_vectorised_murmur3_matches_scalar():
    rng = np.random.default_rng(1)
    w = rng.integers(0, 2**32, size=(3, 200), dtype=np.uint64)
    seed = rng.integers(0, 2**32, size=200, dtype=np.uint64)
    got = _murmur3_words(w[0], w[1], w[2], seed)
    want = [murmur3_32(struct.pack("<III", *map(int, w[:, i])), int(seed[i])) for i in range(200)]
    assert got.tolist() == want


def test_host_ip():
    assert host_ip(0) == 0x0B000001 and host_ip(1) == 0x0B000101 and host_ip(257) == 0x0B010101
    assert host_ip(np.array([0, 320])).tolist() == [0x0B000001, 0x0B014001]


# ---------------------------------------------------------------- BFS semantics
def compare_with_third_cc(topo, dsts, payload=1000):
    r = Routes(topo, payload_bytes=payload)
    hosts = topo.hosts
    for dst in dsts:
        next_hop, delay, tx, bw = third_cc_route(topo, int(dst), payload)
        for node in range(topo.n_nodes):
            assert r.next_hops(node, int(dst)).tolist() == next_hop.get(node, []), (node, dst)
            if node != dst:  # third.cc keeps these tables for switches too
                assert r.pair_delay_ns(node, int(dst)) == delay[node]
                assert r.pair_bottleneck_bps(node, int(dst)) == bw[node]
        for src in hosts.tolist():
            if src == dst:
                continue
            assert r.pair_delay_ns(src, int(dst)) == delay[src]
            assert r.pair_base_rtt_ns(src, int(dst)) == 2 * delay[src] + tx[src]
            assert r.pair_bottleneck_bps(src, int(dst)) == bw[src]


def test_bfs_matches_third_cc_on_fat_perm64():
    topo = read_topology(need(REF / "bench" / "fat_perm64" / "topology.txt"))
    compare_with_third_cc(topo, [0, 17, 199, 319])


@pytest.mark.parametrize("seed", range(6))
def test_bfs_matches_third_cc_on_random_fabrics(seed):
    rng = np.random.default_rng(seed)
    topo = random_topology(rng, n_hosts=12, n_switches=9, extra=6)
    compare_with_third_cc(topo, topo.hosts, payload=int(rng.choice([1000, 4000])))


def test_next_hop_order_on_fat_tree():
    t = fat_tree(4)
    r = Routes(t)
    # BFS from host 0 queues edge 16, aggs 25, 24, cores 35, 34, 33, 32 (descending ids at each step); pod 2's
    # agg 29 is found via core 35 before agg 28 via core 33, so edge 20 (pod 2) lists 29 first.
    assert r.next_hops(20, 0).tolist() == [29, 28]
    assert r.next_hops(26, 0).tolist() == [33, 32]
    assert r.next_hops(2, 0).tolist() == [17]  # a host has one next hop: its edge switch


# ---------------------------------------------------------------- pair constants
def test_s1_standalone_fct():
    topo = read_topology(need(REF / "validation" / "s1_single_flow" / "topology.txt"))
    r = Routes(topo)
    assert r.pair_base_rtt_ns(0, 1) == 4160
    assert r.pair_bottleneck_bps(0, 1) == 100 * G
    assert r.standalone_fct_ns(0, 1, 10_000_000) == 842560
    assert r.max_rtt_bdp() == (4160, 52000)
    assert r.pair_bdp_bytes(0, 1) == 52000


@pytest.mark.parametrize("case", ["s1_single_flow", "s2_incast8"])
def test_standalone_column_of_shipped_fct_files(case):
    folder = need(REF / "validation" / case)
    r = Routes(read_topology(folder / "topology.txt"))
    rows = [line.split() for line in (folder / "fct_dcqcn.txt").read_text().splitlines() if line.strip()]
    src = np.array([(int(x[0], 16) >> 8) & 0xFFFF for x in rows])
    dst = np.array([(int(x[1], 16) >> 8) & 0xFFFF for x in rows])
    size = np.array([int(x[4]) for x in rows])
    want = [int(x[7]) for x in rows]
    assert r.standalone_fct_ns(src, dst, size).tolist() == want


def test_standalone_fct_edge_cases():
    r = Routes(star(2))
    assert r.standalone_fct_ns(0, 1, 0) == 4160
    assert r.standalone_fct_ns(0, 1, 1) == 4160 + (1 + 48) * 8_000_000_000 // (100 * G)
    big = 10**10  # beyond int64 for the naive product; exact big-int path
    assert r.standalone_fct_ns(0, 1, big) == 4160 + (big + 10**7 * 48) * 8_000_000_000 // (100 * G)
    with pytest.raises(InputError):
        r.standalone_fct_ns(0, 1, -1)
    with pytest.raises(InputError):
        r.pair_base_rtt_ns(0, 2)  # node 2 is the switch


def test_flow_constants_are_the_three_pair_calls_at_once():
    topo = fat_tree(4)
    r = Routes(topo)
    hosts = topo.hosts
    src, dst = hosts[[0, 1, 5, 9, 15]], hosts[[3, 12, 4, 0, 14]]
    size = np.array([0, 1, 10**6, 10**10, 4096])  # 10**10 takes the exact big-integer path
    got = r.flow_constants(src, dst, size)
    assert got.standalone_ns.tolist() == r.standalone_fct_ns(src, dst, size).tolist()
    assert got.base_rtt_ns.tolist() == r.pair_base_rtt_ns(src, dst).tolist()
    assert got.bdp_bytes.tolist() == r.pair_bdp_bytes(src, dst).tolist()
    assert len(set(got.base_rtt_ns.tolist())) > 1  # pairs of other distances
    with pytest.raises(InputError, match="negative"):
        r.flow_constants(src, dst, -size)


def test_max_rtt_bdp_fat_perm64_is_fast():
    path = need(REF / "bench" / "fat_perm64" / "topology.txt")
    t0 = time.perf_counter()
    r = Routes(read_topology(path))
    result = r.max_rtt_bdp()
    elapsed = time.perf_counter() - t0
    # 6 hops: 2 x 6 us + 2 x 80 ns (100G) + 4 x 20 ns (400G); BDP at the 100G bottleneck
    assert result == (12240, 153000)
    assert elapsed < 1.0, f"max_rtt_bdp took {elapsed:.2f} s"


def two_leaves(make):
    """Two leaves (6, 7) under one spine (8); host 0's link is slower and longer, host 1's delay differs from its
    rack's by 0.4 ns (the BFS sums whole ns, so it is still a twin), host 5 ("multihomed") also reaches leaf 6."""
    is_switch = np.array([False] * 6 + [True] * 3)
    a = [0, 1, 2, 3, 4, 5, 6, 7] + ([5] if make == "multihomed" else [])
    b = [6, 6, 6, 7, 7, 7, 8, 8] + ([6] if make == "multihomed" else [])
    rate = [25 * G] + [100 * G] * (len(a) - 1)
    delay = [3_000_000, 1_000_400] + [1_000_000] * (len(a) - 2)
    return Topology(is_switch, np.array(a), np.array(b), np.array(rate), np.array(delay), np.zeros(len(a)))


def _pair_constants(r: Routes, dst: int) -> tuple:
    """Every host's base RTT and BDP towards ``dst``, sorted: what a BFS from ``dst`` contributes to the maxima."""
    h = r.topo.hosts
    return tuple(sorted(zip(r.pair_base_rtt_ns(h, dst).tolist(), r.pair_bdp_bytes(h, dst).tolist(), strict=True)))


@pytest.mark.parametrize(
    "make, reps",
    [("uneven", [0, 1, 1, 3, 3, 3]), ("multihomed", [0, 1, 1, 3, 3, 5])],
)
def test_twins_are_single_link_hosts_with_equal_links(make, reps):
    topo = two_leaves(make)
    assert Routes(topo)._rep[topo.hosts].tolist() == reps


@pytest.mark.parametrize("make", ["fat_tree", "uneven", "multihomed"])
def test_max_rtt_bdp_from_one_host_per_rack_equals_all_pairs(make):
    """Hosts of one rack with equal links share their BFS's pair constants; hosts whose links differ, or that
    have two links, are searched from themselves."""
    topo = fat_tree(4) if make == "fat_tree" else two_leaves(make)
    r = Routes(topo)
    every = {_pair_constants(r, d) for d in topo.hosts.tolist()}
    reps = np.unique(r._rep[topo.hosts])
    searched = {_pair_constants(r, d) for d in reps.tolist()}
    assert searched == every and len(reps) < len(topo.hosts)
    rtt, bdp = zip(*(pair for constants in every for pair in constants), strict=True)
    assert r.max_rtt_bdp() == (max(rtt), max(bdp))


def random_racks(seed: int) -> Topology:
    """A random fabric whose host links are all 100G, 1 us, so single-link hosts on one switch are twins."""
    topo = random_topology(np.random.default_rng(seed), n_hosts=16, n_switches=5, extra=3)
    host_link = ~topo.is_switch[topo.link_a] | ~topo.is_switch[topo.link_b]
    rate = np.where(host_link, 100 * G, topo.link_rate_bps)
    return replace(topo, link_rate_bps=rate, link_delay_ps=np.where(host_link, 1_000_000, topo.link_delay_ps))


def per_host_routes(topo: Topology) -> Routes:
    """Routes with every host its own representative: one BFS per destination host, no tree shared."""
    r = Routes(topo)
    r._rep[topo.hosts] = topo.hosts
    return r


@pytest.mark.parametrize(
    "topo, n_trees",
    [
        (rail_optimized(4, 4), 4),  # one tree per rail switch
        (fat_tree(4), 8),  # one per edge switch
        (leaf_spine(3, 4, 2), 3),
        (rail_optimized(2, 4, n_spines=3, nvlink=True), 8),  # every GPU has two links: no twins
        (two_leaves("multihomed"), 4),
        *[(random_racks(seed), None) for seed in range(4)],
    ],
    ids=["rail_optimized", "fat_tree", "leaf_spine", "nvlink", "multihomed"] + [f"random{seed}" for seed in range(4)],
)
def test_shared_trees_equal_a_bfs_per_host(topo, n_trees):
    """Next hops, ports, hop counts, pair constants and paths read through a twin's tree are those of its own BFS."""
    shared, own = Routes(topo), per_host_routes(topo)
    hosts, nodes = topo.hosts.tolist(), range(topo.n_nodes)
    for d in hosts:
        for x in nodes:
            assert shared.next_hops(x, d).tolist() == own.next_hops(x, d).tolist(), (x, d)
            assert shared.next_hop_ports(x, d).tolist() == own.next_hop_ports(x, d).tolist(), (x, d)
            assert shared.hop_count(x, d) == own.hop_count(x, d), (x, d)
    src, dst = np.repeat(np.arange(topo.n_nodes), len(hosts)), np.tile(hosts, topo.n_nodes)
    for table in ("pair_delay_ns", "pair_base_rtt_ns", "pair_bottleneck_bps", "pair_bdp_bytes"):
        assert getattr(shared, table)(src, dst).tolist() == getattr(own, table)(src, dst).tolist(), table
    size = np.random.default_rng(0).integers(0, 10**7, src.size)
    assert shared.standalone_fct_ns(src, dst, size).tolist() == own.standalone_fct_ns(src, dst, size).tolist()
    flows = all_pairs_flows(hosts, repeat=2)
    got, want = shared.paths(flows), own.paths(flows)
    for field in ("data_offset", "data_ports", "ack_offset", "ack_ports"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert shared.max_rtt_bdp() == own.max_rtt_bdp()
    groups = len(np.unique(shared._rep[topo.hosts]))
    assert len(shared._trees) == groups and len(own._trees) == len(hosts)
    assert n_trees is None or groups == n_trees


def test_8_trees_for_1024_gpus():
    """Routing every flow of a 1024-GPU rail-optimised cluster computes one tree per rail, not one per GPU."""
    topo = rail_optimized(128, 8)
    hosts = topo.hosts
    flows = make_flows(hosts, np.roll(hosts, 8), 1000, 0)  # a ring over servers, rail by rail
    r = Routes(topo)
    paths = r.paths(flows)
    r.pair_base_rtt_ns(flows.src, flows.dst)
    r.max_rtt_bdp()
    assert sorted(r._trees) == list(range(8))
    for i in (0, 1, 9, 1023):
        assert_chain(topo, paths.data(i), int(flows.src[i]), int(flows.dst[i]))


# ---------------------------------------------------------------- paths
def all_pairs_flows(hosts, repeat=1):
    src = [s for s in hosts for d in hosts if s != d] * repeat
    dst = [d for s in hosts for d in hosts if s != d] * repeat
    return make_flows(src, dst, size=1000, start_ps=0)


@pytest.mark.parametrize(
    "topo", [fat_tree(4), leaf_spine(3, 4, 2), rail_optimized(2, 4, n_spines=3, nvlink=True)], ids=str
)
def test_paths_are_port_chains_and_match_scalar_walk(topo):
    flows = all_pairs_flows(topo.hosts.tolist(), repeat=2)
    r = Routes(topo)
    paths = r.paths(flows)
    assert len(paths) == len(flows)
    for i in range(len(flows)):
        s, d = int(flows.src[i]), int(flows.dst[i])
        sp, dp = int(flows.sport[i]), int(flows.dport[i])
        assert_chain(topo, paths.data(i), s, d)
        assert_chain(topo, paths.ack(i), d, s)
        assert len(paths.data(i)) == r.hop_count(s, d)
        assert paths.data(i).tolist() == scalar_walk(r, s, d, s, d, sp, dp)
        assert paths.ack(i).tolist() == scalar_walk(r, d, s, d, s, dp, sp)


def test_paths_on_fat_perm64_flows():
    folder = need(REF / "bench" / "fat_perm64")
    topo = read_topology(folder / "topology.txt")
    rows = [line.split() for line in (folder / "flow.txt").read_text().splitlines()[1:] if line.strip()]
    flows = make_flows(
        [int(x[0]) for x in rows],
        [int(x[1]) for x in rows],
        [int(x[4]) for x in rows],
        0,
        pg=[int(x[2]) for x in rows],
        dport=[int(x[3]) for x in rows],
    )
    r = Routes(topo)
    paths = r.paths(flows)
    for i in range(len(flows)):
        s, d = int(flows.src[i]), int(flows.dst[i])
        assert_chain(topo, paths.data(i), s, d)
        assert_chain(topo, paths.ack(i), d, s)


def test_ecmp_uses_every_core():
    t = fat_tree(4)
    hosts = t.hosts.tolist()
    src = [s for s in hosts for d in hosts if s // 4 != d // 4]  # inter-pod pairs only
    dst = [d for s in hosts for d in hosts if s // 4 != d // 4]
    flows = make_flows(src * 2, dst * 2, 1000, 0)
    paths = Routes(t).paths(flows)
    peer = t.port_peer_node()
    lo, hi = t.meta["core_range"]
    for ports in (paths.data_ports, paths.ack_ports):
        cores = np.bincount(peer[ports], minlength=t.n_nodes)[lo:hi]
        assert (cores > 0).all()
        assert cores.max() < 2 * cores.mean()  # roughly even spread


def test_dual_homed_host_hashes_on_its_own_next_hops():
    # host 0 on switches 2 and 3, host 1 on switch 4, both 2 and 3 linked to 4
    topo = Topology(
        is_switch=np.array([False, False, True, True, True]),
        link_a=np.array([0, 0, 1, 2, 3]),
        link_b=np.array([2, 3, 4, 4, 4]),
        link_rate_bps=np.full(5, 100 * G),
        link_delay_ps=np.full(5, 1_000_000),
        link_error_rate=np.zeros(5),
    )
    flows = make_flows([0] * 64, [1] * 64, 1000, 0)
    for seed in (HOST_HASH_SEED, 0):
        r = Routes(topo, host_hash_seed=seed)
        assert r.next_hops(0, 1).tolist() == [3, 2]  # BFS from 1 reaches 3 before 2
        paths = r.paths(flows)
        first = paths.data_ports[paths.data_offset[:-1]]
        assert set(first.tolist()) == {0, 2}  # ports of links 0-2 and 0-3 on host 0
        for i in range(len(flows)):
            key = struct.pack("<III", host_ip(0), host_ip(1), int(flows.sport[i]) | 100 << 16)
            assert first[i] == [2, 0][murmur3_32(key, seed) % 2]


def test_paths_reject_bad_flows():
    r = Routes(star(3))
    with pytest.raises(InputError, match="not a host"):
        r.paths(make_flows([0], [3], 1000, 0))
    with pytest.raises(InputError, match="src == dst"):
        r.paths(make_flows([1], [1], 1000, 0))
    with pytest.raises(InputError, match="not a host"):
        r.next_hops(0, 3)
