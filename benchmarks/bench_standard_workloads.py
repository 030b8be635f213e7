"""The drop-in on the ecosystem's standard inputs, side by side with the reference.

Cases:
- ``mix``: the reference's shipped example (``simulation/mix/config.txt``, from
  ``../shared/reference/validation/shipped_mix_example``), unchanged;
- ``websearch``/``fbhdp`` at 30 % and 50 % load: Poisson workloads of the reference's traffic generator (its
  CDF files, read from its snapshot's ``traffic_gen/``), written by ``wormhole-lab traffic`` with seed 1 for the
  320 hosts of fat_perm64's fat tree at 100 Gb/s, each window long enough for about 3,200 flows; run with
  fat_perm64's DCQCN config and its HPCC variant (see ``side_by_side.hpcc_changes``).

For each: whole-process wall time and peak memory of both programs (alternating, ``--repeat`` times each,
medians), the ratios, and per-flow FCT agreement. Without ``--reference`` only our figures are printed.

usage: python benchmarks/bench_standard_workloads.py --reference PATH/run-third [--cdf-dir DIR] [--repeat 1]
       [--cases mix,websearch30,websearch50,fbhdp30,fbhdp50] [--cca dcqcn,hpcc]
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from side_by_side import SHARED, config_variant, fct_agreement, hpcc_changes, side_by_side, versions

CDF_FILES = {"websearch": "WebSearch_distribution.txt", "fbhdp": "FbHdp_distribution.txt"}
FLOWS_WANTED = 3200
HOSTS, BW_BPS = 320, 100 * 10**9


def traffic_case(cdf: Path, load: float, cca: str, bench: Path, folder: Path) -> Path:
    """fat_perm64's topology and config, with a Poisson flow file made by ``wormhole-lab traffic``."""
    from wormhole_lab.workload.traffic_gen import read_cdf

    folder.mkdir(parents=True)
    for f in ("topology.txt", "trace.txt"):
        shutil.copy(bench / f, folder / f)
    per_host_rate = load * BW_BPS / 8 / read_cdf(cdf).mean_bytes  # flows per second per host
    duration = FLOWS_WANTED / (HOSTS * per_host_rate)
    subprocess.run(
        [sys.executable, "-m", "wormhole_lab.cli", "traffic", "--cdf", str(cdf), "--load", str(load),
         "--hosts", str(HOSTS), "--bw", "100G", "--time", f"{duration:.9f}", "--seed", "1",
         "-o", str(folder / "flow.txt")],
        check=True, capture_output=True,
    )  # fmt: skip
    text = (bench / "config.txt").read_text()
    (folder / "config.txt").write_text(config_variant(text, hpcc_changes()) if cca == "hpcc" else text)
    return folder


def report(label: str, r: dict, fct_name: str) -> None:
    ours, ref = r["ours"], r["reference"]
    print(f"\n[{label}]")
    print(f"  ours              {ours.wall:.2f} s whole process, peak {ours.peak_mb:.0f} MB")
    if ref is None:
        print("  reference         not run (--reference): no ratio measured")
        return
    print(f"  reference         {ref.wall:.2f} s whole process, peak {ref.peak_mb:.0f} MB")
    print(
        f"  ratio             {ref.wall / ours.wall:.2f}x faster; memory ours - reference "
        f"{ours.peak_mb - ref.peak_mb:+.0f} MB"
    )
    folders = r["folders"]
    print(f"  FCT agreement     {fct_agreement(folders['ours'] / fct_name, folders['reference'] / fct_name)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", help="the reference's run-third (from build-reference-ns3.sh)")
    parser.add_argument("--cdf-dir", help="the reference's traffic_gen folder (default: next to --reference)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cases", default="mix,websearch30,websearch50,fbhdp30,fbhdp50")
    parser.add_argument("--cca", default="dcqcn,hpcc")
    parser.add_argument("--shared", default=str(SHARED))
    args = parser.parse_args()
    shared = Path(args.shared)
    bench = shared / "reference" / "bench" / "fat_perm64"
    cdf_dir = Path(args.cdf_dir) if args.cdf_dir else Path(args.reference or ".").resolve().parent / "traffic_gen"
    print(f"versions            {versions()}")
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            if case == "mix":
                inputs = Path(tmp) / "mix" / "inputs"
                shutil.copytree(shared / "reference" / "validation" / "shipped_mix_example" / "mix", inputs / "mix")
                r = side_by_side(inputs, "mix/config.txt", args.reference, args.repeat, Path(tmp) / "mix")
                report("shipped example mix/config.txt (HPCC, 2 x 200 MB)", r, "mix/fct.txt")
                continue
            name, load = case.rstrip("0123456789"), int(case[len(case.rstrip("0123456789")) :]) / 100
            cdf = cdf_dir / CDF_FILES[name]
            if not cdf.is_file():
                sys.exit(f"{cdf} not found: pass --cdf-dir (the reference's traffic_gen folder)")
            for cca in args.cca.split(","):
                inputs = traffic_case(cdf, load, cca, bench, Path(tmp) / f"{case}-{cca}" / "inputs")
                n_flows = int((inputs / "flow.txt").read_text().split("\n", 1)[0])
                r = side_by_side(inputs, "config.txt", args.reference, args.repeat, Path(tmp) / f"{case}-{cca}")
                report(f"{CDF_FILES[name]} at {load:.0%} load, {n_flows:,} flows, {cca}", r, "fct.txt")


if __name__ == "__main__":
    main()
