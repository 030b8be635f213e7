"""ASTRA-sim system configurations: the shipped examples read as ASTRA-sim reads them; bad ones name file:line."""

import json
from pathlib import Path

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.astra_system import read_astra_system

CONFIGS = Path(__file__).resolve().parents[3] / "shared" / "workloads" / "chakra" / "configs"
needs_samples = pytest.mark.skipif(not CONFIGS.is_dir(), reason=f"the public ASTRA-sim configs are not at {CONFIGS}")


@needs_samples
def test_shipped_ring_4chunks():
    system = read_astra_system(CONFIGS / "Ring_4chunks.json")
    assert (system.scheduling_policy, system.collective_optimization) == ("LIFO", "localBWAware")
    assert (system.endpoint_delay_ns, system.active_chunks, system.splits) == (10, 1, 4)
    assert system.local_mem_bw_GBps == 1600
    assert system.implementations["all_to_all"] == (("ring", 0),)
    assert system.assumed == ()
    assert system.reduction_ns(65536) == 120  # 3 x floor(65536 B / 1.6e12 B/s in ns)


@needs_samples
def test_shipped_hgx():
    system = read_astra_system(CONFIGS / "HGX-H100-validated.json")
    assert (system.active_chunks, system.local_mem_bw_GBps) == (2, 3350)


def _write(tmp_path, settings, name="system.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(settings, indent=4))
    return path


BASE = {"scheduling-policy": "FIFO", "preferred-dataset-splits": 2, "all-reduce-implementation": ["ring"]}


def test_defaults_and_algorithm_names(tmp_path):
    system = read_astra_system(_write(tmp_path, {
        "preferred-dataset-splits": 1,
        "all-reduce-implementation": ["ring", "direct4", "halvingDoubling"],
        "all-to-all-implementation": ["oneDirect"],
        "boost-mode": 1,
    }))  # fmt: skip
    assert (system.endpoint_delay_ns, system.active_chunks) == (10, 1)
    assert system.implementations["all_reduce"] == (("ring", 0), ("direct", 4), ("halvingDoubling", 0))
    assert system.implementations["all_to_all"] == (("direct", 0),) and system.flat["all_to_all"]
    assert any("scheduling-policy FIFO" in a for a in system.assumed)


@pytest.mark.parametrize(
    "change, key, problem",
    [
        ({"preferred-dataset-splits": None}, None, "preferred-dataset-splits is not given"),
        ({"preferred-dataset-splits": 0}, "preferred-dataset-splits", "at least 1"),
        ({"endpoint_delay": 5}, "endpoint_delay", "did you mean 'endpoint-delay'"),
        ({"scheduling-policy": "RANDOM"}, "scheduling-policy", "unknown policy"),
        ({"all-reduce-implementation": ["rng"]}, "all-reduce-implementation", "unknown algorithm 'rng'"),
        ({"all-reduce-implementation": "ring"}, "all-reduce-implementation", "list of algorithm names"),
        ({"all-reduce-implementation": ["oneRing", "ring"]}, "all-reduce-implementation", "mixes a flat"),
        ({"roofline-enabled": 1}, "roofline-enabled", "not modelled"),
        ({"local-mem-bw": 0}, "local-mem-bw", "above 0"),
        ({"active-chunks-per-dimension": 1.5}, "active-chunks-per-dimension", "an integer"),
        ({"all-gather-implementation-custom": []}, "all-gather-implementation-custom", "list of one trace prefix"),
    ],
)
def test_bad_settings_name_file_line_and_key(tmp_path, change, key, problem):
    settings = {**BASE, **change}
    settings = {k: v for k, v in settings.items() if v is not None}
    path = _write(tmp_path, settings)
    with pytest.raises(InputError) as err:
        read_astra_system(path)
    assert str(path) in err.value.where and problem in f"{err.value.problem} (fix: {err.value.fix})"
    if key:
        line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if f'"{key}"' in text)
        assert err.value.where.endswith(f":{line} {key}")


def test_not_json_names_the_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "preferred-dataset-splits": 1,\n  oops\n}')
    with pytest.raises(InputError, match=r"bad.json:3: not valid JSON"):
        read_astra_system(path)


def test_reduction_without_local_mem_bw_is_an_error_when_needed(tmp_path):
    system = read_astra_system(_write(tmp_path, BASE))
    with pytest.raises(InputError, match="local-mem-bw is not given"):
        system.reduction_ns(1000)
    with pytest.raises(InputError, match="all-gather-implementation is not given"):
        system.algorithm("all_gather", 0)
    with pytest.raises(InputError, match="names 1 algorithm"):
        system.algorithm("all_reduce", 1)
