"""Flow mode against packet mode on the same inputs, in one process: wall time, speedup, FCT error.

Cases: the reference's fat_perm64 (320-host fat tree, 64 x 10 MB, DCQCN; ``../shared/reference/bench/fat_perm64``,
read by the ns-3 drop-in's reader), and one GPT-7B training iteration on 64 GPUs (rail-optimised, HPCC, the
model shrunk by ``--scale`` as ``bench_wormhole.py`` does). Each mode runs ``--repeat`` times, alternating; the
best wall time counts (the machine is shared). Printed: wall time of the simulation alone (the runs' own
``wall_seconds``) and of the whole run (routing and table building included), the speedups, events, and mean /
p99 per-flow FCT error and iteration-time error of flow mode against packet mode.

Generator workloads (``--generator``): the reference's traffic generator (``poisson_on_topology``: Poisson
arrivals per host, uniform destinations) with its CDFs (WebSearch, FbHdp, AliStorage2019, GoogleRPC2008: the
``traffic_gen/*.txt`` files of HPCC's repository: the package's copies of the first three, ``size_cdfs``, or the
files in ``--cdf-dir``) at each of ``--loads`` on fat_perm64's 320-host
fat tree at 100 Gb/s, under ``--cca`` (fat_perm64's DCQCN config, or its HPCC variant as
``bench_standard_workloads.py`` makes it), seed 1. The window is sized for ``--flows`` flows (default per CDF,
``GENERATOR_FLOWS``: heavy-tailed WebSearch and FbHdp take packet mode minutes per few thousand flows). Each
case runs packet mode once (``--repeat-generator`` times when given) and flow mode three times, best of each, and
a table closes the run: flows, simulation seconds of each mode, the speedup, mean and p99 per-flow FCT error of
flow mode against packet mode, and flow mode's recomputation counts.

usage: python benchmarks/bench_flow_mode.py [--scale 0.3] [--repeat 2] [--cases fat_perm64,gpt7b]
       python benchmarks/bench_flow_mode.py --generator [--cdf-dir HPCC/traffic_gen] [--cdfs alistorage,...]
           [--loads 0.3,0.5,0.7] [--flows N] [--cca hpcc] [--modes packet,flow]
"""

import argparse
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_wormhole import training_scenario
from side_by_side import SHARED, config_variant, hpcc_changes, versions

from wormhole_lab.ns3_run import ns3_scenario
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.workload.size_cdfs import size_cdf
from wormhole_lab.workload.traffic_gen import host_link_rate, poisson_on_topology

CASES = ("fat_perm64", "gpt7b")
CDF_FILES = {
    "websearch": "WebSearch_distribution.txt",
    "fbhdp": "FbHdp_distribution.txt",
    "alistorage": "AliStorage2019.txt",
    "googlerpc": "GoogleRPC2008.txt",
}
BUILT_IN = {"websearch": "WebSearch", "fbhdp": "FbHdp", "alistorage": "AliStorage2019"}  # size_cdfs.NAMED_CDFS
# flows per generator case: AliStorage2019 at 50 % over 1 ms is the issue's ~49,000-flow workload
GENERATOR_FLOWS = {"websearch": 3_200, "fbhdp": 10_000, "alistorage": 50_000, "googlerpc": 50_000}


def fat_perm64(shared: Path, folder: Path, cca: str = "dcqcn") -> Scenario:
    """The benchmark's config.txt as the drop-in reads it (its paths are relative to the working directory);
    ``cca="hpcc"``: with the keys of the reference's HPCC validation config."""
    for f in ("config.txt", "topology.txt", "flow.txt", "trace.txt"):
        shutil.copy(shared / "reference" / "bench" / "fat_perm64" / f, folder / f)
    if cca == "hpcc":
        text = (folder / "config.txt").read_text()
        (folder / "config.txt").write_text(config_variant(text, hpcc_changes(shared)))
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return ns3_scenario("config.txt")[0]
    finally:
        os.chdir(cwd)


def generator(base: Scenario, cdf: str, load: float, flows: int) -> Scenario:
    """``base`` (fat_perm64's topology and config) with ``flows`` Poisson flows of ``cdf`` (a CDF file or a name of
    ``size_cdfs.NAMED_CDFS``) at ``load``."""
    sizes = size_cdf(cdf)
    hosts = len(base.topology.hosts)
    per_host = load * host_link_rate(base.topology) / 8 / sizes.mean_bytes  # flows per second
    duration_ps = round(flows / (hosts * per_host) * 1e12)
    table = poisson_on_topology(base.topology, sizes, load, duration_ps, seed=1)
    return replace(base, flows=table, name=f"{Path(cdf).stem} {load:.0%}")


def gpt7b(scale: float) -> Scenario:
    return training_scenario("GPT-7B", scale, name=f"GPT-7B x{scale} on 64 GPUs")


def timed(scenario: Scenario, mode: str):
    """(Dataset, whole-run wall seconds without the kernels' compile or cache load)."""
    t0 = time.perf_counter()
    ds = Simulation(scenario, mode=mode).run()
    return ds, time.perf_counter() - t0 - ds.attrs["compile_seconds"]


def compare(label: str, scenario: Scenario, repeat: int) -> None:
    runs = {}
    for _ in range(repeat):  # the modes alternate, so that load from other users hits both alike
        for mode in ("packet", "flow"):
            ds, whole = timed(scenario, mode)
            best, best_whole = runs.get(mode, (ds, whole))
            runs[mode] = (min(ds, best, key=lambda d: d.attrs["wall_seconds"]), min(whole, best_whole))
    (packet, packet_whole), (flow, flow_whole) = runs["packet"], runs["flow"]
    done = (packet["completed"].values == 1) & (flow["completed"].values == 1)
    signed = flow["fct"].values[done] / packet["fct"].values[done] - 1
    err = np.abs(signed)
    iteration = flow.attrs["iteration_time_ps"] / packet.attrs["iteration_time_ps"] - 1
    sim_p, sim_f = packet.attrs["wall_seconds"], flow.attrs["wall_seconds"]
    print(f"\n[{label}] {len(scenario.flows):,} flows, {scenario.flows.size.sum() / 1e9:.2f} GB, {scenario.config.cca}")
    print(
        f"  packet mode       simulation {sim_p:.3f} s, whole run {packet_whole:.3f} s, "
        f"{packet.attrs['events_executed']:,} events"
    )
    print(
        f"  flow mode         simulation {sim_f:.4f} s, whole run {flow_whole:.3f} s, "
        f"{flow.attrs['events_executed']:,} flow events, {flow.attrs['rate_recomputations']:,} max-min "
        f"recomputations (largest {flow.attrs['largest_recomputed_set']} flows)"
    )
    print(f"  speedup           simulation {sim_p / sim_f:,.0f}x, whole run {packet_whole / flow_whole:,.1f}x")
    print(
        f"  FCT error         mean {err.mean():.2%}, p99 {np.percentile(err, 99):.2%}, max {err.max():.2%}; "
        f"flow mode faster on {np.mean(signed < 0):.0%} of flows (signed mean {signed.mean():+.2%}); "
        f"{int(done.sum())}/{len(done)} flows compared"
    )
    print(
        f"  iteration time    packet {packet.attrs['iteration_time_ps'] / 1e9:.4f} ms, flow "
        f"{flow.attrs['iteration_time_ps'] / 1e9:.4f} ms (error {iteration:+.2%})"
    )


def generator_case(label: str, scenario: Scenario, repeat: int, modes: tuple[str, ...]) -> dict:
    """Packet mode ``repeat`` times, flow mode at least 3 (it takes well under a second, and a shared machine's
    load shows in a short run), best simulation time of each; one row."""
    best = {}
    for mode in modes:
        for _ in range(max(repeat, 3) if mode == "flow" else repeat):
            ds = Simulation(scenario, mode=mode).run()
            if mode not in best or ds.attrs["wall_seconds"] < best[mode].attrs["wall_seconds"]:
                best[mode] = ds
    row = {"case": label, "flows": len(scenario.flows)}
    if "packet" in best:
        row["packet_s"] = best["packet"].attrs["wall_seconds"]
    if "flow" in best:
        flow = best["flow"]
        row["flow_s"] = flow.attrs["wall_seconds"]
        for key in ("rate_recomputations", "flows_rerated", "flows_visited", "fill_rounds", "largest_recomputed_set"):
            row[key] = flow.attrs[key]
    if len(best) == 2:
        packet = best["packet"]
        done = (packet["completed"].values == 1) & (flow["completed"].values == 1)
        err = np.abs(flow["fct"].values[done] / packet["fct"].values[done] - 1)
        row.update(speedup=row["packet_s"] / row["flow_s"], mean_err=err.mean(), p99_err=np.percentile(err, 99))
        row["compared"] = int(done.sum())
    print(f"[{label}] " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
    return row


def generator_table(rows: list[dict]) -> None:
    print("\n| workload | flows | packet mode (s) | flow mode (s) | speedup | FCT error mean / p99 | recomputations, "
          "flows rerated / visited |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        packet = f"{r['packet_s']:.2f}" if "packet_s" in r else "-"
        flow = f"{r['flow_s']:.3f}" if "flow_s" in r else "-"
        speed = f"{r['speedup']:.0f}x" if "speedup" in r else "-"
        err = f"{r['mean_err']:.1%} / {r['p99_err']:.1%}" if "mean_err" in r else "-"
        work = (
            f"{r['rate_recomputations']:,}, {r['flows_rerated']:,} / {r['flows_visited']:,}" if "flow_s" in r else "-"
        )
        print(f"| {r['case']} | {r['flows']:,} | {packet} | {flow} | {speed} | {err} | {work} |")


def cdf_source(name: str, cdf_dir: str | None) -> str:
    """The CDF file of ``name`` in ``cdf_dir`` when given, else the package's copy of its points (GoogleRPC2008,
    843 points, has none: it needs ``--cdf-dir``)."""
    if name not in CDF_FILES:
        raise SystemExit(f"unknown CDF {name!r}; choose among {', '.join(CDF_FILES)}")
    if cdf_dir is None and name in BUILT_IN:
        return BUILT_IN[name]
    path = Path(cdf_dir or "") / CDF_FILES[name]
    if not path.is_file():
        raise SystemExit(
            f"{path} not found: give --cdf-dir, the traffic_gen folder of "
            "github.com/alibaba-edu/High-Precision-Congestion-Control"
        )
    return str(path)


def run_generator(args, tmp: Path) -> None:
    names = args.cdfs.split(",")
    sources = {name: cdf_source(name, args.cdf_dir) for name in names}
    base = fat_perm64(Path(args.shared), tmp, args.cca)
    modes = tuple(args.modes.split(","))
    rows = []
    for name in names:
        for load in (float(x) for x in args.loads.split(",")):
            flows = args.flows or GENERATOR_FLOWS[name]
            scenario = generator(base, sources[name], load, flows)
            rows.append(generator_case(f"{name} {load:.0%} {args.cca}", scenario, args.repeat_generator, modes))
    generator_table(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.3, help="GPT-7B model size factor (1: Table 1 size)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--shared", default=str(SHARED))
    parser.add_argument("--generator", action="store_true", help="run the generator workloads instead of --cases")
    parser.add_argument("--cdf-dir", help="HPCC's traffic_gen folder (default: the package's copies of three of them)")
    parser.add_argument("--cdfs", default=",".join(BUILT_IN), help=f"among {', '.join(CDF_FILES)}")
    parser.add_argument("--loads", default="0.3,0.5,0.7")
    parser.add_argument("--flows", type=int, help="flows per generator case (default: per CDF, GENERATOR_FLOWS)")
    parser.add_argument("--cca", choices=("dcqcn", "hpcc"), default="hpcc", help="generator workloads' CCA")
    parser.add_argument("--modes", default="packet,flow", help="generator workloads: packet,flow or flow alone")
    parser.add_argument("--repeat-generator", type=int, default=1, help="runs of each mode per generator case")
    args = parser.parse_args()
    print(f"versions            {versions()}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.generator:
            run_generator(args, Path(tmp))
            return
        for name in args.cases.split(","):
            if name == "fat_perm64":
                compare("fat_perm64", fat_perm64(Path(args.shared), Path(tmp)), args.repeat)
            elif name == "gpt7b":
                compare(f"GPT-7B x{args.scale}, 64 GPUs", gpt7b(args.scale), args.repeat)
            else:
                parser.error(f"unknown case {name!r}; choose among {', '.join(CASES)}")


if __name__ == "__main__":
    main()
