"""HPCC traffic_gen's workloads: Poisson arrivals at a load, sizes from a CDF file, uniform destinations."""

import math
import time
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.topology.model import Topology
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import read_flows, write_flows
from wormhole_lab.workload.traffic_gen import (
    REFERENCE_BASE_TIME_PS,
    cdf_from_points,
    host_link_rate,
    poisson_flows,
    poisson_on_topology,
    read_cdf,
    traffic_command,
    write_traffic,
)

CDF_DIR = Path(__file__).resolve().parents[1] / "data" / "cdf"
TEN = CDF_DIR / "ten_point.txt"
TWO = CDF_DIR / "two_point.txt"
G100 = 100 * 10**9
MS = 10**9  # ps
COLUMNS = ("src", "dst", "size", "start_ps", "pg", "dport", "sport", "dep_offset", "dep_ids", "gap_ps", "phase")


def same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(getattr(a, c), getattr(b, c)) for c in COLUMNS)


def ks_distance(sizes: np.ndarray, cdf) -> float:
    """Kolmogorov-Smirnov distance between the sizes drawn and floor(X), X ~ the CDF (P(floor X <= s) = F(s + 1))."""
    s = np.sort(sizes)
    n = len(s)
    values, first = np.unique(s, return_index=True)
    last = np.concatenate([first[1:], [n]])
    # the generator raises sizes below 1 B to 1, so the law of the table is max(floor(X), 1)
    model_at = np.where(values >= 1, cdf.cdf(values + 1.0), 0.0)
    model_before = np.where(values > 1, cdf.cdf(values.astype(float)), 0.0)
    return float(max(np.max(np.abs(last / n - model_at)), np.max(np.abs(first / n - model_before))))


# --- the CDF file ---------------------------------------------------------------------------------------------


def test_cdf_files_read_and_average_is_the_trapezoid_sum():
    ten = read_cdf(TEN)
    assert ten.size[0] == 0 and ten.size[-1] == 1_000_000 and ten.percent[-1] == 100
    # (0+200)/2*10 + (200+1000)/2*15 + ... + (300000+1000000)/2*5, over 100: worked by hand
    assert ten.mean_bytes == pytest.approx(59325.0)
    assert read_cdf(TWO).mean_bytes == pytest.approx(5000.0)


def test_cdf_allows_blank_lines_comments_and_tabs(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("# a comment\n\n0\t0\n 100   50 \n\n300 100\n")
    cdf = read_cdf(path)
    assert cdf.size.tolist() == [0, 100, 300] and cdf.percent.tolist() == [0, 50, 100]


@pytest.mark.parametrize(
    ("text", "line", "phrase"),
    [
        ("", 1, "no data lines"),
        ("# only a comment\n\n", 1, "no data lines"),
        ("0 0\n100 abc\n", 2, "'abc' is not a number"),
        ("0 0\n100 50 7\n200 100\n", 2, "expected 2 fields"),
        ("0 0\n100\n", 2, "expected 2 fields"),
        ("0 0\n200 50\n100 100\n", 3, "size 100 does not increase"),
        ("0 0\n100 50\n100 100\n", 3, "size 100 does not increase"),
        ("0 0\n100 60\n200 50\n300 100\n", 3, "percent 50 does not increase"),
        ("0 0\n100 50\n200 50\n300 100\n", 3, "percent 50 does not increase"),
        ("0 0\n100 50\n200 99\n", 3, "ends at 99 %, not 100"),
        ("0 0\n100 0.5\n200 1\n", 3, "multiply them by 100"),
        ("10 5\n100 100\n", 1, "first cdf percent is 5, not 0"),
        ("-5 0\n100 100\n", 1, "negative"),
        ("0 0\n100 nan\n", 2, "not a finite number"),
        ("0 0\n100 150\n", 2, "outside 0..100"),
        ("0 0\n1e17 100\n", 2, "too large"),
    ],
)
def test_bad_cdf_files_name_the_line_and_the_fix(tmp_path, text, line, phrase):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_cdf(path)
    assert err.value.where == f"{path}:{line}"
    assert phrase in str(err.value)
    assert err.value.fix


def test_unreadable_and_binary_cdf_files(tmp_path):
    with pytest.raises(InputError, match="cannot read the CDF file"):
        read_cdf(tmp_path / "missing.txt")
    path = tmp_path / "bin.txt"
    path.write_bytes(b"0 0\n\xff\xfe 100\n")
    with pytest.raises(InputError) as err:
        read_cdf(path)
    assert err.value.where == f"{path}:2"


def test_cdf_from_points_names_the_index():
    assert cdf_from_points([(0, 0), (10, 100)]).mean_bytes == 5.0
    with pytest.raises(InputError) as err:
        cdf_from_points([(0, 0), (10, 40), (5, 100)], source="my_cdf")
    assert err.value.where == "my_cdf[2]"


# --- the generator --------------------------------------------------------------------------------------------


def test_offered_load_matches_the_request():
    flows = poisson_flows(TEN, 0.5, 64, G100, 10 * MS, seed=7, base_time_ps=0)
    assert len(flows) > 50_000  # ~105 000 flows/s per host x 64 hosts x 10 ms
    offered = flows.size.sum() * 8 / (64 * G100 * 10e-3)
    assert offered == pytest.approx(0.5, rel=0.04)  # relative sampling error here is about 1 %
    assert flows.meta["offered_load"] == pytest.approx(offered)
    rate = 0.5 * G100 / 8 / 59325.0  # flows per second per host
    assert len(flows) == pytest.approx(rate * 64 * 10e-3, rel=0.02)  # sd of the count: 0.4 %


def test_loads_scale_and_the_host_bandwidth_counts():
    low = poisson_flows(TEN, 0.1, 32, G100, 10 * MS, seed=1, base_time_ps=0)
    high = poisson_flows(TEN, 0.8, 32, G100, 10 * MS, seed=1, base_time_ps=0)
    slow = poisson_flows(TEN, 0.8, 32, 25 * 10**9, 10 * MS, seed=1, base_time_ps=0)
    assert len(high) / len(low) == pytest.approx(8, rel=0.05)
    assert len(high) / len(slow) == pytest.approx(4, rel=0.05)


def test_sizes_follow_the_cdf():
    cdf = read_cdf(TEN)
    flows = poisson_flows(cdf, 0.5, 32, G100, 5 * MS, seed=3, base_time_ps=0)
    n = len(flows)
    assert n > 10_000
    critical = 1.95 / math.sqrt(n)  # KS at the 0.1 % level
    assert ks_distance(flows.size, cdf) < critical
    # the check has power: the same sizes are far from another distribution
    assert ks_distance(flows.size, read_cdf(TWO)) > 10 * critical
    assert flows.size.min() >= 1 and flows.size.max() <= 1_000_000
    assert flows.size.mean() == pytest.approx(59325.0, rel=0.04)


def test_two_point_cdf_is_uniform_between_its_sizes():
    flows = poisson_flows(TWO, 0.9, 16, G100, 2 * MS, seed=5, base_time_ps=0)
    assert flows.size.min() >= 1000 and flows.size.max() < 9000
    counts = np.histogram(flows.size, bins=8, range=(1000, 9000))[0]
    expected = len(flows) / 8
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 24.3  # chi-square, 7 degrees of freedom, 0.1 % level


def test_destinations_are_other_hosts_uniformly():
    n_hosts = 8
    flows = poisson_flows(TEN, 0.7, n_hosts, G100, 5 * MS, seed=11, base_time_ps=0)
    assert np.all(flows.src != flows.dst)
    assert flows.src.min() == 0 and flows.dst.max() == n_hosts - 1
    offsets = (flows.dst - flows.src) % n_hosts  # 1..7, uniform if the destination is uniform over the others
    counts = np.bincount(offsets, minlength=n_hosts)[1:]
    expected = len(flows) / (n_hosts - 1)
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 22.5  # chi-square, 6 degrees of freedom, 0.1 % level
    per_src = np.bincount(flows.src, minlength=n_hosts)
    assert np.all(np.abs(per_src - len(flows) / n_hosts) < 5 * math.sqrt(len(flows) / n_hosts))


def test_arrivals_are_poisson_per_host():
    flows = poisson_flows(TEN, 0.5, 200, G100, 2 * MS, seed=2, base_time_ps=0)
    counts = np.bincount(flows.src, minlength=200)
    mean = 0.5 * G100 / 8 / 59325.0 * 2e-3
    assert counts.mean() == pytest.approx(mean, rel=0.02)
    assert counts.var() / counts.mean() == pytest.approx(1.0, abs=0.25)  # Poisson: variance = mean
    gaps = np.concatenate([np.diff(flows.start_ps[flows.src == h]) for h in range(200)]) / 1000.0
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)  # exponential gaps: CV 1


def test_window_order_and_reference_columns():
    flows = poisson_flows(TEN, 0.3, 16, G100, MS, seed=4)
    base = REFERENCE_BASE_TIME_PS  # the reference's 2 s
    assert flows.start_ps.min() >= base and flows.start_ps.max() <= base + MS
    assert np.all(flows.start_ps % 1000 == 0)  # whole ns, the reference's clock
    key = flows.start_ps * 16 + flows.src
    assert np.all(np.diff(key) >= 0)  # sorted by start, ties by source host
    assert np.all(flows.pg == 3) and np.all(flows.dport == 100)
    expected = make_flows(flows.src, flows.dst, flows.size, flows.start_ps)
    assert same(flows, expected)  # sport and every other column as make_flows builds them


def test_same_seed_same_table_other_seed_other_table():
    a = poisson_flows(TEN, 0.4, 20, G100, MS, seed=9)
    b = poisson_flows(read_cdf(TEN), 0.4, 20, G100, MS, seed=9)
    c = poisson_flows(TEN, 0.4, 20, G100, MS, seed=10)
    assert same(a, b)
    assert not same(a, c)


def test_like_reference_drops_each_hosts_last_arrival():
    # 3 arrivals per host expected: the reference writes max(N - 1, 0) of N, in mean 3 - 1 + e^-3
    n_hosts = 2000
    rate = 0.5 * G100 / 8 / 59325.0
    duration_ps = round(3 / rate * 1e12)
    ours = poisson_flows(TEN, 0.5, n_hosts, G100, duration_ps, seed=1, base_time_ps=0)
    ref = poisson_flows(TEN, 0.5, n_hosts, G100, duration_ps, seed=1, base_time_ps=0, like_reference=True)
    assert len(ours) / n_hosts == pytest.approx(3.0, abs=0.15)
    assert len(ref) / n_hosts == pytest.approx(2 + math.exp(-3), abs=0.15)


def test_large_workload_is_fast():
    start = time.perf_counter()
    flows = poisson_flows(TEN, 0.5, 320, G100, MS, seed=1)
    elapsed = time.perf_counter() - start
    assert len(flows) > 30_000
    assert elapsed < 5.0  # about 0.05 s on a quiet machine; guards against a per-flow Python loop


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"load": 0.0}, "load=0"),
        ({"load": 1.5}, "load=1.5"),
        ({"load": -0.2}, "load=-0.2"),
        ({"load": float("nan")}, "load=nan"),
        ({"load": "0.3"}, "load='0.3'"),
        ({"n_hosts": 1}, "n_hosts=1"),
        ({"n_hosts": 2.5}, "n_hosts=2.5"),
        ({"bw_bps": 0}, "bw_bps=0"),
        ({"duration_ps": 0}, "duration_ps=0"),
        ({"seed": -1}, "seed=-1"),
        ({"base_time_ps": -1}, "base_time_ps=-1"),
        ({"base_time_ps": 1500}, "base_time_ps=1500"),
        ({"duration_ps": 10**20}, "duration_ps="),
    ],
)
def test_bad_parameters_name_the_field(kwargs, field):
    args = {"load": 0.3, "n_hosts": 4, "bw_bps": G100, "duration_ps": MS, "seed": 1, "base_time_ps": 0} | kwargs
    with pytest.raises(InputError) as err:
        poisson_flows(TEN, **args)
    assert err.value.where.startswith(f"poisson_flows({field}")
    assert err.value.fix


def test_load_given_in_percent_gets_a_hint():
    with pytest.raises(InputError, match="write 0.3"):
        poisson_flows(TEN, 30, 4, G100, MS)


# --- flow files and the CLI entry -----------------------------------------------------------------------------


def test_flow_file_reads_back_and_matches_write_flows(tmp_path):
    flows = poisson_flows(TEN, 0.5, 16, G100, 2 * MS, seed=6)
    assert write_traffic(flows, tmp_path / "fast.txt") == len(flows)
    write_flows(flows, tmp_path / "slow.txt")
    assert (tmp_path / "fast.txt").read_bytes() == (tmp_path / "slow.txt").read_bytes()
    assert same(read_flows(tmp_path / "fast.txt"), flows)
    # also near t = 0, where the fixed-point rounding of small doubles takes the exact integer route
    early = poisson_flows(TEN, 0.9, 16, G100, MS // 10, seed=6, base_time_ps=0)
    write_traffic(early, tmp_path / "early.txt")
    write_flows(early, tmp_path / "early_ref.txt")
    assert (tmp_path / "early.txt").read_bytes() == (tmp_path / "early_ref.txt").read_bytes()
    assert same(read_flows(tmp_path / "early.txt"), early)


def test_start_texts_agree_with_write_flows_on_awkward_times(tmp_path):
    rng = np.random.default_rng(0)
    ns = np.unique(np.concatenate([rng.integers(0, 10**7, 300), 2 * 10**9 + rng.integers(0, 10**8, 300)]))
    n = len(ns)
    flows = make_flows(np.zeros(n), np.ones(n), np.ones(n), ns * 1000)
    write_traffic(flows, tmp_path / "a.txt")
    write_flows(flows, tmp_path / "b.txt")
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()


def test_traffic_command_writes_the_reference_format(tmp_path):
    out = tmp_path / "flow.txt"
    n = traffic_command(TEN, 0.3, 8, G100, 0.001, 5, out)
    lines = out.read_text().splitlines()
    assert int(lines[0]) == n == len(lines) - 1 > 0
    src, dst, pg, dport, size, start = lines[1].split()
    assert pg == "3" and dport == "100" and src != dst
    assert 2.0 < float(start) <= 2.001  # the reference's base time
    back = read_flows(out)
    assert same(back, poisson_flows(TEN, 0.3, 8, G100, MS, seed=5))
    n0 = traffic_command(TEN, 0.3, 8, G100, 0.001, 5, tmp_path / "f0.txt", base_time_s=0.0)
    assert n0 == n and read_flows(tmp_path / "f0.txt").start_ps.max() <= MS
    with pytest.raises(InputError, match="duration_s"):
        traffic_command(TEN, 0.3, 8, G100, 0.0, 5, out)


# --- on a topology --------------------------------------------------------------------------------------------


def test_on_a_topology_uses_its_hosts_and_link_rate():
    topo = fat_tree(4, host_rate_bps=25 * 10**9)
    assert host_link_rate(topo) == 25 * 10**9
    flows = poisson_on_topology(topo, TEN, 0.5, MS, seed=2)
    expected = poisson_flows(TEN, 0.5, len(topo.hosts), 25 * 10**9, MS, seed=2, base_time_ps=0)
    assert np.array_equal(topo.hosts, np.arange(len(topo.hosts)))  # a fat tree numbers its hosts first
    assert same(flows, expected)
    assert set(flows.src.tolist()) <= set(topo.hosts.tolist())
    assert flows.meta["generator"] == {
        "poisson": {
            "cdf": str(TEN),
            "load": 0.5,
            "duration_ps": MS,
            "seed": 2,
            "base_time_ps": 0,
            "like_reference": False,
        }
    }


def test_hosts_that_are_not_the_first_nodes_are_mapped():
    # node 0 is the switch, hosts are 1..4: generator host i is topology host i + 1
    topo = Topology(
        is_switch=np.array([True, False, False, False, False]),
        link_a=np.array([0, 0, 0, 0]),
        link_b=np.array([1, 2, 3, 4]),
        link_rate_bps=np.full(4, G100),
        link_delay_ps=np.full(4, 10**6),
        link_error_rate=np.zeros(4),
    )
    flows = poisson_on_topology(topo, TEN, 0.9, MS, seed=1)
    plain = poisson_flows(TEN, 0.9, 4, G100, MS, seed=1, base_time_ps=0)
    assert np.array_equal(flows.src, plain.src + 1) and np.array_equal(flows.dst, plain.dst + 1)
    assert np.array_equal(flows.size, plain.size) and np.array_equal(flows.start_ps, plain.start_ps)


def test_hosts_with_different_link_rates_are_refused():
    topo = Topology(
        is_switch=np.array([True, False, False]),
        link_a=np.array([0, 0]),
        link_b=np.array([1, 2]),
        link_rate_bps=np.array([G100, 25 * 10**9]),
        link_delay_ps=np.full(2, 10**6),
        link_error_rate=np.zeros(2),
    )
    with pytest.raises(InputError, match="different rates"):
        host_link_rate(topo)
