"""Chakra traces as ASTRA-sim runs them: replayed with ASTRA-sim's own congestion-unaware timing, the flows give
the cycles the real ASTRA-sim binary printed (tests/data/astra_sim/cycles.csv, see its README), rank by rank."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.topology.astra_network import read_astra_network
from wormhole_lab.workload.astra_replay import analytical_delivery, rank_times
from wormhole_lab.workload.astra_system import read_astra_system
from wormhole_lab.workload.chakra import ChakraNode, CollectiveType, NodeType, read_chakra, write_chakra
from wormhole_lab.workload.chakra_flows import chakra_flows

DATA = Path(__file__).resolve().parents[1] / "data" / "astra_sim"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "workloads" / "chakra"
needs_samples = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the public Chakra samples are not at {SHARED}")
CASES = list(csv.DictReader(open(DATA / "cycles.csv")))


def _inputs(case: dict, tmp_path: Path) -> tuple[Path, Path, Path]:
    """(trace prefix, system JSON, network YAML) of a recorded ASTRA-sim run."""
    name = case["workload"]
    if case["set"] == "converted":
        prefix = DATA / "small_gpt" / "small_gpt_DataParallel" if name.startswith("small_gpt") else None
        if prefix is None:
            pytest.skip("the converted microAllReduce trace is ASTRA-sim's input, kept outside the project")
    else:
        collective, npus = name.rsplit("_", 2)[0], name.rsplit("_", 2)[1]
        prefix = SHARED / "microbenchmarks" / collective / f"{npus}_1MB" / collective
    if case["system"] == "custom_collective_abs":
        system = tmp_path / "custom.json"
        custom = SHARED / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"
        settings = json.loads((SHARED / "custom_collectives" / "custom_collective.json").read_text())
        settings["all-reduce-implementation-custom"] = [str(custom)]
        system.write_text(json.dumps(settings))
    else:
        system = next(p for p in (SHARED / "configs", DATA / "configs") if (p / f"{case['system']}.json").exists())
        system = system / f"{case['system']}.json"
    network = next(p for p in (SHARED / "configs", DATA / "configs") if (p / f"{case['network']}.yml").exists())
    return prefix, system, network / f"{case['network']}.yml"


def _finish(prefix, system, network) -> np.ndarray:
    net = read_astra_network(network)
    flows = chakra_flows(read_chakra(prefix), read_astra_system(system), range(net.n_npus), [d.npus for d in net.dims])
    return rank_times(flows.meta["chakra"], analytical_delivery(flows, net.message_ns))["finish"]


@needs_samples
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['workload']}-{c['system']}-{c['network']}")
def test_replay_gives_astra_sims_cycles(case, tmp_path):
    expected = [int(v) for v in case["finish_cycles_per_rank"].split()]
    assert _finish(*_inputs(case, tmp_path)).tolist() == expected


@needs_samples
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
@pytest.mark.parametrize("n", [4, 8, 16])
def test_bytes_per_rank_follow_the_ring_algorithm(collective, n):
    """Ring all-reduce sends 2(N-1)/N of the buffer per rank, reduce-scatter (N-1)/N, all-gather (N-1) times its
    input, ring all-to-all N(N-1)/2 hops of 1/N."""
    size = 1048576
    prefix = SHARED / "microbenchmarks" / collective / f"{n}npus_1MB" / collective
    flows = chakra_flows(read_chakra(prefix), read_astra_system(SHARED / "configs" / "Ring_4chunks.json"), range(n))
    sent = np.bincount(flows.src, weights=flows.size, minlength=n)
    expected = {"all_reduce": 2 * (n - 1) * size // n, "reduce_scatter": (n - 1) * size // n,
                "all_gather": (n - 1) * size, "all_to_all": n * (n - 1) // 2 * size // n}[collective]  # fmt: skip
    assert sent.tolist() == [expected] * n


@needs_samples
def test_custom_ring_moves_the_bytes_of_the_ring_collective(tmp_path):
    custom = read_chakra(SHARED / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce")
    system = read_astra_system(SHARED / "configs" / "Ring_4chunks.json")
    as_sends = chakra_flows(custom, system, range(8))
    ring = chakra_flows(read_chakra(SHARED / "microbenchmarks/all_reduce/8npus_1MB/all_reduce"), system, range(8))
    for flows in (as_sends, ring):
        assert (flows.dst == (flows.src + 1) % 8).all()
    sent = [np.bincount(f.src, weights=f.size).tolist() for f in (as_sends, ring)]
    assert sent[0] == sent[1]


def _coll(node_id, kind=CollectiveType.ALL_REDUCE, size=4096, deps=()):
    return ChakraNode(node_id, f"c{node_id}", NodeType.COMM_COLL_NODE, data_deps=deps, comm_type=kind, comm_size=size)


def _system(tmp_path, **extra) -> Path:
    settings = {"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
                "all-reduce-implementation": ["ring"], **extra}  # fmt: skip
    path = tmp_path / "system.json"
    path.write_text(json.dumps(settings))
    return path


def test_compute_after_communication_keeps_each_waits_own_delay(tmp_path):
    """A compute node that waits for a collective, then a second collective: the next compute waits for the
    first compute's chain and the second collective, each with its own delay (ASTRA-sim: max of the two)."""
    nodes = [
        ChakraNode(0, "c0", NodeType.COMM_COLL_NODE, comm_type=CollectiveType.ALL_REDUCE, comm_size=65536),
        ChakraNode(1, "comp1", NodeType.COMP_NODE, data_deps=(0,), duration_micros=100),
        _coll(2, size=65536, deps=(1,)),
        ChakraNode(3, "comp3", NodeType.COMP_NODE, data_deps=(1,), duration_micros=50),
        ChakraNode(4, "comp4", NodeType.COMP_NODE, data_deps=(3, 2), duration_micros=1),
    ]
    write_chakra(tmp_path / "t", [nodes] * 2)
    net = tmp_path / "net.yml"
    net.write_text("topology: [ Switch ]\nnpus_count: [ 2 ]\nbandwidth: [ 12.5 ]\nlatency: [ 500 ]\n")
    finish = _finish(tmp_path / "t", _system(tmp_path), net)
    ar = 10 + 2 * (1000 + int(32768 / 13.4217728) + 10) + 3 * int(32768 / 50e9 * 1e9)  # one ring all-reduce
    comp = 100_000 + 50_000
    assert finish.tolist() == [max(ar + comp, ar + 100_000 + ar) + 1000] * 2


def test_mismatched_collectives_name_the_node(tmp_path):
    write_chakra(tmp_path / "t", [[_coll(0, size=4096)], [_coll(0, size=8192)]])
    with pytest.raises(InputError, match=r"t\.1\.et: node 0 comm_type.*8192 B where rank 0 issues"):
        chakra_flows(read_chakra(tmp_path / "t"), read_astra_system(_system(tmp_path)), range(2))


def test_collective_some_rank_never_reaches_is_named(tmp_path):
    write_chakra(tmp_path / "t", [[_coll(0), _coll(1, deps=(0,))], [_coll(0)]])
    with pytest.raises(InputError, match=r"collective #1 of group '0' never starts: rank\(s\) \[1\]"):
        chakra_flows(read_chakra(tmp_path / "t"), read_astra_system(_system(tmp_path)), range(2))


def test_missing_algorithm_and_unknown_group_are_named(tmp_path):
    write_chakra(tmp_path / "t", [[_coll(0, kind=CollectiveType.ALL_GATHER)]] * 2)
    with pytest.raises(InputError, match="all-gather-implementation is not given"):
        chakra_flows(read_chakra(tmp_path / "t"), read_astra_system(_system(tmp_path)), range(2))
    node = ChakraNode(0, "c", NodeType.COMM_COLL_NODE, comm_type=CollectiveType.ALL_REDUCE, comm_size=64,
                      pg_name="7")  # fmt: skip
    write_chakra(tmp_path / "g", [[node]] * 2)
    with pytest.raises(InputError, match="communicator group '7'"):
        chakra_flows(read_chakra(tmp_path / "g"), read_astra_system(_system(tmp_path)), range(2))


def test_more_ranks_than_the_network_is_an_error(tmp_path):
    write_chakra(tmp_path / "t", [[_coll(0)]] * 2)
    with pytest.raises(InputError, match="2 ranks but the network has 4 NPUs"):
        chakra_flows(read_chakra(tmp_path / "t"), read_astra_system(_system(tmp_path)), range(4), dims=[4])
