"""Wormhole mode against packet mode on training iterations, for DCQCN and HPCC (issue 6's accuracy bar):
mean per-flow FCT error < 1 %, p99 < 5 %, iteration-time error < 1 %."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.workload.llm import training_iteration
from wormhole_lab.workload.models import get_model, placement_for

SIMAI = Path(__file__).resolve().parents[2] / ".." / "shared" / "workloads" / "simai"


def small(name: str, scale: float):
    model = get_model(name)
    return model.replace(
        hidden=int(model.hidden * scale) // 64 * 64,
        ffn=int(model.ffn * scale) // 64 * 64,
        layers=max(2, int(model.layers * scale)),
        vocab=4096,
        seq_len=512,
    )


def gpt_iteration():
    return rail_optimized(4, 8), training_iteration(small("GPT-7B", 0.25), placement_for("GPT-7B", 32))


def moe_iteration():
    return rail_optimized(8, 8), training_iteration(small("MoE-8x7B", 0.2), placement_for("MoE-8x7B", 64))


def simai_gpt7b():
    if not SIMAI.is_dir():
        pytest.skip(f"SimAI workloads not found at {SIMAI}")
    from wormhole_lab.workload.simai import read_simai, simai_flows

    flows = simai_flows(read_simai(SIMAI / "workload_gpt7b_64g.txt"))
    return rail_optimized(8, 8), replace(flows, size=np.maximum(flows.size // 200, 1000))  # 1/200 of the bytes


@pytest.mark.parametrize("cca", ["hp", "dcqcn"])
@pytest.mark.parametrize("workload", [gpt_iteration, moe_iteration, simai_gpt7b])
def test_wormhole_matches_packet_mode_on_a_training_iteration(workload, cca):
    topo, flows = workload()
    scenario = Scenario(topo, flows, preset(cca), telemetry=Telemetry.off())
    packet = Simulation(scenario, mode="packet").run()
    wormhole = Simulation(scenario, mode="wormhole").run()
    assert (wormhole["completed"] == 1).all()
    error = np.abs(wormhole["fct"].values / packet["fct"].values - 1)
    assert error.mean() < 0.01
    assert np.percentile(error, 99) < 0.05
    assert abs(wormhole.attrs["iteration_time_ps"] / packet.attrs["iteration_time_ps"] - 1) < 0.01
    if cca == "hp" and workload is not moe_iteration:
        assert wormhole.attrs["events_executed"] < 0.7 * packet.attrs["events_executed"]  # it did skip
