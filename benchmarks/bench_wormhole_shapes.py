"""Wormhole mode against packet mode on the four traffic shapes of issue 16, read as reference-style inputs.

The inputs are ``data/wormhole_shapes/<shape>/config_<cca>.txt`` (made by ``make_wormhole_shapes.py``, read as
``wormhole-lab ns3`` reads them). For each shape and CCA, in this one process: packet mode, then Wormhole mode
with a fresh memo DB (``--warm``: with the DB a first run left), alternating, ``--repeat`` pairs. One row each:
median wall times, the median (and range) of the pairs' wall-time speedups and the median CPU-time speedup, the
fraction of events skipped, skips taken, memo hits of lookups, and the per-flow FCT error against packet mode
(mean, p99, max).

usage: python benchmarks/bench_wormhole_shapes.py [--shapes waves,rail_steps,staggered_pair,random]
                                                  [--ccas hpcc,dcqcn] [--repeat 5] [--warm]
"""

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_wormhole import fct_error, timed
from make_wormhole_shapes import CCAS, DATA

from wormhole_lab.engine.runner import compile_engine
from wormhole_lab.ns3_run import ns3_scenario
from wormhole_lab.wormhole.settings import WormholeConfig

SHAPES = ("waves", "rail_steps", "staggered_pair", "random")


def pairs(repeat: int, scenario, config, warm: bool):
    """Packet mode and Wormhole mode ``repeat`` times, alternating: this VM's timing drifts by tens of percent within
    minutes even when idle, so each pair's ratio is taken in one stretch. The Wormhole run starts with an empty memo
    DB, or, if ``warm``, with the one a first run of the scenario left (a user's second run).
    Returns (last packet results, last Wormhole results, per-pair wall ratios, per-pair CPU ratios, median packet
    wall, median Wormhole wall)."""
    walls, cpus = [], []
    if warm:
        Path(config.memo).unlink(missing_ok=True)
        timed(scenario, "wormhole", config)
    for _ in range(repeat):
        runs = {}
        for mode in ("packet", "wormhole"):
            if mode == "wormhole" and not warm:
                Path(config.memo).unlink(missing_ok=True)
            t0 = time.process_time()
            ds, seconds = timed(scenario, mode, config if mode == "wormhole" else None)
            runs[mode] = (ds, seconds, time.process_time() - t0)
        (packet, wall_p, cpu_p), (ds, wall_w, cpu_w) = runs["packet"], runs["wormhole"]
        walls.append((wall_p, wall_w))
        cpus.append(cpu_p / cpu_w)
    wall_p, wall_w = (np.median([w[i] for w in walls]) for i in (0, 1))
    return packet, ds, [p / w for p, w in walls], cpus, wall_p, wall_w


def measure(shape: str, cca: str, repeat: int, memo: Path, warm: bool) -> None:
    with contextlib.chdir(DATA / shape):  # the config's paths are relative to its folder, as for the reference
        scenario, _ = ns3_scenario(f"config_{cca}.txt")
    config = WormholeConfig(memo=str(memo))
    packet, ds, wall_ratios, cpu_ratios, t_packet, t_worm = pairs(repeat, scenario, config, warm)
    err = fct_error(ds, packet)
    a = ds.attrs
    executed, skipped = a["events_executed"], a["events_skipped_estimate"]
    print(
        f"{shape:<15} {cca:<6} {len(scenario.flows):>5} {t_packet:8.2f} {t_worm:8.2f} {np.median(wall_ratios):7.2f}x "
        f"{min(wall_ratios):6.2f}-{max(wall_ratios):<5.2f} {np.median(cpu_ratios):7.2f}x "
        f"{skipped / (executed + skipped):8.1%} {a['skips']:6d} {a['memo_hits']:5d}/{a['memo_lookups']:<5d} "
        f"{err.mean():8.3%} {np.percentile(err, 99):8.3%} {err.max():8.3%}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--ccas", default=",".join(CCAS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warm", action="store_true", help="Wormhole runs start with the memo DB of a first run")
    args = parser.parse_args()
    print(f"compile (or load the cache) {compile_engine():.1f} s")
    print(
        f"{'shape':<15} {'cca':<6} {'flows':>5} {'packet s':>8} {'worm s':>8} {'speedup':>8} {'range':>11} {'CPU':>8} "
        f"{'skipped':>8} "
        f"{'skips':>6} {'memo hits':>11} {'FCT mean':>8} {'p99':>8} {'max':>8}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes.split(","):
            for cca in args.ccas.split(","):
                measure(shape, cca, args.repeat, Path(folder) / f"{shape}_{cca}.sqlite", args.warm)


if __name__ == "__main__":
    main()
