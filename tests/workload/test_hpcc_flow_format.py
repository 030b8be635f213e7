"""HPCC flow file: reading, writing, and one test per kind of bad input."""

import time
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import format_seconds, read_flows, write_flows

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REFERENCE = SHARED / "reference"
needs_shared = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference files not found at {SHARED}")


def _write(tmp_path, text, name="flow.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _columns(flows):
    return {k: getattr(flows, k) for k in ("src", "dst", "size", "start_ps", "pg", "dport", "sport")}


@needs_shared
def test_reads_single_flow_case():
    flows = read_flows(REFERENCE / "validation" / "s1_single_flow" / "flow.txt")
    assert len(flows) == 1
    assert (flows.src[0], flows.dst[0], flows.pg[0], flows.dport[0]) == (0, 1, 3, 100)
    assert flows.size[0] == 10_000_000 and flows.start_ps[0] == 0 and flows.sport[0] == 10000


@needs_shared
def test_reads_incast_and_bench_cases():
    incast = read_flows(REFERENCE / "validation" / "s2_incast8" / "flow.txt")
    assert incast.src.tolist() == list(range(1, 9)) and set(incast.dst.tolist()) == {0}
    assert (incast.size == 1_000_000).all()
    bench = read_flows(REFERENCE / "bench" / "fat_perm64" / "flow.txt")
    assert len(bench) == 64 and (bench.size == 10_000_000).all()
    for arr in _columns(bench).values():
        assert arr.dtype == np.int64


def test_start_seconds_are_truncated_to_the_reference_nanosecond(tmp_path):
    """ns-3's Seconds(double) truncates on its 1 ns clock: 1.5e-6 s is 1499 ns there (1.49999... as a double)."""
    path = _write(
        tmp_path,
        "4\n0 1 3 100 10 0.0\n0 1 3 100 10 0.0000015\n0 1 3 100 10 2.0000010004\n0 1 3 100 10 2.0000010006\n",
    )
    assert read_flows(path).start_ps.tolist() == [0, 1_499_000, 2_000_001_000_000, 2_000_001_000_000]


def test_sports_count_per_pair(tmp_path):
    path = _write(tmp_path, "4\n0 1 3 100 10 0\n0 1 3 100 10 0\n0 2 3 100 10 0\n0 1 3 100 10 1\n")
    assert read_flows(path).sport.tolist() == [10000, 10001, 10000, 10002]


def test_blank_lines_and_trailing_text_are_tolerated(tmp_path):
    # The reference reads whitespace-separated tokens and stops after flow_num flows.
    path = _write(tmp_path, "2\n\n0 1 3 100 10 0\n   \n1 0 3 100 20 1e-6\nthis is ignored\n")
    flows = read_flows(path)
    # 1e-6 is a hair below one microsecond as a double, and the reference's clock truncates: 999 ns
    assert flows.size.tolist() == [10, 20] and flows.start_ps.tolist() == [0, 999_000]


def test_zero_flows(tmp_path):
    assert len(read_flows(_write(tmp_path, "0\n"))) == 0


def test_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    n = 500
    src = rng.integers(0, 64, n)
    dst = (src + rng.integers(1, 63, n)) % 64
    start = np.sort(rng.integers(0, 10 * 10**9, n)) * 1000  # the file keeps 1 ns resolution, as the reference
    start[:5] = 0
    flows = make_flows(
        src, dst, rng.integers(1, 2**40, n), start, pg=rng.integers(0, 8, n), dport=rng.integers(0, 65536, n)
    )
    path = tmp_path / "flow.txt"
    write_flows(flows, path)
    back = read_flows(path)
    for name, col in _columns(flows).items():
        np.testing.assert_array_equal(getattr(back, name), col, err_msg=name)


@needs_shared
def test_round_trip_shipped_file_is_byte_identical(tmp_path):
    src = REFERENCE / "validation" / "s2_incast8" / "flow.txt"
    write_flows(read_flows(src), tmp_path / "flow.txt")
    assert (tmp_path / "flow.txt").read_text() == src.read_text()


def test_format_seconds():
    assert format_seconds(0) == "0.0"
    assert format_seconds(2 * 10**12) == "2.0"
    assert format_seconds(2_000_001_000_000) == "2.000001"
    assert format_seconds(1) == "0.000000000001"


def test_write_rejects_unsorted(tmp_path):
    flows = make_flows([0, 0], [1, 1], [10, 10], [5, 4])
    with pytest.raises(InputError, match=r"start_ps\[1\].*not sorted"):
        write_flows(flows, tmp_path / "flow.txt")


BAD = [
    # (file text, line named in the error, text the message must contain)
    ("", 1, "number of flows"),
    ("x\n0 1 3 100 10 0\n", 1, "single flow count"),
    ("1 2\n0 1 3 100 10 0\n", 1, "single flow count"),
    ("-1\n", 1, "out of range"),
    ("99999999999\n0 1 3 100 10 0\n", 1, "out of range"),
    ("3\n0 1 3 100 10 0\n1 0 3 100 10 0\n", 1, "declares 3 flows but only 2"),
    ("2\n0 1 3 100 10 0\n\n\n\n", 1, "declares 2 flows but only 1"),
    ("2\n0 1 3 100 10 0\n0 1 3 100 10\n", 3, "expected 6 columns, found 5"),
    ("2\n0 1 3 100 10 0\n0 1 3 100 10 0 9\n", 3, "expected 6 columns, found 7"),
    ("1\na 1 3 100 10 0\n", 2, "src 'a' is not an integer"),
    ("1\n0 1.0 3 100 10 0\n", 2, "dst '1.0' is not an integer"),
    ("1\n0 1 3.5 100 10 0\n", 2, "pg '3.5' is not an integer"),
    ("1\n0 1 3 http 10 0\n", 2, "dport 'http' is not an integer"),
    ("1\n0 1 3 100 1e6 0\n", 2, "size_bytes '1e6' is not an integer"),
    ("1\n-1 1 3 100 10 0\n", 2, "src node id -1 is negative"),
    ("1\n0 -4 3 100 10 0\n", 2, "dst node id -4 is negative"),
    ("1\n0 1 8 100 10 0\n", 2, "pg 8 is not a priority group"),
    ("1\n0 1 3 70000 10 0\n", 2, "dport 70000 does not fit"),
    ("1\n0 1 3 100 0 0\n", 2, "size 0 B must be positive"),
    ("1\n0 1 3 100 -10 0\n", 2, "size -10 B must be positive"),
    (f"1\n0 1 3 100 {2**53 + 1} 0\n", 2, "too large"),
    ("1\n0 1 3 100 99999999999999999999 0\n", 2, "too large"),
    ("1\n0 1 3 100 10 nan\n", 2, "NaN"),
    ("1\n0 1 3 100 10 -0.5\n", 2, "negative"),
    ("1\n0 1 3 100 10 inf\n", 2, "too large"),
    ("1\n0 1 3 100 10 1e300\n", 2, "too large"),
    ("1\n0 1 3 100 10 soon\n", 2, "not a number"),
    ("1\n3 3 3 100 10 0\n", 2, "to itself"),
    ("3\n0 1 3 100 10 0\n0 1 3 100 10 2\n\n1 0 3 100 10 1.5\n", 5, "earlier than the previous flow's (2.0 s)"),
    ("2\n0 1 3 100 10 0\n0 1 3 100 10 \xff\n", 3, "not a number"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD)
def test_bad_input_names_file_and_line(tmp_path, text, line, message):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as info:
        read_flows(path)
    assert f"{path}:{line}" in str(info.value)
    assert message in str(info.value)


def test_first_bad_line_wins(tmp_path):
    path = _write(tmp_path, "3\n0 1 3 100 10 0\n0 0 3 100 10 0\n0 1 3 100 0 0\n")
    with pytest.raises(InputError, match=r"flow\.txt:3: flow from node 0 to itself"):
        read_flows(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        read_flows(tmp_path / "nope.txt")


def test_huge_claimed_count_fails_fast(tmp_path):
    path = _write(tmp_path, "4000000000\n0 1 3 100 10 0\n")
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="declares 4000000000 flows but only 1"):
        read_flows(path)
    assert time.perf_counter() - t0 < 1.0


def test_large_file_is_linear(tmp_path):
    n = 300_000
    src = np.arange(n) % 997
    flows = make_flows(src, (src + 1) % 997, np.full(n, 1000), np.arange(n) * 1000)
    path = tmp_path / "flow.txt"
    write_flows(flows, path)
    t0 = time.perf_counter()
    back = read_flows(path)
    assert time.perf_counter() - t0 < 10.0
    np.testing.assert_array_equal(back.start_ps, flows.start_ps)


def test_invalid_utf8_is_an_input_error(tmp_path):
    path = tmp_path / "flow.txt"
    path.write_bytes(b"1\n0 1 3 100 10 \xff\xfe\n")
    with pytest.raises(InputError, match=r"flow\.txt:2: start time .* is not a number"):
        read_flows(path)
