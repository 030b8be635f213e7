"""Where a first run's compile time goes, per kernel (issue 53, item 5).

Each measurement is a whole ``wormhole-lab run`` process (the built-in scenario, ``--quiet``) with a fresh, empty
``WORMHOLE_LAB_CACHE_DIR`` (cold: every kernel compiles), then the same command again on that cache (warm: every
kernel loads). NUMBA_CACHE_DIR would not do: ``engine.jit`` sets Numba's cache folder itself.

The cold process records Numba's ``numba:compile`` events: for each dispatcher (kernel) the CPU seconds its compiles
took (CPU, not wall: other jobs on the machine stretch wall time, and compiling is single-threaded), inclusive of
the kernels it compiled on the way (callees compile first, as their own dispatchers) and exclusive ("self"), and how
many specialisations (``dispatcher.signatures``) it ended with. The self times add up to the compile time; the
whole-process time (wall, and CPU as the OS counts it) adds imports, the run itself and writing the results.

Modes (and ``--trees``) alternate (packet, wormhole, packet, ...) so that load from other jobs on the machine hits
both alike; read the ratios and the spread over ``--repeat``, not one number. Prints, never asserts.

  python benchmarks/bench_compile.py                       # packet and wormhole, 1 round, table per kernel
  python benchmarks/bench_compile.py --repeat 3 --modes packet wormhole --top 15
  python benchmarks/bench_compile.py --no-table --repeat 3 --trees /tmp/before ''   # a copy of the package vs this
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# runs in the child: records each dispatcher's compile spans, then runs the CLI as a user would
CHILD = r"""
import json, sys, time
from numba.core import event
from numba.core.dispatcher import Dispatcher

spans = []  # (dispatcher, start, end, depth)
stack = []

class Recorder(event.Listener):
    def on_start(self, ev):
        stack.append((ev.data["dispatcher"], time.process_time()))
    def on_end(self, ev):
        disp, t0 = stack.pop()
        spans.append((disp, t0, time.process_time(), len(stack)))

event.register("numba:compile", Recorder())
from wormhole_lab.cli import main
rc = main(sys.argv[1:])

def name(d):
    return f"{d.py_func.__module__.removeprefix('wormhole_lab.')}.{d.py_func.__qualname__}"

rows = {}
for i, (d, t0, t1, depth) in enumerate(spans):
    # a compile's children are the spans one level deeper that ran inside it
    inner = sum(c1 - c0 for c, c0, c1, cd in spans if cd == depth + 1 and c0 >= t0 and c1 <= t1)
    row = rows.setdefault(name(d), {"compiles": 0, "inclusive": 0.0, "self": 0.0, "top": 0.0})
    row["compiles"] += 1
    row["inclusive"] += t1 - t0
    row["self"] += t1 - t0 - inner
    if depth == 0:
        row["top"] += t1 - t0
sigs = {}
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("wormhole_lab"):
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher) and value.signatures:
                sigs[name(value)] = [str(s) for s in value.signatures]
for key, value in sigs.items():
    rows.setdefault(key, {"compiles": 0, "inclusive": 0.0, "self": 0.0, "top": 0.0})["signatures"] = value
print("BENCH_COMPILE " + json.dumps(rows), file=sys.stderr)
sys.exit(rc)
"""


def run(mode: str, cache: str, out: str, record: bool, tree: str) -> tuple[float, float, dict]:
    """One whole ``wormhole-lab run`` process; returns its wall and CPU (user + sys) seconds, measured by the
    operating system, and (if ``record``) the per-kernel rows. ``tree``: a folder holding another wormhole_lab
    to import instead (PYTHONPATH), '' for the installed one."""
    env = {**os.environ, "WORMHOLE_LAB_CACHE_DIR": cache}
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH", "")]))
    args = ["run", "--quiet", "--mode", mode, "--out", out]
    cmd = [sys.executable, "-c", CHILD, *args] if record else [sys.executable, "-m", "wormhole_lab.cli", *args]
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        # cwd: not the checkout, whose wormhole_lab (first on sys.path for -c and -m) would shadow ``tree``
        child = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True, cwd=tempfile.gettempdir()
        )  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    if child.returncode:
        sys.exit(f"{mode}: exit {child.returncode}\n{stderr[-3000:]}")
    rows = {}
    for line in stderr.splitlines():
        if line.startswith("BENCH_COMPILE "):
            rows = json.loads(line.removeprefix("BENCH_COMPILE "))
    return wall, usage.ru_utime + usage.ru_stime, rows


def table(mode: str, rows: dict, top: int) -> None:
    total = sum(r["self"] for r in rows.values())
    print(f"\n{mode}: {len(rows)} kernels compiled or used, compile self-time sum {total:.1f} s")
    print(f"{'kernel':58} {'sigs':>4} {'compiles':>8} {'self s':>7} {'incl s':>7} {'top s':>6}  (CPU seconds)")
    order = sorted(rows.items(), key=lambda kv: -kv[1]["self"])
    for key, r in order[:top]:
        n = len(r.get("signatures", []))
        print(f"{key:58} {n:>4} {r['compiles']:>8} {r['self']:>7.2f} {r['inclusive']:>7.2f} {r['top']:>6.2f}")
    rest = order[top:]
    if rest:
        print(
            f"{'(' + str(len(rest)) + ' more)':58} {'':>4} {sum(r['compiles'] for _, r in rest):>8} "
            f"{sum(r['self'] for _, r in rest):>7.2f}"
        )
    multi = [(k, r["signatures"]) for k, r in order if len(r.get("signatures", [])) > 1]
    for key, signatures in multi:
        print(f"  {key}: {len(signatures)} signatures")
        for s in signatures:
            print(f"    {s[:200]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["packet", "wormhole"], choices=["packet", "wormhole", "flow"])
    parser.add_argument("--repeat", type=int, default=1, help="rounds (modes alternate within each)")
    parser.add_argument("--top", type=int, default=25, help="kernels listed per table")
    parser.add_argument("--no-table", action="store_true", help="whole-process times only (no event recording)")
    parser.add_argument(
        "--trees", nargs="+", default=[""], metavar="DIR",
        help="compare wormhole_lab copies side by side: folders put first on PYTHONPATH ('' = the installed one)",
    )  # fmt: skip
    args = parser.parse_args()
    keys = [(mode, tree) for mode in args.modes for tree in args.trees]
    cold = {k: [] for k in keys}
    warm = {k: [] for k in keys}
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for mode, tree in keys:
                cache = tempfile.mkdtemp(dir=tmp)
                out = tempfile.mkdtemp(dir=tmp)
                wall, cpu, rows = run(mode, cache, out, not args.no_table and i == 0, tree)
                cold[mode, tree].append((wall, cpu))
                tables.setdefault((mode, tree), rows)
                warm[mode, tree].append(run(mode, cache, out, False, tree)[:2])
                w = warm[mode, tree][-1]
                print(
                    f"round {i + 1} {mode:8} {tree or 'installed':20} cold {wall:6.1f} s (cpu {cpu:6.1f} s)  "
                    f"warm {w[0]:5.1f} s (cpu {w[1]:5.1f} s)",
                    flush=True,
                )
    if not args.no_table:
        for mode, tree in keys:
            table(f"{mode} {tree or 'installed'}", tables[mode, tree], args.top)
    print("\nwhole process (wormhole-lab run --quiet --mode MODE), fresh WORMHOLE_LAB_CACHE_DIR; median wall (cpu):")
    for mode, tree in keys:
        c, w = cold[mode, tree], warm[mode, tree]
        print(
            f"  {mode:8} {tree or 'installed':20} cold {_median(c)}  warm {_median(w)}   "
            f"cold walls {[round(x[0], 1) for x in c]}"
        )


def _median(pairs: list) -> str:
    return f"{statistics.median(p[0] for p in pairs):6.1f} s ({statistics.median(p[1] for p in pairs):6.1f} s cpu)"


if __name__ == "__main__":
    main()
