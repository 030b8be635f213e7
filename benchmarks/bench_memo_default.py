"""Wormhole mode's default memo (within the run, fe69f6b) against a fresh memo file and against no memo (issue 53).

Issue 53's first target: ``wormhole-lab run moe.yaml --mode wormhole`` with no memo option simulates within 2x of
a run with a fresh memo file (it was 53x, when no option meant no memo). The scenario is one training iteration of
MoE-8x7B on 64 GPUs (rail-optimized, 8 servers of 8, 100 Gb/s, HPCC, telemetry off: ``bench_scale.py``'s case),
written as a scenario YAML into a temporary folder and run by the real command, as a user meets it:

    wormhole-lab run moe.yaml --mode wormhole --quiet --out <folder>                     # (a) default
    wormhole-lab run moe.yaml --mode wormhole --quiet --out <folder> --memo <new file>   # (b) fresh memo file
    wormhole-lab run moe.yaml --mode wormhole --quiet --out <folder> --no-memo           # (c) no memo

each as a whole process (``side_by_side.run_process``: wall time and peak RSS from the OS), after one untimed run
that loads Numba's cache and the page cache. Each round runs the three once, alternating, in an order rotated from
round to round; (b) gets a file of its own each time. Printed per variant (median and range over the rounds): the
simulation's wall time (``wall_seconds`` of flows.nc: the simulation alone), the whole process's, peak RSS, events
executed, memo lookups and hits; then the ratios of each round, default / fresh file and no memo / default, as
their median and range; and whether (a) and (b) gave the same FCTs (fct.txt byte for byte, and flows.nc's fct
array) and events in every round: same scenario, a memo that starts empty either way, so they should.

``--gpt175`` adds GPT-175B on 1024 GPUs (rail-optimized, 128 servers of 8), default against a fresh memo file
(``--gpt175-rounds``, 2 by default), whose issue target is a whole process of 20 s or less by default (54-61 s
before, 13.4 s with a memo file). Timings are noisy on a shared machine: compare ratios of one invocation, never
absolute seconds across invocations; nothing here asserts a time.

    python benchmarks/bench_memo_default.py                      # MoE-8x7B, 3 rounds (about 2 minutes here)
    python benchmarks/bench_memo_default.py --rounds 5 --gpt175  # and GPT-175B on 1024 GPUs
"""

import argparse
import statistics
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
import xarray as xr
from side_by_side import run_process

CASES = {  # name -> (model, GPUs)
    "MoE-8x7B": ("MoE-8x7B", 64),
    "GPT-175B": ("GPT-175B", 1024),
}
VARIANTS = {  # name -> the options after --mode wormhole (MEMO: a new file for each run)
    "default": [],
    "fresh file": ["--memo", "MEMO"],
    "no memo": ["--no-memo"],
}
CLI = Path(sys.executable).parent / "wormhole-lab"  # the console script of this environment


def write_scenario(model: str, gpus: int, folder: Path) -> Path:
    path = folder / f"{model}-{gpus}.yaml"
    path.write_text(
        f"name: {model}-{gpus}gpu-hpcc\n"
        f"topology: {{builder: rail_optimized, n_servers: {gpus // 8}, gpus_per_server: 8}}\n"
        f"flows: {{training: {{model: {model}, n_gpus: {gpus}}}}}\n"
        "cca: hp\n"
        "telemetry: off\n"
    )
    return path


def run(scenario: Path, variant: str, folder: Path) -> dict:
    """One whole ``wormhole-lab run`` process into ``folder``: its figures, FCTs and fct.txt bytes."""
    folder.mkdir()
    options = [str(folder / "memo.sqlite") if o == "MEMO" else o for o in VARIANTS[variant]]
    command = [str(CLI), "run", str(scenario), "--mode", "wormhole", "--quiet", "--out", str(folder), *options]
    wall, peak, _ = run_process(command, folder)
    with xr.open_dataset(folder / "flows.nc", engine="h5netcdf") as ds:
        attrs, fct = dict(ds.attrs), ds["fct"].values.copy()
    return {
        "process": wall,
        "peak": peak,
        "sim": float(attrs["wall_seconds"]),
        "events": int(attrs["events_executed"]),
        "lookups": int(attrs.get("memo_lookups", 0)),  # absent with --no-memo
        "hits": int(attrs.get("memo_hits", 0)),
        "memo": "FILE" if variant == "fresh file" else str(attrs["memo"]),  # the Dataset's memo attribute
        "fct": fct,
        "fct_txt": (folder / "fct.txt").read_bytes(),
    }


def spread(values: list[float], fmt: str) -> str:
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def measure(name: str, variants: list[str], rounds: int, work: Path) -> dict[str, list[dict]]:
    model, gpus = CASES[name]
    scenario = write_scenario(model, gpus, work)
    run(scenario, "default", work / f"{name}-warm-up")  # untimed: Numba's cache, the page cache
    runs = {v: [] for v in variants}
    for r in range(rounds):
        for variant in variants[r % len(variants) :] + variants[: r % len(variants)]:
            runs[variant].append(run(scenario, variant, work / f"{name}-{r}-{variant.replace(' ', '-')}"))
            print(f"  {name} round {r + 1} {variant:10s}: {runs[variant][-1]['process']:6.1f} s", flush=True)
    return runs


def report(name: str, runs: dict[str, list[dict]]) -> None:
    model, gpus = CASES[name]
    rounds = len(runs["default"])
    print(f"\n{model} on {gpus} GPUs, HPCC, --mode wormhole, {rounds} rounds alternating (median (min-max))")
    print(f"{'variant':11s} {'simulation s':>20s} {'whole process s':>22s} {'peak GiB':>9s} {'events':>12s} "
          f"{'memo lookups':>13s} {'hits':>8s}  memo attr")  # fmt: skip
    for variant, rs in runs.items():
        events = sorted({r["events"] for r in rs})
        lookups, hits = sorted({r["lookups"] for r in rs}), sorted({r["hits"] for r in rs})
        one = lambda xs: f"{xs[0]:,}" if len(xs) == 1 else "/".join(f"{x:,}" for x in xs)  # noqa: E731
        print(
            f"{variant:11s} {spread([r['sim'] for r in rs], '.2f'):>20s} "
            f"{spread([r['process'] for r in rs], '.1f'):>22s} {max(r['peak'] for r in rs) / 2**30:9.2f} "
            f"{one(events):>12s} {one(lookups):>13s} {one(hits):>8s}  {'/'.join(sorted({r['memo'] for r in rs}))}"
        )
    print("ratios of each round (median (min-max)):")
    pairs = [("default", "fresh file")] + ([("no memo", "default")] if "no memo" in runs else [])
    for a, b in pairs:
        for what, key in (("simulation", "sim"), ("whole process", "process")):
            ratios = [x[key] / y[key] for x, y in zip(runs[a], runs[b], strict=True)]
            print(f"  {a} / {b:10s} {what:13s}: {spread(ratios, '.2f')}")
    same = [
        x["fct_txt"] == y["fct_txt"] and np.array_equal(x["fct"], y["fct"]) and x["events"] == y["events"]
        for x, y in zip(runs["default"], runs["fresh file"], strict=True)
    ]
    repeat = all(r["fct_txt"] == runs["default"][0]["fct_txt"] for r in runs["default"])
    print(
        f"FCTs default vs fresh file: {'identical' if all(same) else 'DIFFERENT'} in {sum(same)}/{rounds} rounds "
        f"(fct.txt byte for byte, flows.nc fct, events); default runs identical to each other: {repeat}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of MoE-8x7B's three variants")
    parser.add_argument("--gpt175", action="store_true", help="also GPT-175B on 1024 GPUs, default vs fresh file")
    parser.add_argument("--gpt175-rounds", type=int, default=2, help="rounds of GPT-175B")
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, numba {version('numba')}, numpy {version('numpy')}, "
        f"wormhole-lab {version('wormhole-lab')}; {CLI}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        moe = measure("MoE-8x7B", list(VARIANTS), args.rounds, Path(tmp))
        gpt = measure("GPT-175B", ["default", "fresh file"], args.gpt175_rounds, Path(tmp)) if args.gpt175 else None
    report("MoE-8x7B", moe)
    if gpt is not None:
        report("GPT-175B", gpt)
        print("issue target for GPT-175B: whole process 20 s or less by default (54-61 s before, 13.4 s with a file)")


if __name__ == "__main__":
    main()
