"""Packet-mode benchmark on the reference's fat_perm64 inputs (320-host fat tree, 64 x 10 MB, DCQCN).

Prints the simulation's wall time, packet events per second, Numba compile time on a cold and on
a warm cache (each in a fresh process), and mean/max FCT. The reference ns-3 takes about 46 s for
this scenario on this machine kind (issue 2); the ratio is printed against that figure.

usage: python benchmarks/bench_fat_perm64.py [--shared PATH_TO_SHARED]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REFERENCE_NS3_SECONDS = 46.0  # issue 2: reference ns-3, optimized build, single core, this machine kind
COMPILE_SNIPPET = "from wormhole_lab.engine.runner import compile_engine; print(compile_engine())"


def compile_seconds(cache_dir: str) -> float:
    """Time compile_engine() in a new process whose Numba cache lives in cache_dir."""
    env = dict(os.environ, WORMHOLE_LAB_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[1] / ".." / "shared"))
    args = parser.parse_args()
    bench = Path(args.shared) / "reference" / "bench" / "fat_perm64"

    with tempfile.TemporaryDirectory() as cache:
        cold = compile_seconds(cache)
        warm = compile_seconds(cache)

    from wormhole_lab.engine.layout import G_EVENTS
    from wormhole_lab.engine.runner import advance, compile_engine
    from wormhole_lab.ns3_run import ns3_scenario
    from wormhole_lab.results import flows_dataset
    from wormhole_lab.simulation import prepare

    compile_engine()
    cwd = os.getcwd()
    os.chdir(bench)  # the config's paths are relative to the working directory, as in the reference
    try:
        scenario, _ = ns3_scenario("config.txt")
    finally:
        os.chdir(cwd)
    t0 = time.perf_counter()
    prepared = prepare(scenario)
    t_prepare = time.perf_counter() - t0
    t0 = time.perf_counter()
    stop = advance(prepared.state, scenario.config.stop_time_ps)
    wall = time.perf_counter() - t0
    ds = flows_dataset(prepared.state, scenario.flows, prepared.standalone_ps, {})
    events = int(prepared.state.g[G_EVENTS])
    fct_us = ds["fct"].values[ds["completed"].values == 1] / 1e6
    topo, flows = scenario.topology, scenario.flows
    print(f"scenario            fat_perm64: {topo.n_nodes} nodes, {len(flows)} flows, {scenario.config.cca}")
    print(f"stop                {stop}, {int(ds['completed'].sum())}/{len(scenario.flows)} flows completed")
    print(f"prepare (routing)   {t_prepare:.2f} s")
    print(f"simulation wall     {wall:.2f} s")
    print(f"events              {events:,}  ({events / wall:,.0f} events/s)")
    print(f"compile             cold {cold:.1f} s, warm (cache hit) {warm:.2f} s  (ratio {cold / warm:.0f}x)")
    print(
        f"FCT                 mean {fct_us.mean():.1f} us, max {fct_us.max():.1f} us, "
        f"mean slowdown {np.nanmean(ds['slowdown']):.3f}"
    )
    print(
        f"vs reference ns-3   {REFERENCE_NS3_SECONDS:.0f} s / {wall:.2f} s = "
        f"{REFERENCE_NS3_SECONDS / wall:.1f}x faster "
        f"(simulation alone; reference figure from issue 2, not re-measured here)"
    )


if __name__ == "__main__":
    main()
