"""How generator_fcts.npz was made (at fc63fe1, before incremental max-min): flow mode's starts and FCTs on three
small generator workloads. Run from the repository root: python tests/data/flowlevel/make_generator_fcts.py
"""

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.traffic_gen import cdf_from_points, poisson_on_topology

ALI = cdf_from_points(
    [
        (0, 0),
        (4000, 22.93),
        (8000, 69.21),
        (16000, 80.61),
        (32000, 90.47),
        (64000, 93.53),
        (128000, 96.77),
        (256000, 97.53),
        (2000000, 100),
    ],
    source="AliStorage2019",
)
WEB = cdf_from_points(
    [
        (0, 0),
        (10000, 15),
        (20000, 20),
        (30000, 30),
        (50000, 40),
        (80000, 53),
        (200000, 60),
        (1000000, 70),
        (2000000, 80),
        (5000000, 90),
        (10000000, 97),
        (30000000, 100),
    ],
    source="WebSearch",
)
cases = {
    "ali70_dcqcn": (fat_tree(4), ALI, 0.7, 300_000_000, "dcqcn"),
    "web60_hpcc_oversub": (fat_tree(4, host_rate_bps=400 * 10**9), WEB, 0.6, 600_000_000, "hp"),
    "ali60_hpcc_oversub": (fat_tree(4, host_rate_bps=400 * 10**9), ALI, 0.6, 60_000_000, "hp"),
}
out = {}
for name, (topo, cdf, load, dur, cca) in cases.items():
    flows = poisson_on_topology(topo, cdf, load, dur, seed=7)
    ds = Simulation(Scenario(topo, flows, preset(cca), telemetry=Telemetry.off()), mode="flow").run()
    print(name, len(flows), ds.attrs["rate_recomputations"], ds.attrs["largest_recomputed_set"])
    for col in ("src", "dst", "size", "start_ps"):
        out[f"{name}/{col}"] = getattr(flows, col)
    out[f"{name}/start"] = ds["start"].values
    out[f"{name}/fct"] = ds["fct"].values
np.savez_compressed("/work/main/tests/data/flowlevel/generator_fcts.npz", **out)
