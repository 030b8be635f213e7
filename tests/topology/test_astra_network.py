"""ASTRA-sim network YAML: reading and checking it, ASTRA-sim's message times, and the Topology built from it."""

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology import Routes
from wormhole_lab.topology.astra_network import AstraDim, AstraNetwork, astra_topology, read_astra_network

CONFIGS = Path(__file__).parents[2] / ".." / "shared" / "workloads" / "chakra" / "configs"
SAMPLES = {
    "Ring_4npus.yml": ("Ring", 4, 50.0, 500.0),
    "Ring_8npus.yml": ("Ring", 8, 50.0, 500.0),
    "Ring_16npus.yml": ("Ring", 16, 50.0, 500.0),
    "HGX-H100-validated.yml": ("Switch", 8, 400.0, 936.25),
}
GIB_BITS = 8 * 2**30  # bit/s of 1 ASTRA-sim "GB/s"


def net(*dims) -> AstraNetwork:
    return AstraNetwork(tuple(AstraDim(*d) for d in dims))


@pytest.mark.parametrize("name", SAMPLES)
def test_reads_samples(name):
    path = CONFIGS / name
    network = read_astra_network(path)
    assert network.dims == (AstraDim(*SAMPLES[name]),) and network.path == path
    assert network.n_npus == SAMPLES[name][1]


def test_bytes_per_ns_uses_gib():
    assert AstraDim("Ring", 8, 50.0, 500.0).bytes_per_ns == pytest.approx(53.6870912, abs=1e-12)
    assert AstraDim("Switch", 4, 12.5, 500.0).bytes_per_ns == pytest.approx(13.4217728, abs=1e-12)


def test_message_ns_hand_values():
    ring8 = read_astra_network(CONFIGS / "Ring_8npus.yml")
    assert ring8.message_ns(0, 1, 32768) == 1110  # floor(500 + 610.35), tests/rt_template's value
    assert ring8.message_ns(0, 4, 32768) == 2610  # 4 hops either way round
    assert ring8.message_ns(5, 0, 32768) == 2110  # 3 hops the short way
    assert net(("Switch", 4, 12.5, 500.0)).message_ns(0, 1, 65536) == 5882  # floor(2 * 500 + 4882.8125)
    hgx = read_astra_network(CONFIGS / "HGX-H100-validated.yml")
    assert hgx.message_ns(0, 1, 32768) == 1948  # floor(2 * 936.25 + 76.29)
    assert net(("FullyConnected", 4, 50.0, 500.0)).message_ns(3, 1, 32768) == 1110


def test_coords_and_hops():
    network = net(("Ring", 2, 50, 500), ("Ring", 8, 50, 500), ("Ring", 4, 50, 500))
    assert network.coords(47) == (1, 7, 2)  # MultiDimTopology::translate_address's own example
    assert [network.coords(i) for i in (0, 1, 2, 16)] == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    ring8 = net(("Ring", 8, 50, 500))
    assert [ring8.hops(0, d) for d in range(1, 8)] == [1, 2, 3, 4, 3, 2, 1]
    assert ring8.hops(6, 1) == 3
    assert net(("Ring", 2, 50, 500)).hops(1, 0) == 1
    assert net(("FullyConnected", 5, 50, 500)).hops(0, 3) == 1
    # Only the lowest differing dimension counts: 0 -> 5 differs in both digits of [Ring 4, Switch 2].
    two = net(("Ring", 4, 50.0, 500.0), ("Switch", 2, 100.0, 100.0))
    assert two.hops(0, 4) == 2 and two.hops(0, 6) == 2 and two.hops(0, 5) == 1 and two.hops(0, 7) == 1
    assert two.message_ns(0, 4, 1000) == int(2 * 100.0 + 1000 / (100 * 2**30 / 1e9))
    assert two.message_ns(0, 5, 1000) == int(500.0 + 1000 / (50 * 2**30 / 1e9))


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda n: n.hops(2, 2), "same NPU"),
        (lambda n: n.hops(0, 8), "not an NPU id"),
        (lambda n: n.coords(-1), "not an NPU id"),
        (lambda n: n.message_ns(0, 1, 0), "nbytes"),
        (lambda n: n.message_ns(0, 1, 1.5), "nbytes"),
    ],
)
def test_bad_arguments(call, word):
    with pytest.raises(InputError, match=word):
        call(net(("Ring", 8, 50, 500)))


@pytest.mark.parametrize(
    ("dim", "where"),
    [
        (("Torus", 8, 50, 500), "AstraDim(topology='Torus')"),
        (("Ring", 1, 50, 500), "AstraDim(npus=1)"),
        (("Ring", 8, 0, 500), "AstraDim(bandwidth_GBps=0)"),
        (("Ring", 8, 50, -1), "AstraDim(latency_ns=-1)"),
        (("Ring", 8, math.nan, 500), "AstraDim(bandwidth_GBps=nan)"),
    ],
)
def test_astra_dim_checks_its_values(dim, where):
    with pytest.raises(InputError) as exc:
        AstraDim(*dim)
    assert exc.value.where == where and exc.value.fix


# ----------------------------------------------------------------------------------------------- topology shape


def test_switch_is_a_star():
    t = astra_topology(net(("Switch", 4, 12.5, 500.0)))
    assert (t.n_nodes, t.n_links) == (5, 4) and list(t.is_switch) == [False] * 4 + [True]
    assert list(t.link_a) == [0, 1, 2, 3] and (t.link_b == 4).all()
    assert (t.link_rate_bps == round(12.5 * GIB_BITS)).all() and (t.link_delay_ps == 500_000).all()
    assert t.name == "astra(Switch 4)"
    assert t.meta["builder"] == "astra_network" and t.meta["npus"] == 4 and t.meta["wire_per_payload"] == 1.0
    assert t.meta["dims"] == [{"topology": "Switch", "npus": 4, "bandwidth_GBps": 12.5, "latency_ns": 500.0}]


def test_hgx_delay_keeps_quarter_ns():
    t = astra_topology(read_astra_network(CONFIGS / "HGX-H100-validated.yml"))
    assert (t.link_delay_ps == 936_250).all() and (t.link_rate_bps == 400 * GIB_BITS).all()
    assert t.meta["path"].endswith("HGX-H100-validated.yml")


def test_ring_has_routers():
    t = astra_topology(read_astra_network(CONFIGS / "Ring_8npus.yml"))
    rate = 50 * GIB_BITS
    assert (t.n_nodes, t.n_links) == (16, 16) and t.is_switch.sum() == 8 and not t.is_switch[:8].any()
    # host i -- router 8+i, no delay, as fast as the router's two ring links together
    assert list(t.link_a[:8]) == list(range(8)) and list(t.link_b[:8]) == list(range(8, 16))
    assert (t.link_delay_ps[:8] == 0).all() and (t.link_rate_bps[:8] == rate).all()
    ring = sorted(zip(t.link_a[8:].tolist(), t.link_b[8:].tolist(), strict=True))
    assert ring == sorted((8 + k, 8 + (k + 1) % 8) for k in range(8))
    assert (t.link_rate_bps[8:] == rate).all() and (t.link_delay_ps[8:] == 500_000).all()
    assert t.meta["router_range"] == (8, 16)


def test_ring_of_two_has_one_link():
    t = astra_topology(net(("Ring", 2, 50.0, 500.0)))
    assert (t.n_nodes, t.n_links) == (4, 3)
    assert (t.link_a[2], t.link_b[2]) == (2, 3) and t.link_rate_bps[0] == 50 * GIB_BITS


def test_fully_connected():
    t = astra_topology(net(("FullyConnected", 4, 25.0, 100.0)))
    assert (t.n_nodes, t.n_links) == (8, 4 + 6)
    pairs = sorted(zip(t.link_a[4:].tolist(), t.link_b[4:].tolist(), strict=True))
    assert pairs == [(4 + i, 4 + j) for i, j in combinations(range(4), 2)]
    assert (t.link_rate_bps[:4] == 25 * GIB_BITS).all() and (t.link_delay_ps[4:] == 100_000).all()


def test_two_dimensions():
    t = astra_topology(net(("Ring", 4, 50.0, 500.0), ("Switch", 2, 100.0, 100.0)))
    # 8 hosts, 8 routers, one switch per pair {i, i+4}; 8 host links, 2 rings of 4, 4 switches x 2 members
    assert (t.n_nodes, t.n_links) == (20, 24) and t.name == "astra(Ring 4, Switch 2)"
    assert (t.link_rate_bps[:8] == 100 * GIB_BITS).all()
    ring = t.link_rate_bps[8:16] == 50 * GIB_BITS
    assert ring.all() and (t.link_delay_ps[8:16] == 500_000).all()
    switch = list(zip(t.link_a[16:].tolist(), t.link_b[16:].tolist(), strict=True))
    assert switch == [(8 + i + 4 * m, 16 + i) for i in range(4) for m in range(2)]
    assert (t.link_rate_bps[16:] == 100 * GIB_BITS).all() and (t.link_delay_ps[16:] == 100_000).all()
    assert t.meta["switch_range"] == (16, 20)


def test_wire_per_payload_scales_every_link():
    network = net(("Ring", 4, 50.0, 500.0))
    raw, wire = astra_topology(network), astra_topology(network, wire_per_payload=1048 / 1000)
    assert (wire.link_rate_bps == np.round(raw.link_rate_bps * 1.048)).all()
    assert wire.meta["wire_per_payload"] == 1.048


@pytest.mark.parametrize("bad", [0.5, 0, math.nan, math.inf, "x", True])
def test_wire_per_payload_checked(bad):
    with pytest.raises(InputError, match="wire_per_payload"):
        astra_topology(net(("Ring", 4, 50.0, 500.0)), wire_per_payload=bad)


def test_refuses_too_large():
    with pytest.raises(InputError, match="nodes") as exc:
        astra_topology(net(("Ring", 10_000, 50, 500), ("Switch", 10_000, 50, 500)))
    assert "npus_count" in exc.value.fix
    with pytest.raises(InputError, match="1 Pbit/s"):  # a link: 100000 GB/s x 1.2
        astra_topology(net(("Switch", 4, 100_000, 500)), wire_per_payload=1.2)


# ----------------------------------------------------------------------------------------------- routing


ROUTED = [read_astra_network(CONFIGS / name) for name in SAMPLES] + [
    net(("Ring", 2, 50.0, 500.0)),
    net(("FullyConnected", 5, 50.0, 300.0)),
    net(("Ring", 4, 50.0, 500.0), ("Switch", 2, 100.0, 100.0)),
    net(("FullyConnected", 4, 50.0, 200.0), ("Ring", 4, 25.0, 700.0)),
    net(("Switch", 2, 100.0, 50.0), ("Ring", 5, 50.0, 500.0), ("FullyConnected", 3, 25.0, 1000.0)),
]


@pytest.mark.parametrize("network", ROUTED, ids=lambda n: ", ".join(f"{d.topology} {d.npus}" for d in n.dims))
def test_routes_cross_astra_hops_within_one_dimension(network):
    """Every shortest path between NPUs that differ in one digit has ASTRA-sim's hop count and latency, and
    every ECMP next hop stays in their group (no detour through another dimension)."""
    topo = astra_topology(network)
    routes = Routes(topo)
    star = topo.meta["router_range"][0] == topo.meta["router_range"][1]
    n = network.n_npus
    checked = 0
    for src, dst in combinations(range(n), 2):
        a, b = network.coords(src), network.coords(dst)
        differ = [d for d in range(len(a)) if a[d] != b[d]]
        if len(differ) != 1:
            continue
        dim = network.dims[differ[0]]
        hops = network.hops(src, dst)
        assert routes.hop_count(src, dst) == hops + (0 if star else 2)  # + the two 0-delay host links
        if dim.latency_ns == int(dim.latency_ns):  # the routes' pair delay is in whole ns
            assert routes.pair_delay_ns(src, dst) == hops * dim.latency_ns
        frontier = {src}
        while frontier:
            nxt = {int(x) for node in frontier for x in routes.next_hops(node, dst)}
            for x in nxt:
                if not star and n <= x < 2 * n:
                    c = network.coords(x - n)
                    assert all(c[d] == a[d] for d in range(len(a)) if d != differ[0]), (src, dst, x)
            frontier = {x for x in nxt if x != dst}
        checked += 1
    assert checked > 0


# ----------------------------------------------------------------------------------------------- file errors


def read_error(tmp_path, text: str) -> InputError:
    path = tmp_path / "net.yml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        read_astra_network(path)
    return exc.value


GOOD = "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"


def test_comments_and_block_lists_are_read(tmp_path):
    path = tmp_path / "net.yml"
    path.write_text(
        "# two dimensions\ntopology:\n  - Ring   # fast\n  - Switch\n"
        "npus_count: [4, 2]\nbandwidth: [50, 1e2]\nlatency: [500, 0]\n"
    )
    network = read_astra_network(path)
    assert network.dims == (AstraDim("Ring", 4, 50.0, 500.0), AstraDim("Switch", 2, 100.0, 0.0))


@pytest.mark.parametrize(
    ("text", "line", "problem", "fix"),
    [
        (GOOD.replace("latency: [ 500.0 ]\n", ""), 1, "missing key 'latency'", "latency:"),
        (GOOD.replace("[ 8 ]", "[ 8, 2 ]"), 2, "npus_count has 2 entries but topology has 1", "one entry per"),
        (GOOD.replace("Ring", "Torus"), 1, "topology[0] is 'Torus'", "Ring, Switch, FullyConnected"),
        (GOOD.replace("Ring", "ring"), 1, "topology[0] is 'ring'", "did you mean 'Ring'"),
        (GOOD.replace("[ 8 ]", "[ 1 ]"), 2, "npus_count[0] is 1", "2 or more"),
        (GOOD.replace("[ 8 ]", "[ 8.0 ]"), 2, "npus_count[0] is 8.0, not an integer", "whole number"),
        (GOOD.replace("[ 50.0 ]", "[ 0 ]"), 3, "bandwidth[0] is 0 GB/s", "positive"),
        (GOOD.replace("[ 50.0 ]", "[ -5 ]"), 3, "bandwidth[0] is -5 GB/s", "positive"),
        (GOOD.replace("[ 50.0 ]", "[ fast ]"), 3, "bandwidth[0] is 'fast', not a finite number", "GB/s"),
        (GOOD.replace("[ 500.0 ]", "[ -1.0 ]"), 4, "latency[0] is -1.0 ns", ">= 0"),
        (GOOD + "links_count: [ 1 ]\n", 5, "unknown key 'links_count'", "topology, npus_count, bandwidth, latency"),
        (GOOD.replace("bandwidth", "bandwith"), 3, "unknown key 'bandwith'", "did you mean 'bandwidth'"),
        (GOOD + "npus_count: [ 4 ]\n", 5, "npus_count: key given twice (first on line 2)", "keep one"),
        ("- Ring\n- 8\n", 1, "must be a mapping", "topology: [ Ring ]"),
        ("", 1, "empty", "npus_count"),
        ("topology: [ Ring\n", 2, "not valid YAML", "syntax"),
        (GOOD.replace("[ 8 ]", "8"), 2, "npus_count must be a list", "npus_count: [ 8 ]"),
        (GOOD.replace("[ Ring ]", "[ ]"), 1, "topology lists no dimension", "topology: [ Ring ]"),
        ("topology:\n  - Ring\n  - Torus\n" + GOOD[19:], 3, "topology[1] is 'Torus'", "FullyConnected"),
    ],
)
def test_file_errors_name_line_key_and_fix(tmp_path, text, line, problem, fix):
    err = read_error(tmp_path, text)
    assert err.where == f"{tmp_path / 'net.yml'}:{line}"
    assert problem in err.problem and fix in err.fix


def test_unreadable_file(tmp_path):
    with pytest.raises(InputError) as exc:
        read_astra_network(tmp_path / "missing.yml")
    assert exc.value.where == f"{tmp_path / 'missing.yml'}:0" and "cannot read" in exc.value.problem
    assert exc.value.fix
    (tmp_path / "bin.yml").write_bytes(b"topology: [ \xff ]\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_astra_network(tmp_path / "bin.yml")
