"""Issue 53 item 2, followers on a first run: a fresh (empty) memo DB against a warm one on MoE-8x7B/64 (HPCC, x1),
for this checkout's code and another's (a git worktree of the base commit), side by side.

Each code runs in processes of its own (``PYTHONPATH`` set to its root), alternating rounds: per round and code one
process that runs an untimed fresh run (Numba's cache, first touches), then fresh runs (each a new DB) and warm
runs (the DB the first fresh run left), alternating. Printed per code: median and range of the fresh and warm wall
times, their ratio (per round, then the median), events executed, memo lookups/hits/followers, and the per-flow FCT
error against packet mode (run once, in a process of its own, cached in the output folder).

    python benchmarks/bench_followers.py --other /tmp/wl_base --rounds 3
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time, tempfile, os
from dataclasses import replace
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_wormhole import training_scenario
from wormhole_lab.simulation import Simulation
from wormhole_lab.wormhole.settings import WormholeConfig
mode, n, folder, cca = sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
scenario = training_scenario("MoE-8x7B", 1.0, 64, cca)
if mode == "packet":
    ds = Simulation(scenario, mode="packet").run()
    np.save(folder / f"packet_{cca}.npy", ds["fct"].values)
    print(json.dumps({"events": int(ds.attrs["events_executed"])}))
    sys.exit()
def run(memo):
    t0 = time.perf_counter()
    ds = Simulation(replace(scenario, wormhole=WormholeConfig(memo=memo)), mode="wormhole").run()
    return time.perf_counter() - t0, ds
tmp = Path(tempfile.mkdtemp(dir=folder))
run(str(tmp / "untimed.sqlite"))
warm_db = str(tmp / "warm.sqlite")
out = {"fresh": [], "warm": []}
for k in range(n):
    wall, ds = run(warm_db if k == 0 else str(tmp / f"fresh{k}.sqlite"))
    out["fresh"].append(wall)
    if k == 0:
        fresh_ds = ds
    wall, ds = run(warm_db)
    out["warm"].append(wall)
    if k == 0:
        warm_ds = ds
for name, ds in (("fresh", fresh_ds), ("warm", warm_ds)):
    a = ds.attrs
    out[name + "_attrs"] = {key: (a[key].item() if hasattr(a[key], "item") else a[key]) for key in
        ("events_executed", "memo_lookups", "memo_hits", "memo_misses", "skips") if key in a}
    for key in ("memo_followers", "memo_follower_releases"):
        if key in a:
            out[name + "_attrs"][key] = int(a[key])
    np.save(tmp / f"{name}.npy", ds["fct"].values)
out["folder"] = str(tmp)
print(json.dumps(out))
"""


def child(root: str, mode: str, n: int, folder: Path, cca: str) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    done = subprocess.run([sys.executable, "-c", CHILD, root, mode, str(n), str(folder), cca], env=env, cwd=root,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser()
    parser.add_argument("--other", required=True, help="root of the other code (a git worktree)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="fresh and warm runs per process")
    parser.add_argument("--cca", default="hp")
    parser.add_argument("--folder", default=None, help="where the packet FCTs are cached")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    packet_path = folder / f"packet_{args.cca}.npy"
    if not packet_path.exists():
        child(str(HERE.parent), "packet", 0, folder, args.cca)
    packet = np.load(packet_path)
    codes = {"this": str(HERE.parent), "other": str(Path(args.other).resolve())}
    results = {name: [] for name in codes}
    for r in range(args.rounds):
        for name in list(codes) if r % 2 == 0 else list(codes)[::-1]:
            results[name].append(child(codes[name], "wormhole", args.runs, folder, args.cca))
    for name, rounds in results.items():
        fresh = [w for x in rounds for w in x["fresh"]]
        warm = [w for x in rounds for w in x["warm"]]
        ratios = [statistics.median(x["fresh"]) / statistics.median(x["warm"]) for x in rounds]
        print(f"{name} ({codes[name]}): fresh {statistics.median(fresh):.3f} s ({min(fresh):.3f}-{max(fresh):.3f}), "
              f"warm {statistics.median(warm):.3f} s ({min(warm):.3f}-{max(warm):.3f}); fresh/warm per round "
              f"{', '.join(f'{x:.2f}' for x in ratios)}, median {statistics.median(ratios):.2f}")  # fmt: skip
        last = rounds[-1]
        for kind in ("fresh", "warm"):
            fct = np.load(Path(last["folder"]) / f"{kind}.npy")
            err = np.abs(fct / packet - 1)
            print(f"  {kind}: {last[kind + '_attrs']}; FCT error mean {err.mean():.3%} p99 "
                  f"{np.percentile(err, 99):.3%} max {err.max():.3%}")  # fmt: skip


if __name__ == "__main__":
    main()
