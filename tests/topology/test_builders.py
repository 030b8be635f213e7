"""Node/link counts, numbering and argument checks of the topology builders."""

from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology import (
    Routes,
    check_topology,
    dumbbell,
    fat_tree,
    leaf_spine,
    rail_optimized,
    read_topology,
    star,
)

SHARED = Path(__file__).parents[2] / ".." / "shared"
SIMAI_16G = SHARED / "workloads" / "simai" / "topo" / "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20"
G = 1_000_000_000


def counts(t):
    return t.n_nodes - int(t.is_switch.sum()), int(t.is_switch.sum()), t.n_links


def assert_hosts_first(t):
    n_hosts = int((~t.is_switch).sum())
    assert not t.is_switch[:n_hosts].any() and t.is_switch[n_hosts:].all()


def test_star():
    t = star(5)
    assert counts(t) == (5, 1, 5)
    assert_hosts_first(t)
    assert (t.link_b == 5).all() and (t.link_rate_bps == 100 * G).all() and (t.link_delay_ps == 1_000_000).all()
    assert t.meta["builder"] == "star" and t.meta["n_hosts"] == 5


def test_dumbbell():
    t = dumbbell(2, 3, bottleneck_rate_bps=10 * G, bottleneck_delay_ps=5_000_000)
    assert counts(t) == (5, 2, 6)
    assert_hosts_first(t)
    assert (t.link_a[-1], t.link_b[-1], t.link_rate_bps[-1], t.link_delay_ps[-1]) == (5, 6, 10 * G, 5_000_000)
    assert list(t.link_b[:5]) == [5, 5, 6, 6, 6]
    assert t.meta["bottleneck_rate_bps"] == 10 * G


def test_leaf_spine():
    t = leaf_spine(4, 2, 3, fabric_rate_bps=400 * G)
    assert counts(t) == (12, 6, 12 + 8)
    assert_hosts_first(t)
    assert list(t.link_b[:12]) == [12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15]
    assert (t.link_rate_bps[12:] == 400 * G).all() and (t.link_rate_bps[:12] == 100 * G).all()


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts(k):
    t = fat_tree(k)
    assert counts(t) == (k**3 // 4, 5 * k * k // 4, 3 * k**3 // 4)
    assert_hosts_first(t)
    assert t.meta["k"] == k
    # every switch has k ports, except that the k=2 tree has a single 2-port core per agg
    degree = np.bincount(np.concatenate([t.link_a, t.link_b]), minlength=t.n_nodes)
    assert (degree[~t.is_switch] == 1).all()
    assert (degree[t.is_switch] == k).all()


def test_fat_tree_fabric_rate_and_tiers():
    t = fat_tree(4, host_rate_bps=100 * G, fabric_rate_bps=400 * G)
    assert (t.link_rate_bps[:16] == 100 * G).all() and (t.link_rate_bps[16:] == 400 * G).all()
    assert t.meta["edge_range"] == (16, 24) and t.meta["agg_range"] == (24, 32) and t.meta["core_range"] == (32, 36)


def test_rail_optimized_without_nvlink():
    t = rail_optimized(4, gpus_per_server=8)
    assert counts(t) == (32, 8 + 4, 32 + 8 * 4)  # default spines: non-blocking = 4 servers at equal rates
    assert_hosts_first(t)
    assert list(t.link_b[:10]) == [32, 33, 34, 35, 36, 37, 38, 39, 32, 33]  # GPU g -> rail g
    assert t.meta["nvswitch_ids"] == [] and t.meta["n_spines"] == 4


def test_rail_optimized_with_nvlink():
    t = rail_optimized(2, gpus_per_server=4, n_spines=3, nvlink=True, nvlink_rate_bps=900 * G)
    assert counts(t) == (8, 2 + 4 + 3, 8 * 2 + 4 * 3)
    assert t.meta["nvswitch_ids"] == [8, 9] and t.meta["rail_ids"] == [10, 11, 12, 13]
    assert list(t.link_b[:4]) == [8, 10, 8, 11]
    assert t.link_rate_bps[0] == 900 * G


def test_rail_optimized_matches_simai_file():
    if not SIMAI_16G.exists():
        pytest.skip(f"shared SimAI topology not found at {SIMAI_16G}")
    ref = read_topology(SIMAI_16G)
    t = rail_optimized(2, 8, n_spines=8, host_rate_bps=200 * G, fabric_rate_bps=400 * G, nvlink=True)
    for field in ("is_switch", "link_a", "link_b", "link_rate_bps", "link_delay_ps"):
        assert np.array_equal(getattr(t, field), getattr(ref, field)), field


@pytest.mark.parametrize(
    "topo", [star(2), dumbbell(1, 1), leaf_spine(2, 2, 2), fat_tree(4), rail_optimized(2, 4, nvlink=True)]
)
def test_builders_are_valid_and_routable(topo):
    check_topology(topo)
    r = Routes(topo)
    hosts = topo.hosts
    assert all(r.hop_count(int(s), int(d)) > 0 for s in hosts for d in hosts if s != d)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: fat_tree(k=3), "k must be even"),
        (lambda: fat_tree(k=0), "k must be at least 2"),
        (lambda: fat_tree(k="4"), "k must be an integer"),
        (lambda: fat_tree(4, fabric_rate_bps=0), "fabric_rate_bps must be positive"),
        (lambda: star(0), "n_hosts must be at least 1"),
        (lambda: star(2.5), "n_hosts must be an integer"),
        (lambda: star(True), "n_hosts must be an integer"),
        (lambda: star(2, host_rate_bps=-1), "host_rate_bps must be positive"),
        (lambda: star(2, host_rate_bps=1e11), "host_rate_bps must be an integer"),
        (lambda: star(2, host_delay_ps=-1), "host_delay_ps must not be negative"),
        (lambda: dumbbell(0, 2), "n_left must be at least 1"),
        (lambda: dumbbell(1, 2, bottleneck_rate_bps=0), "bottleneck_rate_bps must be positive"),
        (lambda: leaf_spine(2, 0, 2), "n_spines must be at least 1"),
        (lambda: leaf_spine(2, 2, 0), "hosts_per_leaf must be at least 1"),
        (lambda: rail_optimized(0), "n_servers must be at least 1"),
        (lambda: rail_optimized(2, n_spines=0), "n_spines must be at least 1"),
        (lambda: rail_optimized(2, nvlink="yes"), "nvlink must be True or False"),
        (lambda: rail_optimized(2, nvlink=True, nvlink_delay_ps=-5), "nvlink_delay_ps must not be negative"),
    ],
)
def test_bad_arguments(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in info.value.problem
    arg = fragment.split()[0]
    assert info.value.where.startswith(f"{info.value.where.split('(')[0]}({arg}=")
    assert info.value.fix
