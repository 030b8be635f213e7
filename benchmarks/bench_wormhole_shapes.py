"""Wormhole mode against packet mode on the four traffic shapes of issue 16, read as reference-style inputs.

The inputs are ``data/wormhole_shapes/<shape>/config_<cca>.txt`` (made by ``make_wormhole_shapes.py``, read as
``wormhole-lab ns3`` reads them). For each shape and CCA, in this one process: packet mode, then Wormhole mode
with a fresh memo DB, ``--repeat`` times each (best times kept: the machine is shared). One row each:
wall-time and CPU-time speedup, the fraction of events skipped, skips taken, memo hits of lookups, and the
per-flow FCT error against packet mode (mean, p99, max).

usage: python benchmarks/bench_wormhole_shapes.py [--shapes waves,rail_steps,staggered_pair,random]
                                                  [--ccas hpcc,dcqcn] [--repeat 1]
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


def best_of(repeat: int, scenario, mode: str, config=None):
    """(results of the last run, best wall time, best CPU time) over ``repeat`` runs; a memo DB is emptied
    before each. CPU time is printed too: on a loaded machine it moves less than wall time."""
    wall, cpu = np.inf, np.inf
    for _ in range(repeat):
        if config is not None:
            Path(config.memo).unlink(missing_ok=True)
        t0 = time.process_time()
        ds, seconds = timed(scenario, mode, config)
        wall, cpu = min(wall, seconds), min(cpu, time.process_time() - t0)
    return ds, wall, cpu


def measure(shape: str, cca: str, repeat: int, memo: Path) -> None:
    with contextlib.chdir(DATA / shape):  # the config's paths are relative to its folder, as for the reference
        scenario, _ = ns3_scenario(f"config_{cca}.txt")
    packet, t_packet, cpu_packet = best_of(repeat, scenario, "packet")
    ds, t_worm, cpu_worm = best_of(repeat, scenario, "wormhole", WormholeConfig(memo=str(memo)))
    err = fct_error(ds, packet)
    a = ds.attrs
    executed, skipped = a["events_executed"], a["events_skipped_estimate"]
    print(
        f"{shape:<15} {cca:<6} {len(scenario.flows):>5} {t_packet:8.2f} {t_worm:8.2f} {t_packet / t_worm:7.2f}x "
        f"{cpu_packet / cpu_worm:7.2f}x "
        f"{skipped / (executed + skipped):8.1%} {a['skips']:6d} {a['memo_hits']:5d}/{a['memo_lookups']:<5d} "
        f"{err.mean():8.3%} {np.percentile(err, 99):8.3%} {err.max():8.3%}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--ccas", default=",".join(CCAS))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"compile (or load the cache) {compile_engine():.1f} s")
    print(
        f"{'shape':<15} {'cca':<6} {'flows':>5} {'packet s':>8} {'worm s':>8} {'speedup':>8} {'CPU':>8} {'skipped':>8} "
        f"{'skips':>6} {'memo hits':>11} {'FCT mean':>8} {'p99':>8} {'max':>8}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes.split(","):
            for cca in args.ccas.split(","):
                measure(shape, cca, args.repeat, Path(folder) / f"{shape}_{cca}.sqlite")


if __name__ == "__main__":
    main()
