"""Built-in scenarios: ready-made clusters and traffic for the CLI, tests and notebooks."""

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.flows import make_flows


def fat_tree_permutation(k: int = 4, flow_bytes: int = 1_000_000, cca: str = "dcqcn", seed: int = 1) -> Scenario:
    """Every host of a k-ary fat tree (100G hosts and fabric, 1 us links) sends one flow at t=0 to a
    random other host (a permutation drawn from ``seed``), as in the reference's fat-tree benchmarks."""
    topo = fat_tree(k)
    hosts = topo.hosts
    rng = np.random.default_rng(seed)
    while True:
        dst = rng.permutation(hosts)
        if not np.any(dst == hosts):
            break
    flows = make_flows(hosts, dst, np.full(len(hosts), flow_bytes), 0)
    return Scenario(
        topo,
        flows,
        preset(cca, host_bw_gbps=100).with_(seed=seed),
        name=f"fat-tree k={k} permutation, {len(hosts)} x {flow_bytes} B, {cca}",
    )


def default_scenario() -> Scenario:
    """The main job's scenario: a k=8 fat tree (128 hosts), one 1 MB flow per host in a permutation, DCQCN."""
    return fat_tree_permutation(k=8)
