"""data/wormhole_shapes: every config reads from inside its folder, as the reference's do, in a clean clone."""

import contextlib
from pathlib import Path

import pytest

from wormhole_lab.ns3_config import read_ns3_config
from wormhole_lab.ns3_run import ns3_scenario

SHAPES = Path(__file__).resolve().parents[1] / "data" / "wormhole_shapes"
FLOWS = {"waves": 132, "rail_steps": 192, "staggered_pair": 2, "random": 30000}


@pytest.mark.parametrize("cca", ["hpcc", "dcqcn"])
@pytest.mark.parametrize("shape", sorted(FLOWS))
def test_a_shape_config_reads_with_relative_paths(shape, cca):
    config = SHAPES / shape / f"config_{cca}.txt"
    parsed = read_ns3_config(config)
    for name in (parsed.topology_file, parsed.flow_file, parsed.fct_output_file, parsed.pfc_output_file):
        assert not Path(name).is_absolute() and Path(name).parent == Path(".")
    with contextlib.chdir(config.parent):
        scenario, _ = ns3_scenario(config.name)
    assert len(scenario.flows) == FLOWS[shape]
    assert scenario.config.cca == cca
