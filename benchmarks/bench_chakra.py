"""ASTRA-sim's workloads at packet level (issue 57): every sample trace against ASTRA-sim, and 1,024 ranks.

1. Every public Chakra sample (``../shared/workloads/chakra``: all-reduce, all-gather, reduce-scatter, all-to-all on
   4, 8 and 16 NPUs, and the custom ring all-reduce on 8) on two networks:
   - ``ring``: ASTRA-sim's shipped ``Ring_{N}npus.yml`` (50 GB/s, 500 ns) with its ``Ring_4chunks.json``;
   - ``switch``: one switch at 12.5 GB/s (ASTRA-sim's GB are 2^30 B, so 107 Gb/s of message bytes), 500 ns per hop,
     ring algorithms in 4 chunks (``tests/data/astra_sim/configs``).
   Each runs in packet mode and in Wormhole mode (DCQCN, the default). Printed: the slowest rank's finish in ns
   (ASTRA-sim's cycles) from ASTRA-sim's congestion-unaware model (``workload.astra_replay``, equal to the real
   binary's printout on all 217 recorded runs, tests/workload/test_chakra_flows.py) and from each mode, their
   relative difference, and each mode's simulation time. With ``--astra-bin`` the real binary runs too, side by
   side, and its printed cycles and wall time are shown.
2. A synthetic 1,024-rank trace: ``--layers`` layers, each a compute node then one all-reduce of ``--size`` bytes,
   on one switch at 12.5 GB/s (100 Gb/s NICs) with halvingDoubling, through
   ``wormhole-lab astra`` in a fresh process, Wormhole mode: the whole process's wall time (target < 2 min) and
   peak RSS, the trace's read time.

usage:
    python benchmarks/bench_chakra.py
    python benchmarks/bench_chakra.py --parts 1 --astra-bin /work/astra/build/bin/AstraSim_Analytical_Congestion_Unaware
    python benchmarks/bench_chakra.py --parts 2 --layers 32
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import run_process, versions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "workloads" / "chakra"
DATA = ROOT / "tests" / "data" / "astra_sim" / "configs"


def cases():
    """(name, trace prefix, system JSON, network YAML) of part 1."""
    for collective in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        for n in (4, 8, 16):
            prefix = SHARED / "microbenchmarks" / collective / f"{n}npus_1MB" / collective
            yield (
                f"{collective} {n} ring",
                prefix,
                SHARED / "configs/Ring_4chunks.json",
                SHARED / f"configs/Ring_{n}npus.yml",
            )
            yield (f"{collective} {n} switch", prefix, DATA / "sys_ring_split4_chunks1_delay10.json",
                   DATA / f"Switch_{n}npus_12.5GBps_500ns.yml")  # fmt: skip
    custom = SHARED / "custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce"
    system = Path(tempfile.mkdtemp()) / "custom.json"
    settings = json.loads((SHARED / "custom_collectives/custom_collective.json").read_text())
    system.write_text(json.dumps({**settings, "all-reduce-implementation-custom": [str(custom)]}))
    yield (
        "custom ring 8 ring",
        SHARED / "microbenchmarks/all_reduce/8npus_1MB/all_reduce",
        system,
        SHARED / "configs/Ring_8npus.yml",
    )


def astra_binary(binary: str, prefix, system, network) -> tuple[int, float]:
    """(slowest rank's cycles, wall seconds) of the real ASTRA-sim on one case, in a scratch folder (it writes log/)."""
    with tempfile.TemporaryDirectory() as scratch:
        t0 = time.perf_counter()
        out = subprocess.run(
            [binary, f"--workload-configuration={prefix}", f"--system-configuration={system}",
             f"--network-configuration={network}",
             f"--remote-memory-configuration={SHARED / 'configs/no_memory_expansion.json'}"],
            cwd=scratch, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        wall = time.perf_counter() - t0
    cycles = [int(line.split("finished, ")[1].split(" cycles")[0]) for line in out.splitlines() if "finished," in line]
    return max(cycles), wall


def part1(args) -> None:
    from wormhole_lab.astra_run import astra_scenario
    from wormhole_lab.simulation import Simulation
    from wormhole_lab.telemetry import Telemetry

    print("\n## 1. every sample trace: slowest rank's finish (ns = ASTRA-sim cycles)\n")
    head = f"{'case':<24}{'ASTRA-sim':>11}{'packet':>11}{'diff':>8}{'wormhole':>11}{'diff':>8}{'pkt s':>7}{'wh s':>7}"
    print(head + ("  binary cycles, s" if args.astra_bin else ""))
    worst = {"packet": 0.0, "wormhole": 0.0}
    for name, prefix, system, network in cases():
        scenario = astra_scenario(prefix, system, network)
        scenario = replace(scenario, telemetry=Telemetry.off())
        row, analytical = [], None
        for mode in ("packet", "wormhole"):
            ds = Simulation(scenario, mode=mode).run()
            finish = int(np.asarray(ds["rank_finish"]).max())
            analytical = int(np.asarray(ds["rank_analytical_finish"]).max())
            diff = (finish - analytical) / analytical
            worst[mode] = max(worst[mode], abs(diff))
            row.append((finish, diff, ds.attrs["wall_seconds"]))
        (pf, pd, pw), (wf, wd, ww) = row
        line = f"{name:<24}{analytical:>11,}{pf:>11,}{pd:>+8.2%}{wf:>11,}{wd:>+8.2%}{pw:>7.2f}{ww:>7.2f}"
        if args.astra_bin:
            cycles, wall = astra_binary(args.astra_bin, prefix, system, network)
            line += f"  {cycles:,} {'(=)' if cycles == analytical else '(differs!)'}, {wall:.3f}"
        print(line)
    print(f"\nlargest |difference| from ASTRA-sim: packet {worst['packet']:.2%}, Wormhole {worst['wormhole']:.2%}")


def synthetic_trace(folder: Path, ranks: int, layers: int, size: int, compute_us: int) -> Path:
    from wormhole_lab.workload.chakra import ChakraNode, CollectiveType, NodeType, write_chakra

    nodes = []
    for layer in range(layers):
        comp, coll = 2 * layer, 2 * layer + 1
        nodes.append(ChakraNode(comp, f"layer{layer}_compute", NodeType.COMP_NODE,
                                data_deps=(comp - 2,) if layer else (), duration_micros=compute_us))  # fmt: skip
        nodes.append(ChakraNode(coll, f"layer{layer}_allreduce", NodeType.COMM_COLL_NODE, data_deps=(comp,),
                                comm_type=CollectiveType.ALL_REDUCE, comm_size=size))  # fmt: skip
    write_chakra(folder / "synthetic", [nodes] * ranks)
    return folder / "synthetic"


def part2(args) -> None:
    print(f"\n## 2. {args.ranks:,} ranks, {args.layers} layers of compute + all-reduce of {args.size:,} B, Wormhole\n")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        t0 = time.perf_counter()
        prefix = synthetic_trace(work, args.ranks, args.layers, args.size, args.compute_us)
        print(f"trace written in {time.perf_counter() - t0:.1f} s")
        (work / "network.yml").write_text(  # one switch at 100 Gb/s NICs (12.5 GB/s), 500 ns per hop
            f"topology: [ Switch ]\nnpus_count: [ {args.ranks} ]\nbandwidth: [ 12.5 ]\nlatency: [ 500.0 ]\n"
        )
        (work / "system.json").write_text(json.dumps({
            "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
            "preferred-dataset-splits": 1, "all-reduce-implementation": ["halvingDoubling"],
            "collective-optimization": "localBWAware", "local-mem-bw": 1600,
        }))  # fmt: skip
        command = [sys.executable, "-m", "wormhole_lab.cli", "astra", f"--workload-configuration={prefix}",
                   f"--system-configuration={work / 'system.json'}", f"--network-configuration={work / 'network.yml'}",
                   "--mode", "wormhole", "--quiet", "--out", str(work)]  # fmt: skip
        wall, rss, out = run_process(command, ROOT)
        lines = out.splitlines()
        for line in lines:
            if line.startswith(("slowest rank", "ranks ", "flows ", "simulated", "wall time", "memory")):
                print(line)
        print(f"whole process   {wall:.1f} s (target < 120 s), peak RSS {rss / 2**30:.2f} GiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="12", help="which parts to run (default 12)")
    parser.add_argument("--astra-bin", help="ASTRA-sim's AstraSim_Analytical_Congestion_Unaware, to run side by side")
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--size", type=int, default=16 * 2**20, help="bytes per all-reduce (default 16 MiB)")
    parser.add_argument("--compute-us", type=int, default=100, help="compute per layer, us (default 100)")
    args = parser.parse_args()
    print(versions())
    if not SHARED.is_dir():
        sys.exit(f"the Chakra samples are not at {SHARED}")
    if "1" in args.parts:
        part1(args)
    if "2" in args.parts:
        part2(args)


if __name__ == "__main__":
    main()
