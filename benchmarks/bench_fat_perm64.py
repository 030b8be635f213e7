"""Packet engine against the reference on its fat_perm64 inputs (320-host fat tree, 64 x 10 MB), side by side.

Cases: fat_perm64 under DCQCN (its own config) and HPCC (the same config with the keys in which the reference's
HPCC validation config differs), and a larger one: 256 x 10 MB on the same fat tree (a derangement of 256
hosts, seed 1), DCQCN. Each case: ``wormhole-lab ns3 config.txt`` and the reference's ``third config.txt`` run
alternately ``--repeat`` times each as whole processes; printed are the medians, peak memory, events per
second of each (ours: executed, from its summary; the reference: scheduled, from ORACLE_EVENTS_SCHEDULED) and
the ratios, plus per-flow FCT agreement. Without ``--reference`` only our figures are printed, and it says that
no ratio was measured. Also: Numba compile time on a cold and on a warm cache, each in a new process.

usage: python benchmarks/bench_fat_perm64.py [--reference PATH/run-third] [--repeat 3] [--cases dcqcn,hpcc,perm256]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from side_by_side import (
    SHARED,
    config_variant,
    fct_agreement,
    hpcc_changes,
    our_figures,
    reference_events,
    side_by_side,
    versions,
)

COMPILE_SNIPPET = "from wormhole_lab.engine.runner import compile_engine; print(compile_engine())"
CASES = ("dcqcn", "hpcc", "perm256")


def compile_seconds(cache_dir: str) -> float:
    """Time compile_engine() in a new process whose Numba cache lives in cache_dir."""
    env = dict(os.environ, WORMHOLE_LAB_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def make_case(name: str, bench: Path, folder: Path) -> Path:
    """The inputs of one case in ``folder`` (config.txt, topology, flows, trace list)."""
    folder.mkdir(parents=True)
    for f in ("topology.txt", "flow.txt", "trace.txt"):
        (folder / f).write_bytes((bench / f).read_bytes())
    text = (bench / "config.txt").read_text()
    if name == "hpcc":
        text = config_variant(text, hpcc_changes())
    if name == "perm256":
        rng = np.random.default_rng(1)
        hosts = np.arange(256)
        while True:
            dst = rng.permutation(hosts)
            if not np.any(dst == hosts):
                break
        lines = [f"{s} {d} 3 100 10000000 0.0" for s, d in zip(hosts, dst, strict=True)]
        (folder / "flow.txt").write_text(f"{len(lines)}\n" + "\n".join(lines) + "\n")
    (folder / "config.txt").write_text(text)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", help="the reference's run-third (from build-reference-ns3.sh)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--shared", default=str(SHARED))
    args = parser.parse_args()
    bench = Path(args.shared) / "reference" / "bench" / "fat_perm64"
    print(f"versions            {versions()}")
    with tempfile.TemporaryDirectory() as cache:
        cold, warm = compile_seconds(cache), compile_seconds(cache)
    print(f"compile             cold {cold:.1f} s, warm (cache hit) {warm:.2f} s")
    if not args.reference:
        print("reference           not given (--reference PATH/run-third): no ratio was measured")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            case = make_case(name, bench, Path(tmp) / name / "inputs")
            r = side_by_side(case, "config.txt", args.reference, args.repeat, Path(tmp) / name)
            ours = r["ours"]
            events, sim = our_figures(ours.stdout)
            print(f"\n[{name}] {args.repeat} alternating run(s) each, medians")
            print(
                f"  ours              whole process {ours.wall:.2f} s, peak {ours.peak_mb:.0f} MB; simulation "
                f"{sim:.2f} s, {events:,} events executed = {events / sim / 1e6:.2f} M events/s"
            )
            ref = r["reference"]
            if ref is None:
                continue
            ref_events = reference_events(ref.stdout)
            print(
                f"  reference         whole process {ref.wall:.2f} s, peak {ref.peak_mb:.0f} MB; "
                f"{ref_events:,} events scheduled = {ref_events / ref.wall / 1e6:.2f} M events/s"
            )
            print(
                f"  ratio             whole process {ref.wall / ours.wall:.2f}x, events/s "
                f"{(events / sim) / (ref_events / ref.wall):.2f}x (ours executed per simulation second / theirs "
                "scheduled per process second)"
            )
            # idle switch TX_DONEs are not events here (engine-performance.md): count the reference's events instead
            print(
                f"  equivalent        {ref_events / sim / 1e6:.2f} M events/s = {ref.wall / sim:.2f}x (the reference's "
                "events per our simulation second / theirs per process second)"
            )
            folders = r["folders"]
            print(f"  FCT agreement     {fct_agreement(folders['ours'] / 'fct.txt', folders['reference'] / 'fct.txt')}")
            ours_pfc = (folders["ours"] / "pfc.txt").read_text().splitlines()
            ref_pfc = (folders["reference"] / "pfc.txt").read_text().splitlines()
            equal = sum(a == b for a, b in zip(ours_pfc, ref_pfc, strict=False))
            print(f"  PFC lines equal   {equal}/{len(ref_pfc)} (ours {len(ours_pfc)})")


if __name__ == "__main__":
    main()
