"""Scenario builders: ready-made clusters and traffic, for the CLI, notebooks, apps and tests alike.

Here, the built-in fat-tree permutation (the CLI's default scenario); ``teaching``: small scenarios of a few flows
for live plots (incast, staggered flows, parking lot); ``training``: training iterations of the model presets and
SimAI files, shrunk by a size scale to run interactively. The views in ``wormhole_lab.viz`` build none of their own.
"""

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.generators import permutation


def fat_tree_permutation(k: int = 4, flow_bytes: int = 1_000_000, cca: str = "dcqcn", seed: int = 1) -> Scenario:
    """Every host of a k-ary fat tree (100G hosts and fabric, 1 us links) sends one flow at t=0 to a
    random other host (a permutation drawn from ``seed``), as in the reference's fat-tree benchmarks."""
    topo = fat_tree(k)
    return Scenario(
        topo,
        permutation(topo, flow_bytes, seed),
        preset(cca, host_bw_gbps=100).with_(seed=seed),
        name=f"fat-tree k={k} permutation, {len(topo.hosts)} x {flow_bytes} B, {cca}",
    )


def default_scenario() -> Scenario:
    """The main job's scenario: a k=8 fat tree (128 hosts), one 1 MB flow per host in a permutation, DCQCN."""
    return fat_tree_permutation(k=8)
