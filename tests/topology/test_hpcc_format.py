"""Reading and writing HPCC / SimAI topology files, including every bad-input message."""

from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology import Topology, fat_tree, leaf_spine, rail_optimized, read_topology, star, write_topology

SHARED = Path(__file__).parents[2] / ".." / "shared"
FAT_PERM64 = SHARED / "reference" / "bench" / "fat_perm64" / "topology.txt"
SIMAI_DIR = SHARED / "workloads" / "simai" / "topo"
G = 1_000_000_000


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared reference data not found at {path}")
    return path


def same(a: Topology, b: Topology):
    for field in ("is_switch", "link_a", "link_b", "link_rate_bps", "link_delay_ps", "link_error_rate"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


def test_read_fat_perm64():
    t = read_topology(need(FAT_PERM64))
    assert (t.n_nodes, int(t.is_switch.sum()), t.n_links) == (376, 56, 480)
    assert np.array_equal(t.switches, np.arange(320, 376))
    assert (t.link_a[0], t.link_b[0], t.link_rate_bps[0], t.link_delay_ps[0]) == (0, 320, 100 * G, 1_000_000)
    assert set(t.link_rate_bps.tolist()) == {100 * G, 400 * G}
    assert t.meta["format"] == "hpcc"


def test_read_simai():
    path = need(SIMAI_DIR / "Rail_Opti_SingleToR_16g_8gps_200Gbps_H20")
    t = read_topology(path)
    assert (t.n_nodes, int(t.is_switch.sum()), t.n_links) == (34, 18, 96)
    assert t.meta["format"] == "simai"
    assert t.meta["gpus_per_server"] == 8 and t.meta["gpu_type"] == "H20" and t.meta["nvswitch_ids"] == [16, 17]
    assert t.link_rate_bps[0] == 900 * G and t.link_delay_ps[0] == 25_000  # "900Gbps 0.000025ms"
    assert t.hosts.tolist() == list(range(16))


def test_read_every_simai_file():
    files = sorted(need(SIMAI_DIR).glob("Rail_Opti_*"))
    assert files
    for f in files:
        t = read_topology(f)
        assert t.hosts.size > 0 and t.meta["format"] == "simai"


@pytest.mark.parametrize(
    "topo", [star(3), leaf_spine(3, 2, 2, fabric_rate_bps=400 * G, fabric_delay_ps=1500), fat_tree(4)]
)
def test_round_trip_hpcc(tmp_path, topo):
    path = tmp_path / "topology.txt"
    write_topology(topo, path)
    back = read_topology(path)
    same(topo, back)
    assert back.meta["format"] == "hpcc"


def test_round_trip_simai(tmp_path):
    topo = rail_optimized(2, 4, n_spines=2, nvlink=True)
    path = tmp_path / "simai_topo"
    write_topology(topo, path, fmt="simai")
    head = path.read_text().splitlines()[0].split()
    assert head == ["16", "4", "2", "6", "24", "H100"]
    back = read_topology(path)
    same(topo, back)
    assert back.meta["nvswitch_ids"] == [8, 9] and back.meta["gpus_per_server"] == 4
    # auto keeps the SimAI format for topologies read from SimAI files
    write_topology(back, tmp_path / "again")
    assert (tmp_path / "again").read_text() == path.read_text()


def test_round_trip_shipped_file(tmp_path):
    t = read_topology(need(FAT_PERM64))
    write_topology(t, tmp_path / "t.txt")
    same(t, read_topology(tmp_path / "t.txt"))


def test_round_trip_error_rate_and_odd_units(tmp_path):
    text = "3 1 2\n2\n0 2 25Gbps 0.001ms 0.000001\n1 2 12.5Gbps 250ps 0.5\n"
    (tmp_path / "a").write_text(text)
    t = read_topology(tmp_path / "a")
    assert t.link_rate_bps.tolist() == [25 * G, 12_500_000_000]
    assert t.link_delay_ps.tolist() == [1_000_000, 250]
    assert t.link_error_rate.tolist() == [1e-6, 0.5]
    write_topology(t, tmp_path / "b")
    same(t, read_topology(tmp_path / "b"))


def test_description_and_blank_lines_are_ignored(tmp_path):
    text = "3 1 2\n\n2\n0 2 100Gbps 1000ns 0\n\n1 2 100Gbps 0.001ms 0.000000\nFIRST LINE node_num ...\nwhatever 1 2\n"
    (tmp_path / "t").write_text(text)
    t = read_topology(tmp_path / "t")
    assert t.n_links == 2 and t.link_delay_ps.tolist() == [1_000_000, 1_000_000]


GOOD = ["3 1 2", "2", "0 2 100Gbps 1000ns 0", "1 2 100Gbps 1000ns 0"]


def edit(line_no: int, text: str | None) -> str:
    """GOOD with line ``line_no`` (1-based) replaced (or dropped when None)."""
    lines = list(GOOD)
    if text is None:
        del lines[line_no - 1]
    else:
        lines[line_no - 1] = text
    return "\n".join(lines) + "\n"


BAD = [
    ("", 1, "truncated"),
    ("\n\n", 1, "truncated"),
    (edit(1, "3 1"), 1, "header has 2 fields"),
    (edit(1, "3 x 2"), 1, "switch_num must be an integer"),
    (edit(1, "3 1 2.5"), 1, "link_num must be an integer"),
    (edit(1, "-3 1 2"), 1, "node_num must not be negative"),
    (edit(1, "0 0 0"), 1, "node_num must be at least 1"),
    (edit(1, "3 4 2"), 1, "4 switches declared but only 3 nodes"),
    (edit(1, "3 1 3"), 5, "truncated"),
    ("3 1 2\n2\n", 3, "truncated"),
    (edit(2, "2 1"), 2, "switch count mismatch"),
    (edit(2, "7"), 2, "switch id 7 is out of range"),
    (edit(2, "x"), 2, "switch id must be an integer"),
    ("3 2 2\n2 2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", 2, "switch id 2 listed twice"),
    (edit(3, "0 9 100Gbps 1000ns 0"), 3, "dst 9 is out of range"),
    (edit(3, "-1 2 100Gbps 1000ns 0"), 3, "src must not be negative"),
    (edit(3, "0 2 100Gbps 1000ns"), 3, "link line has 4 fields"),
    (edit(3, "0 2 100Gbps 1000ns 0 7"), 3, "link line has 6 fields"),
    (edit(3, "0 2 100Gbs 1000ns 0"), 3, "cannot read rate"),
    (edit(3, "0 2 0Gbps 1000ns 0"), 3, "must be positive"),
    (edit(3, "0 2 -100Gbps 1000ns 0"), 3, "is negative"),
    (edit(4, "1 2 100Gbps 1000 0"), 4, "cannot read time"),
    (edit(4, "1 2 100Gbps -1ns 0"), 4, "delay '-1ns' is negative"),
    (edit(4, "1 2 100Gbps 1000ns 1.5"), 4, "outside [0, 1]"),
    (edit(4, "1 2 100Gbps 1000ns -0.1"), 4, "outside [0, 1]"),
    (edit(4, "1 2 100Gbps 1000ns abc"), 4, "cannot read error rate"),
    (edit(4, "2 2 100Gbps 1000ns 0"), 4, "self loop"),
    (edit(4, "2 0 100Gbps 1000ns 0"), 4, "duplicates link 0"),
    ("4 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", 2, "host 3 has no link"),
    ("4 2 2\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n", 2, "cannot reach each other"),
    ("3 0 0 1 2 H100\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", 1, "gpus_per_server must be at least 1"),
    ("3 1 1 1 2 H100\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", 2, "switch count mismatch"),
]


@pytest.mark.parametrize("text, line, fragment", BAD)
def test_bad_input(tmp_path, text, line, fragment):
    path = tmp_path / "topology.txt"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_topology(path)
    assert info.value.where == f"{path}:{line}", info.value
    assert fragment in info.value.problem, info.value
    assert info.value.fix


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as info:
        read_topology(tmp_path / "nope.txt")
    assert "cannot read" in info.value.problem


def test_write_errors(tmp_path):
    with pytest.raises(InputError, match="unknown format"):
        write_topology(star(2), tmp_path / "x", fmt="ns3")
    with pytest.raises(InputError, match="gpus_per_server"):
        write_topology(star(2), tmp_path / "x", fmt="simai")
