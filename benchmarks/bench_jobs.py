"""Several jobs on one fabric (issue 55): the targets, measured in one run and printed side by side.

1. Two GPT-7B jobs interleaved on 128 GPUs, 2 iterations each, HPCC (``--cca``), on two fabrics:
   - ``rail``: the issue's own example, rail_optimized 16 servers x 8 GPUs; job b starts 200 us after a;
   - ``fat``: the k=8 fat tree of ``scenarios.interference.two_jobs`` (128 hosts, 4 per edge switch).
   Packet mode and Wormhole mode each run in a process of their own with ``alone_mode="off"`` (so the simulation
   times compare the same work); the Wormhole process then runs each job alone (``job_results.alone_runs``, in
   Wormhole mode), timed apart, for the slowdown. Printed: each job's iteration times in both modes and their
   relative error (target: within 0.5 %), the simulation time ratio packet / Wormhole (``wall_seconds``: the
   engine and the Wormhole controller, no set-up; target >= 20x) and the same ratio in CPU seconds of the run
   (``time.process_time``: steadier than wall time on a shared machine), the slowdown against alone, and the whole
   process (imports, kernel cache, flows, set-up, run, alone runs) as the operating system measured it.
2. One GPT-13B job on 128 GPUs of the k=8 fat tree beside WebSearch background traffic among every host at
   ``--loads`` (``scenarios.interference.job_with_background``). The background lasts ``--cover`` times the job's
   iteration time alone (measured first, in a process of its own), so it runs through the whole iteration (3.5 by
   default: at 50 % load the iteration takes about 2.6 times as long; a line says when the job outlasts it).
   Printed per load: the job's iteration time, alone, slowdown; the background's mean FCT, alone, slowdown.
   Wormhole mode; ``--bg-packet-load`` also runs that load in packet mode for the per-job error.
3. Eight jobs (GPT and MoE presets, 1024 GPUs in all) on 1024 GPUs, 3 iterations each, Wormhole mode, each job
   alone for its slowdown, in one process: its whole time (target <= 3 min) and peak RSS (``os.wait4``; target
   <= 8 GB), where the time went (imports and flows, set-up, the run, the alone runs), per-job slowdown.
   ``--many-fabric`` picks rail_optimized 128 x 8 (``rail``, the presets' own cluster) or the k=16 fat tree
   (``fat``: 1024 hosts, 8 per edge switch, so a server is an edge switch).

No telemetry by default (``--telemetry job``: the job scenarios' own, 256 traced flows sampled every 5 us, which
takes gigabytes at scale 1). ``--save DIR`` keeps each run's figures, ``--reuse DIR`` takes them from there
instead of running again (a packet run at scale 1 takes about 20 minutes here).

``--scale`` shrinks the training jobs of part 1 (flow bytes and compute time, ``workload.jobs.Training``; 1 = Table
1's sizes), ``--bg-scale`` part 2's (the background's bytes follow, as it lasts the iteration), ``--many-scale``
part 3's. Runs are in fresh processes (``side_by_side.run_process``),
so one run's allocator state or cache does not leak into another's timing. The machine is shared: wall times
stretch with whatever else runs, CPU seconds much less.

usage:
    python benchmarks/bench_jobs.py                                   # all three parts at the defaults
    python benchmarks/bench_jobs.py --parts 1 --scale 1 --fabrics rail  # the issue's example at full size
    python benchmarks/bench_jobs.py --parts 3 --many-scale 1 --many-fabric fat --profile
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from side_by_side import run_process, versions  # noqa: E402

START_B_US = 200  # the example: job b starts 200 us after job a
EIGHT_JOBS = (  # (name, preset, GPUs): 1024 GPUs in all
    ("gpt7b-a", "GPT-7B", 64),
    ("gpt13b", "GPT-13B", 128),
    ("moe8x7b-a", "MoE-8x7B", 64),
    ("gpt22b", "GPT-22B", 256),
    ("moe8x13b", "MoE-8x13B", 128),
    ("moe8x22b", "MoE-8x22B", 256),
    ("gpt7b-b", "GPT-7B", 64),
    ("moe8x7b-b", "MoE-8x7B", 64),
)
EIGHT_START_US = 50  # job i starts i x 50 us after the first
ARGS = argparse.Namespace(telemetry="off")  # the command line (the child gets its telemetry from its spec)


# --- scenarios (built in the child process) ----------------------------------------------------------------------


def build(spec: dict):
    """The scenario of ``spec`` (a JSON-able dict: ``kind`` and its parameters)."""
    from dataclasses import replace

    from wormhole_lab.engine.presets import preset
    from wormhole_lab.scenarios.training import job_telemetry
    from wormhole_lab.simulation import Scenario
    from wormhole_lab.telemetry import Telemetry
    from wormhole_lab.workload.jobs import jobs_flows

    kind, scale, cca = spec["kind"], spec["scale"], spec["cca"]

    def scenario(topo, jobs, name):
        flows = jobs_flows(topo, jobs)
        return Scenario(topo, flows, preset(cca), name=name, telemetry=job_telemetry(len(flows)))

    made = _build(spec, kind, scale, cca, scenario)
    return made if spec.get("telemetry") == "job" else replace(made, telemetry=Telemetry.off())


def _build(spec, kind, scale, cca, scenario):
    from dataclasses import replace

    from wormhole_lab.scenarios.interference import job_with_background, two_jobs
    from wormhole_lab.topology.builders import fat_tree, rail_optimized
    from wormhole_lab.workload.jobs import Job, Training

    if kind == "two":
        if spec["fabric"] == "fat":
            return two_jobs("interleaved", "GPT-7B", 64, cca, scale, 2, START_B_US)
        job = Job("a", Training("GPT-7B", 64, scale=scale), "interleaved", iterations=2)
        jobs = [job, replace(job, name="b", start_ps=START_B_US * 1_000_000)]
        return scenario(rail_optimized(16, 8), jobs, f"issue 55's example: two GPT-7B x{scale:g}, rail 16x8, {cca}")
    if kind == "job_alone":  # part 2's job by itself (its iteration time sets the background's duration)
        return scenario(fat_tree(8), [Job("job", Training("GPT-13B", 128, scale=scale))], "GPT-13B alone")
    if kind == "background":
        return job_with_background(spec["load"], "GPT-13B", 128, "WebSearch", cca, scale, spec["duration_us"])
    if kind == "eight":
        topo = rail_optimized(128, 8) if spec["fabric"] == "rail" else fat_tree(16)
        jobs = [
            Job(name, Training(model, gpus, scale=scale), spec["placement"], start_ps=i * EIGHT_START_US * 10**6,
                iterations=3, seed=i + 1)
            for i, (name, model, gpus) in enumerate(EIGHT_JOBS)
        ]  # fmt: skip
        return scenario(topo, jobs, f"eight jobs x{scale:g} on 1024 GPUs, {spec['fabric']}")
    raise ValueError(kind)


def child(spec: dict, out: Path) -> None:
    """In the child process: the run of ``spec`` (``alone_mode="off"``), then, if ``spec["alone"]``, each job alone
    in that mode, timed apart; the figures as JSON in ``out``."""
    import resource
    from dataclasses import replace

    t_start = time.perf_counter()
    from wormhole_lab.job_results import alone_runs, job_times
    from wormhole_lab.simulation import Simulation

    t0 = time.perf_counter()
    scenario = build(spec)
    flows_seconds = time.perf_counter() - t0
    layout = scenario.flows.meta["jobs"]
    profile = None
    if spec.get("profile"):
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    sim = Simulation(replace(scenario, alone_mode="off"), mode=spec["mode"])
    ds = sim.run()
    run_seconds, run_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_after_run = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    mine = job_times(ds, layout) if len(layout.jobs) > 1 else job_times(sim.results, layout)
    alone, alone_seconds, alone_cpu = None, 0.0, 0.0
    if spec.get("alone") and len(layout.jobs) > 1:
        t0, c0 = time.perf_counter(), time.process_time()
        import inspect

        extra = [Simulation] if len(inspect.signature(alone_runs).parameters) > 2 else []
        alone = alone_runs(scenario, spec["alone"], *extra)
        alone_seconds, alone_cpu = time.perf_counter() - t0, time.process_time() - c0
    if profile is not None:
        import pstats

        profile.disable()
        stats = pstats.Stats(profile, stream=open(out.with_suffix(".prof.txt"), "w"))
        stats.sort_stats("cumulative").print_stats(40)
        stats.sort_stats("tottime").print_stats(25)
    attrs = ds.attrs
    figures = {
        "jobs": layout.names,
        "kinds": [p.job.kind for p in layout.jobs],
        "gpus": [len(p.hosts) for p in layout.jobs],
        "n_flows": len(scenario.flows),
        "gbytes": float(scenario.flows.size.sum() / 1e9),
        "iteration_ps": mine["iteration_time"].tolist(),
        "mean_fct_ps": mine["mean_fct"].tolist(),
        "completion_ps": mine["completion_time"].tolist(),
        "alone_iteration_ps": None if alone is None else alone["iteration_time"].tolist(),
        "alone_mean_fct_ps": None if alone is None else alone["mean_fct"].tolist(),
        "shared_ports": int(ds.sizes.get("shared_port", 0)),
        "wall_seconds": float(attrs["wall_seconds"]),
        "setup_seconds": float(attrs["setup_seconds"]),
        "compile_seconds": float(attrs["compile_seconds"]),
        "events_executed": int(attrs["events_executed"]),
        "events_skipped": int(attrs.get("events_skipped_estimate", 0)),
        "memo_hit_rate": float(attrs["memo_hit_rate"]) if "memo_hit_rate" in attrs else None,
        "flows_unfinished": int(attrs["flows_unfinished"]),
        "flows_seconds": flows_seconds,
        "run_seconds": run_seconds,
        "run_cpu": run_cpu,
        "alone_seconds": alone_seconds,
        "alone_cpu": alone_cpu,
        "rss_after_run": rss_after_run,
        "in_process_seconds": time.perf_counter() - t_start,
    }
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures["process_cpu"] = usage.ru_utime + usage.ru_stime  # the whole process's CPU seconds so far
    out.write_text(json.dumps(figures))


SAVE: Path | None = None  # --save: each run's figures kept as JSON here; --reuse: taken from there if present
REUSE: Path | None = None


def _key(spec: dict) -> str:
    return "-".join(f"{k}={spec[k]}" for k in sorted(spec) if k != "profile").replace("/", "_") + ".json"


def run(spec: dict, folder: Path, timeout: float | None = None) -> dict:
    """``spec`` in a fresh process; its figures plus the whole process's wall time and peak RSS (``os.wait4``)."""
    spec = {**spec, "telemetry": ARGS.telemetry}
    if REUSE is not None and (REUSE / _key(spec)).exists():
        figures = json.loads((REUSE / _key(spec)).read_text())
        print(f"  (reused {REUSE / _key(spec)}, measured earlier)")
        return figures
    out = folder / f"run{len(list(folder.glob('run*.json')))}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec), str(out)]
    wall, peak, _ = run_process(command, folder, timeout)
    figures = json.loads(out.read_text())
    figures.update(process_seconds=wall, peak_bytes=peak, spec=spec)
    prof = out.with_suffix(".prof.txt")
    if prof.exists():
        figures["profile"] = prof.read_text()
    if SAVE is not None:
        SAVE.mkdir(parents=True, exist_ok=True)
        (SAVE / _key(spec)).write_text(json.dumps(figures))
    return figures


# --- helpers for printing ----------------------------------------------------------------------------------------


def ms(ps) -> str:
    return f"{ps / 1e9:9.3f} ms" if ps is not None and np.isfinite(ps) else "        - ms"


def us(ps) -> str:
    return f"{ps / 1e6:10.1f} us" if ps is not None and np.isfinite(ps) else "          - us"


def slowdown(fig: dict, j: int) -> float:
    if fig["alone_iteration_ps"] is None:
        return float("nan")
    if fig["kinds"][j] == "background":
        return fig["mean_fct_ps"][j] / fig["alone_mean_fct_ps"][j]
    mine, alone = np.array(fig["iteration_ps"][j], float), np.array(fig["alone_iteration_ps"][j], float)
    return float(np.nanmean(mine) / np.nanmean(alone))


def skipped(fig: dict) -> str:
    total = fig["events_executed"] + fig["events_skipped"]
    memo = f", memo hits {fig['memo_hit_rate']:.0%}" if fig["memo_hit_rate"] is not None else ""
    return f"{fig['events_executed']:,} events executed, {fig['events_skipped'] / max(total, 1):.1%} skipped{memo}"


def process_line(fig: dict) -> str:
    return (
        f"whole process {fig['process_seconds']:.1f} s (flows {fig['flows_seconds']:.1f} s, set-up "
        f"{fig['setup_seconds']:.1f} s of which kernels {fig['compile_seconds']:.1f} s, run {fig['run_seconds']:.1f} s"
        f" [{fig['run_cpu']:.1f} s CPU], alone runs {fig['alone_seconds']:.1f} s [{fig['alone_cpu']:.1f} s CPU]), "
        f"peak RSS {fig['peak_bytes'] / 2**30:.2f} GiB"
        + (f"; CPU of the whole process {fig['process_cpu']:.1f} s" if "process_cpu" in fig else "")
    )


# --- the three parts ---------------------------------------------------------------------------------------------


def part_two_jobs(args, folder: Path) -> None:
    for fabric in args.fabrics.split(","):
        spec = {"kind": "two", "fabric": fabric, "scale": args.scale, "cca": args.cca}
        packet = run({**spec, "mode": "packet"}, folder, args.timeout)
        worm = run({**spec, "mode": "wormhole", "alone": "wormhole"}, folder, args.timeout)
        where = "rail_optimized 16 x 8 (issue 55's example)" if fabric == "rail" else "k=8 fat tree (two_jobs)"
        print(f"\n== 1. two GPT-7B x{args.scale:g} jobs interleaved, 2 iterations, {args.cca}, on {where}: "
              f"{worm['n_flows']:,} flows, {worm['gbytes']:.2f} GB; {worm['shared_ports']} ports carry both "
              "jobs")  # fmt: skip
        print(f"  {'job':<4} {'it':>2} {'packet':>12} {'wormhole':>12} {'error':>8} {'alone (wh)':>12}")
        errors = []
        for j, name in enumerate(worm["jobs"]):
            for k, (p, w) in enumerate(zip(packet["iteration_ps"][j], worm["iteration_ps"][j], strict=True)):
                err = abs(w / p - 1)
                errors.append(err)
                print(f"  {name:<4} {k + 1:>2} {ms(p)} {ms(w)} {err:8.3%} {ms(worm['alone_iteration_ps'][j][k])}")
        for j, name in enumerate(worm["jobs"]):
            exact = worm["iteration_ps"][j] == worm["alone_iteration_ps"][j]
            packet_slowdown = float(np.mean(packet["iteration_ps"][j]) / np.mean(worm["alone_iteration_ps"][j]))
            print(f"  job {name}: slowdown against alone {slowdown(worm, j):.4f} (Wormhole run / Wormhole alone; "
                  f"iteration times {'identical to' if exact else 'not identical to'} alone's), "
                  f"{packet_slowdown:.4f} (packet run / Wormhole alone)")  # fmt: skip
        ratio_wall = packet["wall_seconds"] / worm["wall_seconds"]
        ratio_cpu = packet["run_cpu"] / worm["run_cpu"]
        verdict = "met" if max(errors) <= 0.005 else "NOT met"
        print(f"  max per-job iteration error {max(errors):.3%} (target <= 0.5 %: {verdict})")
        print(f"  simulation: packet {packet['wall_seconds']:.2f} s, Wormhole {worm['wall_seconds']:.2f} s -> "
              f"{ratio_wall:.1f}x (target >= 20x: {'met' if ratio_wall >= 20 else 'NOT met'}); run CPU "
              f"{packet['run_cpu']:.2f} s / {worm['run_cpu']:.2f} s -> {ratio_cpu:.1f}x; events "
              f"{packet['events_executed'] / worm['events_executed']:.1f}x fewer")  # fmt: skip
        print(f"  packet:   {skipped(packet)}; {process_line(packet)}")
        print(f"  Wormhole: {skipped(worm)}; {process_line(worm)}")
        whole = packet["process_seconds"] / worm["process_seconds"]
        print(f"  whole process, packet (no alone runs) / Wormhole (with its 2 alone runs): {whole:.1f}x")


def part_background(args, folder: Path) -> None:
    base = {"scale": args.bg_scale, "cca": args.cca}
    alone = run({**base, "kind": "job_alone", "mode": "wormhole"}, folder, args.timeout)
    it = alone["iteration_ps"][0][0]
    duration_us = math.ceil(it * args.cover / 1e6)
    print(f"\n== 2. GPT-13B x{args.bg_scale:g} on 128 GPUs of the k=8 fat tree beside WebSearch traffic among all 128 "
          f"hosts, {args.cca}; the job alone: iteration {ms(it).strip()} (Wormhole, {alone['process_seconds']:.0f} s "
          f"process); background for {duration_us} us ({args.cover:g}x that)")  # fmt: skip
    print(f"  {'load':>5} {'mode':<8} {'iteration':>12} {'alone':>12} {'slowdown':>9}  {'bg flows':>8} "
          f"{'bg mean FCT':>13} {'alone':>13} {'slowdown':>9}  {'run':>7} {'process':>8}")  # fmt: skip
    loads = [float(x) for x in args.loads.split(",")]
    for load in loads:
        modes = ["wormhole"] + (["packet"] if abs(load - args.bg_packet_load) < 1e-9 else [])
        results = {}
        for mode in modes:
            spec = {**base, "kind": "background", "load": load, "duration_us": duration_us, "mode": mode,
                    "alone": "wormhole" if mode == "wormhole" else None}  # fmt: skip
            fig = run(spec, folder, args.timeout)
            if mode == "packet":  # the alone runs of the Wormhole process serve both
                fig["alone_iteration_ps"] = results["wormhole"]["alone_iteration_ps"]
                fig["alone_mean_fct_ps"] = results["wormhole"]["alone_mean_fct_ps"]
            results[mode] = fig
            n_bg = fig["n_flows"] - alone["n_flows"]
            print(f"  {load:5.0%} {mode:<8} {ms(fig['iteration_ps'][0][0])} {ms(fig['alone_iteration_ps'][0][0])} "
                  f"{slowdown(fig, 0):9.4f}  {n_bg:8,} {us(fig['mean_fct_ps'][1])} {us(fig['alone_mean_fct_ps'][1])} "
                  f"{slowdown(fig, 1):9.4f}  {fig['wall_seconds']:6.1f}s {fig['process_seconds']:7.1f}s")  # fmt: skip
            end = fig["completion_ps"][0]  # the job starts at 0
            if end > duration_us * 1e6:
                print(f"        the job ended at {ms(end).strip()}, after the background ({duration_us} us)")
        if "packet" in results:
            w, p = results["wormhole"], results["packet"]
            err = abs(w["iteration_ps"][0][0] / p["iteration_ps"][0][0] - 1)
            fct = abs(w["mean_fct_ps"][1] / p["mean_fct_ps"][1] - 1)
            print(f"        at {load:.0%}: Wormhole against packet: job iteration error {err:.3%}, background mean "
                  f"FCT error {fct:.3%}; simulation {p['wall_seconds']:.1f} s / {w['wall_seconds']:.1f} s = "
                  f"{p['wall_seconds'] / w['wall_seconds']:.2f}x; {skipped(w)}")  # fmt: skip


def part_many(args, folder: Path) -> None:
    spec = {"kind": "eight", "fabric": args.many_fabric, "placement": args.many_placement, "scale": args.many_scale,
            "cca": args.cca, "mode": "wormhole", "alone": "wormhole", "profile": args.profile}  # fmt: skip
    fig = run(spec, folder, args.many_timeout)
    fabric = "rail_optimized 128 x 8" if args.many_fabric == "rail" else "k=16 fat tree (1024 hosts, 8 per edge)"
    print(f"\n== 3. eight jobs x{args.many_scale:g} on 1024 GPUs of the {fabric}, {args.many_placement}, 3 iterations "
          f"each, {args.cca}, Wormhole mode: {fig['n_flows']:,} flows, {fig['gbytes']:.1f} GB; "
          f"{fig['shared_ports']} ports carry two jobs or more")  # fmt: skip
    head = f"  {'job':<10} {'preset':<10} {'GPUs':>5} {'iteration 1':>12} {'2':>12} {'3':>12} {'alone':>12}"
    print(f"{head} {'slowdown':>9}")
    for j, (name, model, gpus) in enumerate(EIGHT_JOBS):
        its = fig["iteration_ps"][j]
        alone = float(np.nanmean(fig["alone_iteration_ps"][j]))
        print(f"  {name:<10} {model:<10} {gpus:>5} {ms(its[0])} {ms(its[1])} {ms(its[2])} {ms(alone)} "
              f"{slowdown(fig, j):9.4f}")  # fmt: skip
    total = fig["process_seconds"]
    print(f"  {skipped(fig)}; unfinished flows {fig['flows_unfinished']}")
    print(f"  {process_line(fig)}")
    print(f"  targets: whole process {total:.0f} s <= 180 s: {'met' if total <= 180 else 'NOT met'}; peak RSS "
          f"{fig['peak_bytes'] / 2**30:.2f} GiB <= 8 GiB: {'met' if fig['peak_bytes'] <= 8 * 2**30 else 'NOT met'} "
          f"(after the run, before the alone runs: {fig['rss_after_run'] / 2**30:.2f} GiB)")  # fmt: skip
    if "profile" in fig:
        print("  cProfile of the run and the alone runs (in the child):")
        print("\n".join("    " + line for line in fig["profile"].splitlines() if line.strip()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="1,2,3", help="which parts to run, e.g. 1,3")
    parser.add_argument("--scale", type=float, default=0.05, help="model size scale of part 1 (1 = Table 1)")
    parser.add_argument("--bg-scale", type=float, default=0.01, help="model size scale of part 2")
    parser.add_argument("--cca", default="hp")
    parser.add_argument("--fabrics", default="rail,fat", help="part 1: rail (issue 55's example), fat (k=8)")
    parser.add_argument("--loads", default="0.1,0.3,0.5", help="part 2: background loads")
    parser.add_argument("--cover", type=float, default=3.5,
                        help="part 2: background duration over the job's iteration time alone")  # fmt: skip
    parser.add_argument("--bg-packet-load", type=float, default=0.3,
                        help="part 2: also run this load in packet mode (-1: none)")  # fmt: skip
    parser.add_argument("--many-scale", type=float, default=1.0, help="part 3: model size scale")
    parser.add_argument("--many-fabric", default="rail", choices=("rail", "fat"))
    parser.add_argument("--many-placement", default="interleaved", choices=("packed", "interleaved", "random"))
    parser.add_argument("--telemetry", default="off", choices=("off", "job"),
                        help="none, or the job scenarios' (256 flows every 5 us: gigabytes at scale 1)")  # fmt: skip
    parser.add_argument("--save", type=Path, help="keep each run's figures (JSON) in this folder")
    parser.add_argument("--reuse", type=Path, help="take a run's figures from this folder when it holds them")
    parser.add_argument("--profile", action="store_true", help="part 3: cProfile the child, print the top")
    parser.add_argument("--timeout", type=float, default=None, help="seconds a run of parts 1-2 may take")
    parser.add_argument("--many-timeout", type=float, default=None, help="seconds part 3's process may take")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    global ARGS, SAVE, REUSE
    args = ARGS = parser.parse_args()
    SAVE, REUSE = args.save, args.reuse
    if args.child:
        child(json.loads(args.child[0]), Path(args.child[1]))
        return
    print(f"bench_jobs: {versions()}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    t0 = time.perf_counter()
    parts = {"1": part_two_jobs, "2": part_background, "3": part_many}
    with tempfile.TemporaryDirectory() as folder:
        for part in args.parts.split(","):
            parts[part](args, Path(folder))
            sys.stdout.flush()
    print(f"\nbench_jobs: {time.perf_counter() - t0:.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
