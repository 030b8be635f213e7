"""Write the four traffic shapes of issue 16 as reference-style inputs in ``data/wormhole_shapes/<shape>/``.

Each folder holds ``topology.txt``, ``flow.txt`` and ``config_hpcc.txt`` / ``config_dcqcn.txt`` (what
``run.py --cc hp|dcqcn --bw 100`` writes, with relative paths: run ``wormhole-lab ns3 config_hpcc.txt`` from
inside the folder, as the reference runs). Flows have fixed start times (the reference's format has no
dependencies), so every later flow start is known in advance.

- ``waves``: six identical waves 4 ms apart on the reference's 320-host fat tree (fat_perm64's topology). A
  wave: four 4-host rings, one 8 MB flow per edge, each ring across four ToRs; plus a 6-to-1 incast of 2 MB
  flows from three other ToRs.
- ``rail_steps``: six identical steps 2 ms apart of the inter-server part of a rail-aligned all-reduce on a
  4-server x 8-GPU rail-optimised cluster: on each rail a ring of the four servers' GPUs, each sending 16 MB
  to the next server's (32 flows a step; every rank sends and receives, through its rail switch only).
- ``staggered_pair``: two 50 MB flows into one host of a 3-host star, the second 300 us after the first.
- ``random``: 30000 flows of 2-60 kB between random hosts of a 32-host leaf-spine (``bench_wormhole``'s
  never-steady control).

usage: python benchmarks/make_wormhole_shapes.py [--shared ../shared]
"""

import argparse
from pathlib import Path

import numpy as np
from bench_wormhole import random_short_traffic
from side_by_side import SHARED

from wormhole_lab.engine.presets import preset
from wormhole_lab.ns3_config import write_ns3_config
from wormhole_lab.topology.builders import rail_optimized, star
from wormhole_lab.topology.hpcc_format import write_topology
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.workload.hpcc_flow_format import write_flows

DATA = Path(__file__).resolve().parents[1] / "data" / "wormhole_shapes"
MS = 10**9  # ps
CCAS = {"hpcc": "hp", "dcqcn": "dcqcn"}
STOP_PS = 10**12  # 1 s, far past the last completion (about 22 ms)
WAVES = 6  # waves in `waves`, 4 ms apart
INCAST_BYTES = 2_000_000  # each incast flow of a wave (its rings' flows carry 8 MB)


def repeated(src, dst, size, n: int, every_ps: int):
    """The flows (src, dst, size) started together, ``n`` times, ``every_ps`` apart."""
    k = len(src)
    starts = np.repeat(np.arange(n, dtype=np.int64) * every_ps, k)
    return make_flows(np.tile(src, n), np.tile(dst, n), np.tile(size, n), starts)


def waves():
    hosts_per_tor = 16
    src, dst, size = [], [], []
    for ring in range(4):
        members = [(ring * 4 + i) * hosts_per_tor + ring for i in range(4)]  # ToRs 4r..4r+3
        src += members
        dst += members[1:] + members[:1]
        size += [8_000_000] * 4
    receiver = 19 * hosts_per_tor
    senders = [tor * hosts_per_tor + h for tor in (16, 17, 18) for h in (1, 2)]
    src += senders
    dst += [receiver] * 6
    size += [INCAST_BYTES] * 6
    return repeated(src, dst, size, WAVES, 4 * MS)


def rail_steps():
    servers, gpus = 4, 8
    ranks = np.arange(servers * gpus)  # GPU g of server s is rank s * gpus + g, on rail g
    return repeated(ranks, (ranks + gpus) % len(ranks), [16_000_000] * len(ranks), 6, 2 * MS)


def staggered_pair():
    return make_flows([1, 2], [0, 0], [50_000_000] * 2, [0, 300_000_000])


def write_shape(name: str, topology, flows) -> Path:
    folder = DATA / name
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(topology, Path):
        (folder / "topology.txt").write_bytes(topology.read_bytes())
    else:
        write_topology(topology, folder / "topology.txt", fmt="hpcc")
    write_flows(flows, folder / "flow.txt")
    for cca, name_ in CCAS.items():
        write_ns3_config(
            preset(name_).with_(stop_time_ps=STOP_PS),
            folder / f"config_{cca}.txt",
            topology_file="topology.txt",
            flow_file="flow.txt",
            fct_output_file=f"fct_{cca}.txt",
            pfc_output_file=f"pfc_{cca}.txt",
            enable_trace=False,
        )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(SHARED))
    args = parser.parse_args()
    fat_tree = Path(args.shared) / "reference" / "bench" / "fat_perm64" / "topology.txt"
    for name, topology, flows in (
        ("waves", fat_tree, waves()),
        ("rail_steps", rail_optimized(4, 8), rail_steps()),
        ("staggered_pair", star(3), staggered_pair()),
        ("random", *random_short_traffic(30000)),
    ):
        print(f"{write_shape(name, topology, flows)}: {len(flows)} flows")


if __name__ == "__main__":
    main()
