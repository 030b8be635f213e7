"""Wormhole mode from the paper's four scales to 8192 GPUs (issue #19), one iteration per preset, HPCC.

Prints per case: wall time of the whole process, peak RSS (``os.wait4``), the set-up share (flow generation,
checks, routes, engine tables, the Wormhole controller, kernel cache load; without the kernel cache load, a
fixed cost of each process; and with Numba's floor instead of it: what Numba alone costs a fresh process at its
first cached kernel, ``numba_floor.py``, run in a process of its own after each case), events executed and
skipped, memo lookups and hits (a fresh memo DB per case), and where packet mode ran, its wall time, the speedup
and the per-flow FCT error against it.

Presets: Table 1's plan at its own scale (GPT-7B and MoE-8x7B on 64 GPUs, 13B on 128, 22B on 256, GPT-175B and
MoE-32x22B on 1024). Table 1 has no 8192-GPU row: there GPT-175B and MoE-32x22B keep their TP, PP and EP and
scale DP to 128 (``placement_for``'s rule for another GPU count), an extrapolation. Packet mode runs for the GPU
counts in ``--packet-gpus``, each under ``--packet-limit`` seconds; one that does not finish says so.

    python benchmarks/bench_scale.py                       # every scale (hours on 2 cores)
    python benchmarks/bench_scale.py --gpus 64,1024 --models GPT
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from side_by_side import run_process

SCALES = {  # GPUs -> (GPT preset, MoE preset)
    64: ("GPT-7B", "MoE-8x7B"),
    128: ("GPT-13B", "MoE-8x13B"),
    256: ("GPT-22B", "MoE-8x22B"),
    1024: ("GPT-175B", "MoE-32x22B"),
    8192: ("GPT-175B", "MoE-32x22B"),
}


def one_run(model: str, gpus: int, mode: str, memo: str, out: Path) -> None:
    """In the child process: one iteration, its figures as JSON and its FCTs as .npy next to ``out``."""
    from bench_wormhole import training_scenario

    from wormhole_lab.simulation import Simulation
    from wormhole_lab.wormhole.settings import WormholeConfig

    t0 = time.perf_counter()
    scenario = training_scenario(model, 1.0, gpus)
    flows_seconds = time.perf_counter() - t0
    if gpus > 1024:  # a rail switch of 8192 GPUs has 2,048 ports: their PFC headroom alone is 85 MB, the preset's
        # buffer 32 MB (the reference's); a switch of that radix is a chassis with a buffer to match
        scenario = replace(scenario, config=replace(scenario.config, buffer_bytes=256 * 2**20))
    if mode == "wormhole":
        scenario = replace(scenario, wormhole=WormholeConfig(memo=memo))
    ds = Simulation(scenario, mode=mode).run()
    attrs = {k: v for k, v in ds.attrs.items() if isinstance(v, (int, float, str))}
    np.save(out.with_suffix(".npy"), ds["fct"].values)
    out.write_text(json.dumps({**attrs, "flows_seconds": flows_seconds, "n_flows": len(scenario.flows)}))


def measure(model: str, gpus: int, mode: str, folder: Path, limit: float | None) -> dict | None:
    out = folder / f"{model}-{gpus}-{mode}.json"
    memo = folder / f"{model}-{gpus}.sqlite"
    command = [sys.executable, __file__, "--one", model, str(gpus), mode, str(memo), str(out)]
    try:
        wall, peak, _ = run_process(command, Path(__file__).parent, timeout=limit)
    except TimeoutError:
        return None
    figures = json.loads(out.read_text())
    figures.update(process_seconds=wall, peak_bytes=peak, fct=np.load(out.with_suffix(".npy")))
    return figures


def numba_floor(cache: Path) -> float:
    """Seconds of the first call of one cached kernel in a fresh process (its cache in ``cache``, filled by an
    earlier call)."""

    def first_call() -> float:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        out = subprocess.run([sys.executable, "numba_floor.py"], cwd=Path(__file__).parent, env=env, check=True,
                             capture_output=True, text=True)  # fmt: skip
        return float(out.stdout)

    if not cache.exists():  # the first process compiles the kernel
        cache.mkdir()
        first_call()
    return first_call()


def report(model: str, gpus: int, w: dict, floor: float, packet: dict | None, packet_note: str) -> str:
    setup = (w["flows_seconds"] + w["setup_seconds"]) / w["process_seconds"]
    # loading the compiled kernels from Numba's cache is a fixed cost of a process, whatever its scenario
    scenario_setup = setup - w["compile_seconds"] / w["process_seconds"]
    line = (
        f"{model:11s} {gpus:5d} GPUs {w['n_flows']:>10,} flows: {w['process_seconds']:7.1f} s, "
        f"{w['peak_bytes'] / 2**30:5.2f} GiB, set-up {setup:5.1%} ({w['flows_seconds']:.1f} s flows + "
        f"{w['setup_seconds']:.1f} s, of which {w['compile_seconds']:.2f} s loading the kernels: "
        f"{scenario_setup:.1%} without, {scenario_setup + floor / w['process_seconds']:.1%} with Numba's "
        f"{floor:.2f} s floor instead), {w['events_executed']:,} events, ~{w['events_skipped_estimate']:,} skipped, "
        f"memo {w['memo_hits']:,}/{w['memo_lookups']:,} hits, {w['flows_unfinished']} unfinished"
    )
    if packet is None:
        return f"{line}; packet mode: {packet_note}"
    done = (packet["fct"] > 0) & (w["fct"] > 0)
    err = np.abs(w["fct"][done] - packet["fct"][done]) / packet["fct"][done]
    return (
        f"{line}; packet mode {packet['process_seconds']:.1f} s ({packet['events_executed'] / 1e9:.2f} G events, "
        f"{packet['events_executed'] / packet['process_seconds'] / 1e6:.2f} M/s), "
        f"speedup {packet['process_seconds'] / w['process_seconds']:.1f}x, "
        f"FCT error mean {err.mean():.3%} p99 {np.percentile(err, 99):.3%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    scales = ",".join(map(str, SCALES))
    parser.add_argument("--gpus", default=scales, help=f"GPU counts among {scales}")
    parser.add_argument("--models", default="GPT,MoE", help="GPT, MoE or both")
    parser.add_argument("--packet-gpus", default="64,128,256", help="GPU counts where packet mode is run too")
    parser.add_argument("--packet-limit", type=float, default=900.0, help="seconds a packet run may take")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        model, gpus, mode, memo, out = args.one
        one_run(model, int(gpus), mode, memo, Path(out))
        return
    packet_gpus = {int(g) for g in args.packet_gpus.split(",") if g}
    packet_rates = []  # events per second of the packet runs so far
    with tempfile.TemporaryDirectory() as tmp:
        for gpus in (int(g) for g in args.gpus.split(",")):
            for family in args.models.split(","):
                model = SCALES[gpus][("GPT", "MoE").index(family)]
                w = measure(model, gpus, "wormhole", Path(tmp), None)
                floor = numba_floor(Path(tmp) / "numba_floor_cache")
                packet, note = None, not_run(gpus, w, packet_rates)
                if gpus in packet_gpus:
                    packet = measure(model, gpus, "packet", Path(tmp), args.packet_limit)
                    note = f"did not finish in {args.packet_limit:.0f} s"
                if packet is not None:
                    packet_rates.append(packet["events_executed"] / packet["process_seconds"])
                print(report(model, gpus, w, floor, packet, note), flush=True)


def not_run(gpus: int, w: dict, packet_rates: list[float]) -> str:
    """Why no packet run was made: the events it would execute (Wormhole's executed plus its estimate of those it
    skipped), and the hours they take at the event rate of this invocation's packet runs, if any."""
    events = w["events_executed"] + w["events_skipped_estimate"]
    why = f"not run at {gpus} GPUs (--packet-gpus): it would execute ~{events / 1e9:.1f} G events"
    if not packet_rates:
        return why
    rate = sum(packet_rates) / len(packet_rates)
    return f"{why}, ~{events / rate / 3600:.1f} h at the {rate / 1e6:.2f} M events/s of the packet runs above"


if __name__ == "__main__":
    main()
