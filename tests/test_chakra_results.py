"""Per-rank results of a Chakra trace's run: ASTRA-sim's finish, exposed communication and the time of each kind
of node, from the flows' delivery times."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.astra_run import astra_scenario
from wormhole_lab.chakra_results import astra_lines
from wormhole_lab.simulation import Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.workload.chakra import ChakraNode, CollectiveType, NodeType, write_chakra

SHARED = Path(__file__).resolve().parents[2] / "shared" / "workloads" / "chakra"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the public ASTRA-sim configs are not at {SHARED}")


def test_compute_and_collective_times_per_rank(tmp_path):
    """A trace with compute: ranks report ASTRA-sim's exposed communication (finish minus compute)."""
    nodes = [ChakraNode(0, "fwd", NodeType.COMP_NODE, duration_micros=20),
             ChakraNode(1, "ar", NodeType.COMM_COLL_NODE, data_deps=(0,), comm_type=CollectiveType.ALL_REDUCE,
                        comm_size=1 << 20)]  # fmt: skip
    write_chakra(tmp_path / "t", [nodes] * 4)
    scenario = astra_scenario(tmp_path / "t", SHARED / "configs/Ring_4chunks.json", SHARED / "configs/Ring_4npus.yml")
    ds = Simulation(replace(scenario, telemetry=Telemetry.off()), mode="packet").run()
    assert (ds["rank_compute_time"] == 20_000).all()
    assert (ds["rank_exposed_comm"] == ds["rank_finish"] - 20_000).all()
    assert (ds["rank_collective_time"] == ds["rank_finish"] - 20_000).all()
    assert (ds["rank_analytical_finish"] == 20_000 + 43_000).all()  # ASTRA-sim: the 4-NPU ring all-reduce, 43000


def test_astra_lines_read_like_astra_sims():
    ds = {"rank_finish": np.array([100, 120]), "rank_exposed_comm": np.array([60, 80]),
          "rank_analytical_finish": np.array([100, 100])}  # fmt: skip

    class Data(dict):
        attrs = {"astra_assumed": "scheduling-policy FIFO"}

    lines = astra_lines(Data(ds))
    assert lines[:2] == ["sys[0] finished, 100 cycles, exposed communication 60 cycles.",
                         "sys[1] finished, 120 cycles, exposed communication 80 cycles."]  # fmt: skip
    assert "120 ns here; ASTRA-sim analytical (congestion-unaware) 100 ns (+20.00%)" in lines[2]
    assert lines[3] == "assumed         scheduling-policy FIFO"
