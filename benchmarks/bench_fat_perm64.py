"""Packet-mode benchmark on the reference's fat_perm64 inputs (320-host fat tree, 64 x 10 MB, DCQCN).

Prints, all measured in this one run:
- Numba compile time on a cold and on a warm cache (each in a fresh process);
- the reference config (DCQCN, telemetry off): simulation wall time, packet events per second,
  mean and max FCT, and the ratio to the reference ns-3's ~46 s for this scenario (issue 2's figure);
- the same with full telemetry (every switch port and flow at 1 us) and its slowdown ratio;
- events per second for each congestion control (DCQCN, HPCC, TIMELY, DCTCP) on the same scenario.

usage: python benchmarks/bench_fat_perm64.py [--shared PATH_TO_SHARED]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REFERENCE_NS3_SECONDS = 46.0  # issue 2: reference ns-3, optimized build, single core, this machine kind
COMPILE_SNIPPET = "from wormhole_lab.engine.runner import compile_engine; print(compile_engine())"


def compile_seconds(cache_dir: str) -> float:
    """Time compile_engine() in a new process whose Numba cache lives in cache_dir."""
    env = dict(os.environ, WORMHOLE_LAB_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def timed_run(scenario):
    """(dataset, simulation seconds) of one packet-mode run."""
    from wormhole_lab.simulation import Simulation

    sim = Simulation(scenario)
    ds = sim.run()
    return ds, ds.attrs["wall_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[1] / ".." / "shared"))
    args = parser.parse_args()
    bench = Path(args.shared) / "reference" / "bench" / "fat_perm64"

    with tempfile.TemporaryDirectory() as cache:
        cold = compile_seconds(cache)
        warm = compile_seconds(cache)

    from wormhole_lab.engine.presets import preset
    from wormhole_lab.engine.runner import compile_engine
    from wormhole_lab.ns3_run import ns3_scenario
    from wormhole_lab.telemetry import Telemetry

    compile_engine()
    cwd = os.getcwd()
    os.chdir(bench)  # the config's paths are relative to the working directory, as in the reference
    try:
        scenario, _ = ns3_scenario("config.txt")
    finally:
        os.chdir(cwd)
    quiet = replace(scenario, telemetry=Telemetry.off())
    ds, wall = timed_run(quiet)
    events = ds.attrs["events_executed"]
    fct_us = ds["fct"].values[ds["completed"].values == 1] / 1e6
    topo, flows = scenario.topology, scenario.flows
    print(f"scenario            fat_perm64: {topo.n_nodes} nodes, {len(flows)} flows, {scenario.config.cca}")
    print(f"completed           {int(ds['completed'].sum())}/{len(flows)} flows, stop: {ds.attrs['stop_reason']}")
    print(f"simulation wall     {wall:.2f} s (telemetry off)")
    print(f"events              {events:,}  ({events / wall:,.0f} events/s)")
    print(f"compile             cold {cold:.1f} s, warm (cache hit) {warm:.2f} s  (cold/warm {cold / warm:.0f}x)")
    print(f"FCT                 mean {fct_us.mean():.1f} us, max {fct_us.max():.1f} us")
    print(
        f"vs reference ns-3   {REFERENCE_NS3_SECONDS:.0f} s / {wall:.2f} s = "
        f"{REFERENCE_NS3_SECONDS / wall:.1f}x faster "
        "(reference time from issue 2, not re-measured here)"
    )

    full, wall_full = timed_run(replace(scenario, telemetry=Telemetry()))
    print(
        f"telemetry on        {wall_full:.2f} s with {full.sizes['port']} ports x {full.sizes['flow']} flows every "
        f"1 us ({full.sizes['time']} samples): {wall_full / wall:.2f}x the time with telemetry off"
    )

    for name in ("dcqcn", "hp", "timely", "dctcp"):
        ds, wall_cca = timed_run(replace(quiet, config=preset(name, 100)))
        events = ds.attrs["events_executed"]
        fct = ds["fct"].values[ds["completed"].values == 1] / 1e6
        print(
            f"cca {name:<7}         {events:>11,} events in {wall_cca:.2f} s = {events / wall_cca:>10,.0f} events/s; "
            f"mean FCT {fct.mean():.1f} us, max {fct.max():.1f} us"
        )


if __name__ == "__main__":
    main()
