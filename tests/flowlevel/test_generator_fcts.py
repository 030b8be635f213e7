"""Flow mode on small generator workloads gives the FCTs it gave before incremental max-min.

``tests/data/flowlevel/generator_fcts.npz`` holds, per case, the flows (``poisson_on_topology``, seed 7) and the
start and FCT of every flow as flow mode computed them at commit fc63fe1, when every instant water-filled the
whole connected component of the touched flows. The incremental recomputation must give the same picoseconds.
"""

from pathlib import Path

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.flows import make_flows

DATA = Path(__file__).resolve().parents[1] / "data" / "flowlevel" / "generator_fcts.npz"
G400 = 400 * 10**9

# name: (topology, CCA preset). AliStorage2019 at 70 % on a k=4 fat tree (1,035 flows, host links are the
# bottlenecks); WebSearch at 60 % and AliStorage2019 at 60 % with 400G hosts on a 100G fabric (fabric links are)
CASES = {
    "ali70_dcqcn": (lambda: fat_tree(4), "dcqcn"),
    "web60_hpcc_oversub": (lambda: fat_tree(4, host_rate_bps=G400), "hp"),
    "ali60_hpcc_oversub": (lambda: fat_tree(4, host_rate_bps=G400), "hp"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fcts_equal_the_recorded_ones(name):
    topo, cca = CASES[name]
    data = np.load(DATA)
    flows = make_flows(*(data[f"{name}/{col}"] for col in ("src", "dst", "size", "start_ps")))
    ds = Simulation(Scenario(topo(), flows, preset(cca), telemetry=Telemetry.off()), mode="flow").run()
    np.testing.assert_array_equal(ds["start"].values, data[f"{name}/start"])
    np.testing.assert_array_equal(ds["fct"].values, data[f"{name}/fct"])
