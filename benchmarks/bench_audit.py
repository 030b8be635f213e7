"""The self-audit: what it costs, and how its FCT error estimate compares with the error measured against packet mode.

For each workload, in this one process: packet mode (the truth), Wormhole mode without the audit and with
``audit=K``, alternating, ``--repeat`` times each (best wall time kept: the machine is shared). Printed per
workload: the audit's overhead (wall time with / without), the windows it re-simulated, the error it found in
the credited bytes, its estimate of the mean FCT error, and the mean FCT error measured against packet mode.

Workloads: two HPCC flows into one host, the second 300 us later (the staggered pair of issue 16: Wormhole
mode is known to be off there); the same under DCQCN; a 4-to-1 HPCC incast; GPT-7B and MoE-8x7B training
iterations scaled by ``--scale`` on 64 GPUs (MoE with a memo DB, so memo hits are audited too).

usage: python benchmarks/bench_audit.py [--k 8] [--scale 0.1] [--repeat 2] [--audit-windows 2] [--cases pair_hp,...]
"""

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_wormhole import training_scenario

import wormhole_lab
from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.settings import WormholeConfig


def pair(cca: str) -> Scenario:
    flows = make_flows([1, 2], [0, 0], [50_000_000, 50_000_000], [0, 300_000_000])
    return Scenario(star(3), flows, preset(cca), name=f"staggered pair, {cca}", telemetry=Telemetry.off())


def incast(n: int, cca: str) -> Scenario:
    flows = make_flows(list(range(1, n + 1)), [0] * n, [20_000_000] * n, 0)
    return Scenario(star(n + 1), flows, preset(cca), name=f"{n}-to-1 incast, {cca}", telemetry=Telemetry.off())


def training(model: str, scale: float, memo: str | None) -> Scenario:
    scenario = training_scenario(model, scale, name=f"{model} x{scale}, hp")
    return replace(scenario, wormhole=WormholeConfig(memo=memo))


def measure(scenario: Scenario, k: int, repeat: int, memo: str | None) -> None:
    packet = Simulation(scenario, mode="packet").run()
    walls, runs = {0: np.inf, k: np.inf}, {}
    for _ in range(repeat):
        for audit in (0, k):
            if memo is not None:
                Path(memo).unlink(missing_ok=True)  # every run starts from the same (empty) DB
            t0 = time.perf_counter()
            runs[audit] = Simulation(scenario, mode="wormhole", audit=audit).run()
            walls[audit] = min(walls[audit], time.perf_counter() - t0)
    ds, plain = runs[k], runs[0]
    done = (packet["completed"].values == 1) & (ds["completed"].values == 1)
    measured = np.abs(ds["fct"].values[done] / packet["fct"].values[done] - 1)
    a = ds.attrs
    estimate = a["audit_fct_error_estimate"]
    print(
        f"{scenario.name}: {len(scenario.flows)} flows; wormhole {walls[0]:.2f} s, with audit={k} {walls[k]:.2f} s "
        f"(overhead {walls[k] / walls[0] - 1:+.1%}; the audit's own time {a['audit_seconds']:.2f} s = "
        f"{a['audit_seconds'] / walls[0]:.1%} of the run without it; {a['audit_replays']} replays)\n"
        f"  audited {a['audit_fastforwards']} fast-forwards (credited bytes off by {a['audit_fastforward_error']:.2%}) "
        f"and {a['audit_memo_hits']} memo hits ({a['audit_memo_error']:.2%}) of {a['skips']} skips, "
        f"{a.get('memo_hits', 0)} hits\n"
        f"  FCT error: estimated mean {estimate:.3%} (max {a['audit_fct_error_estimate_max']:.3%}); measured against "
        f"packet mode mean {measured.mean():.3%} (max {measured.max():.3%}); estimate / measured "
        f"{estimate / measured.mean() if measured.mean() else float('inf'):.2f}; results unchanged by the audit: "
        f"{bool((ds['fct'].values == plain['fct'].values).all())}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--audit-windows", type=int, default=2, help="steady-test windows replayed (0: the whole skip)")
    parser.add_argument("--cases", default="pair_hp,pair_dcqcn,incast4_hp,gpt7b,moe8x7b")
    args = parser.parse_args()
    import numba

    print(
        f"wormhole_lab {wormhole_lab.__version__}, numba {numba.__version__}, numpy {np.__version__}; K = {args.k}, "
        f"{args.audit_windows or 'all'} steady-test windows of a fast-forward replayed"
    )
    with tempfile.TemporaryDirectory() as folder:
        memo = str(Path(folder) / "memo.sqlite")
        cases = {
            "pair_hp": lambda: (pair("hp"), None),
            "pair_dcqcn": lambda: (pair("dcqcn"), None),
            "incast4_hp": lambda: (incast(4, "hp"), None),
            "gpt7b": lambda: (training("GPT-7B", args.scale, None), None),
            "moe8x7b": lambda: (training("MoE-8x7B", args.scale, memo), memo),
        }
        for name in args.cases.split(","):
            scenario, case_memo = cases[name]()
            scenario = replace(scenario, wormhole=replace(scenario.wormhole, audit_windows=args.audit_windows))
            measure(scenario, args.k, args.repeat, case_memo)


if __name__ == "__main__":
    main()
