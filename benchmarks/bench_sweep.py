"""A 16-case sweep on a 2-worker Dask LocalCluster against the same cases run one after another in one process.

The cases: eight rounds of a 4-to-1 incast (each round after the previous), Wormhole mode with a shared memo
DB, HPCC, seeds 1-16 (the seed is not part of the memo key, so every case can use what others stored).
Prints the throughput ratio (cases per second, sweep / sequential) and the memo hit rate of each batch.

usage: python benchmarks/bench_sweep.py
"""

import tempfile
import time
from pathlib import Path

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario
from wormhole_lab.sweep import run_case, sweep
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows


def rounds() -> Scenario:
    """Eight rounds of a 4-to-1 incast (20 MB each), each round after the previous one."""
    src, dst, size, deps = [], [], [], []
    for r in range(8):
        for k in (1, 2, 3, 4):
            src.append(k)
            dst.append(0)
            size.append(20_000_000)
            deps.append(tuple(range(4 * (r - 1), 4 * r)) if r else ())
    flows = make_flows(src, dst, size, 0, deps=deps)
    return Scenario(star(5), flows, preset("dctcp"), telemetry=Telemetry.off(), name="rounds")


def main() -> None:
    base = rounds()
    axes = {"mode": ["packet", "wormhole"], "config.seed": list(range(1, 9))}
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        for mode in axes["mode"]:
            for seed in axes["config.seed"]:
                run_case(base, {"mode": mode, "config.seed": seed}, str(Path(folder) / "sequential.sqlite"))
        sequential = time.perf_counter() - t0
        t0 = time.perf_counter()
        ds = sweep(base, axes, memo=str(Path(folder) / "shared.sqlite"))
        parallel = time.perf_counter() - t0
    rates = ", ".join(f"{r:.0%}" for r in ds["batch_memo_hit_rate"].values)
    print(
        f"16 cases: sequential {sequential:.1f} s, sweep on a 2-worker LocalCluster {parallel:.1f} s "
        f"(throughput ratio {sequential / parallel:.2f}x, cluster start-up included); failed {ds.attrs['failed']}"
    )
    print(f"memo hit rate per batch: {rates}")


if __name__ == "__main__":
    main()
