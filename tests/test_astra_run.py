"""ASTRA-sim's inputs at packet level: every public sample trace runs in packet and in Wormhole mode, through the
Python API, ``wormhole-lab astra`` and a scenario file, and ends close to ASTRA-sim's own answer."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.astra_run import astra_scenario
from wormhole_lab.cli import main
from wormhole_lab.errors import InputError
from wormhole_lab.scenario_io import load_scenario
from wormhole_lab.simulation import Simulation
from wormhole_lab.telemetry import Telemetry, open_store

SHARED = Path(__file__).resolve().parents[2] / "shared" / "workloads" / "chakra"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the public Chakra samples are not at {SHARED}")
CUSTOM = SHARED / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"


def _samples():
    for collective in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        for n in (4, 8, 16):
            yield pytest.param(SHARED / "microbenchmarks" / collective / f"{n}npus_1MB" / collective, n, None,
                               id=f"{collective}-{n}")  # fmt: skip
    yield pytest.param(SHARED / "microbenchmarks/all_reduce/8npus_1MB/all_reduce", 8, CUSTOM, id="custom-ring-8")


def _system(custom, tmp_path) -> Path:
    if custom is None:
        return SHARED / "configs" / "Ring_4chunks.json"
    settings = json.loads((SHARED / "custom_collectives" / "custom_collective.json").read_text())
    path = tmp_path / "custom.json"
    path.write_text(json.dumps({**settings, "all-reduce-implementation-custom": [str(custom)]}))
    return path


@pytest.mark.parametrize("mode", ["packet", "wormhole"])
@pytest.mark.parametrize("prefix, n, custom", list(_samples()))
def test_every_sample_runs_close_to_astra_sim(prefix, n, custom, mode, tmp_path):
    """On ASTRA-sim's uncongested rings every rank finishes within 6 % above ASTRA-sim's congestion-unaware time:
    what packets add is the ACKs' share of each NPU's link (60 B per 1048 B packet: 5.7 % at most) and one
    packet's store-and-forward per hop and message (docs/chakra.md); never earlier, since packets cannot beat
    cut-through."""
    scenario = astra_scenario(prefix, _system(custom, tmp_path), SHARED / "configs" / f"Ring_{n}npus.yml")
    ds = Simulation(replace(scenario, telemetry=Telemetry.off()), mode=mode).run()
    finish, analytical = np.asarray(ds["rank_finish"]), np.asarray(ds["rank_analytical_finish"])
    assert (ds["completed"] == 1).all() and len(finish) == n
    assert (finish >= analytical).all() and (finish <= analytical * 1.06).all()
    sent = np.bincount(np.asarray(ds["src"]), weights=np.asarray(ds["size"]), minlength=n)
    assert (sent == sent[0]).all()  # every rank of a ring collective sends as much


def test_cli_prints_astra_sims_lines_and_writes_results(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["astra", f"--workload-configuration={SHARED}/microbenchmarks/all_reduce/4npus_1MB/all_reduce",
            f"--system-configuration={SHARED}/configs/Ring_4chunks.json",
            f"--network-configuration={SHARED}/configs/Ring_4npus.yml",
            f"--remote-memory-configuration={SHARED}/configs/no_memory_expansion.json", "--quiet"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    for rank in range(4):
        assert f"sys[{rank}] finished, " in out and "cycles, exposed communication" in out
    assert "ASTRA-sim analytical (congestion-unaware) 43,000 ns" in out
    ds = open_store(tmp_path / "astra.nc")  # the series, and the flow and rank results
    assert (
        ds.sizes["rank"] == 4
        and "port" in ds.dims
        and (tmp_path / "fct.txt").read_text().count("\n") == ds.sizes["flow"]
    )


@pytest.mark.parametrize(
    "extra, problem",
    [
        (["--num-queues-per-dim=2"], "--num-queues-per-dim: 2 is not modelled"),
        (["--remote-memory-configuration=mem.json"], "is not modelled (no remote memory traffic"),
    ],
)
def test_cli_refuses_what_it_does_not_model(tmp_path, capsys, monkeypatch, extra, problem):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mem.json").write_text('{"memory-type": "PER_NPU_MEMORY_EXPANSION"}')
    args = ["astra", f"--workload-configuration={SHARED}/microbenchmarks/all_reduce/4npus_1MB/all_reduce",
            f"--system-configuration={SHARED}/configs/Ring_4chunks.json",
            f"--network-configuration={SHARED}/configs/Ring_4npus.yml", "--quiet", *extra]  # fmt: skip
    assert main(args) == 2
    assert problem in capsys.readouterr().err


def test_trace_and_network_of_different_sizes_is_an_error():
    with pytest.raises(InputError, match="4 ranks but the network has 8 NPUs"):
        astra_scenario(SHARED / "microbenchmarks/all_reduce/4npus_1MB/all_reduce", SHARED / "configs/Ring_4chunks.json",
                       SHARED / "configs/Ring_8npus.yml")  # fmt: skip


def test_scenario_file_with_an_astra_network_and_chakra_flows(tmp_path):
    (tmp_path / "s.yaml").write_text(
        f"topology: {{astra: {SHARED}/configs/Ring_8npus.yml}}\n"
        f"flows: {{chakra: {{traces: {SHARED}/microbenchmarks/all_gather/8npus_1MB/all_gather, "
        f"system: {SHARED}/configs/Ring_4chunks.json}}}}\n"
        "cca: dcqcn\ntelemetry: off\n"
    )
    ds = Simulation(load_scenario(tmp_path / "s.yaml"), mode="wormhole").run()
    assert (np.asarray(ds["rank_analytical_finish"]) == 151016).all()  # ASTRA-sim's printed cycles
    assert (ds["rank_finish"] > 0).all()


def test_scenario_chakra_flows_on_any_topology_name_their_key(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "topology: {builder: star, n_hosts: 4}\n"
        f"flows: {{chakra: {{traces: {SHARED}/microbenchmarks/all_reduce/8npus_1MB/all_reduce, "
        f"system: {SHARED}/configs/Ring_4chunks.json}}}}\ncca: dcqcn\n"
    )
    with pytest.raises(InputError, match=r"s.yaml:2: flows.chakra: .*8 ranks but the topology only 4 hosts"):
        load_scenario(tmp_path / "s.yaml")
