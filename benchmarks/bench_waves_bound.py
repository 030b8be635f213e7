"""What bounds Wormhole mode on the repeated waves of issue 16: the incasts, measured two ways, per CCA.

1. **Cost bound.** Packet mode on the whole waves and on their incast flows alone, alternating, ``--repeat``
   rounds after an untimed run of each. A Wormhole run that skips every ring byte but simulates the incasts packet
   by packet cannot be faster than packet mode on the incasts alone, so whole / incasts-only (the median of the
   rounds' ratios) is the most it can reach. Wormhole mode with a warm memo DB (a first run's) is timed in the same
   rounds for comparison.
2. **Replay error.** Whether the incasts could be taken from the memo instead: every wave's incast has the same
   senders, receiver and sizes, so the FCTs a replay of wave 1's incast would give waves 2-6 are wave 1's. Their
   error against packet mode's own FCTs, over all flows (mean, p99, max), against issue 16's bounds (0.5 %, 3 %).

usage: python benchmarks/bench_waves_bound.py [--ccas hpcc,dcqcn] [--repeat 5]
"""

import argparse
import contextlib
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_wormhole import timed
from make_wormhole_shapes import CCAS, DATA, INCAST_BYTES, WAVES

from wormhole_lab.engine.runner import compile_engine
from wormhole_lab.ns3_run import ns3_scenario
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.settings import WormholeConfig


def incasts_only(scenario):
    """The scenario with only its incast flows, each keeping its ends, size, start and source port (its ECMP path)."""
    f = scenario.flows
    keep = np.flatnonzero(f.size == INCAST_BYTES)
    flows = make_flows(f.src[keep], f.dst[keep], f.size[keep], f.start_ps[keep], pg=f.pg[keep], dport=f.dport[keep])
    return replace(scenario, flows=replace(flows, sport=f.sport[keep])), keep


def replay_error(scenario, packet) -> np.ndarray:
    """Per-flow FCT error if waves 2-6's incasts took wave 1's outcome (the rings' own FCTs left as they are)."""
    fct = packet["fct"].values.astype(float)
    incast = np.flatnonzero(scenario.flows.size == INCAST_BYTES).reshape(WAVES, -1)  # wave x sender, in file order
    err = np.zeros(len(fct))
    err[incast[1:]] = np.abs(fct[incast[0]] / fct[incast[1:]] - 1)
    return err


def measure(cca: str, repeat: int, memo: Path) -> None:
    with contextlib.chdir(DATA / "waves"):
        scenario, _ = ns3_scenario(f"config_{cca}.txt")
    alone, keep = incasts_only(scenario)
    warm = WormholeConfig(memo=str(memo))
    whole, _ = timed(scenario, "packet")
    part, _ = timed(alone, "packet")
    timed(scenario, "wormhole", warm)  # fills the memo DB: the timed Wormhole runs are a user's second run
    if not np.array_equal(whole["fct"].values[keep] > 0, part["fct"].values > 0):
        raise RuntimeError("an incast flow completed in one run and not in the other")
    times = {"whole": [], "incasts": [], "wormhole": []}
    for _ in range(repeat):
        times["whole"].append(timed(scenario, "packet")[1])
        times["incasts"].append(timed(alone, "packet")[1])
        times["wormhole"].append(timed(scenario, "wormhole", warm)[1])
    bound = np.array(times["whole"]) / np.array(times["incasts"])
    speedup = np.array(times["whole"]) / np.array(times["wormhole"])
    events = whole.attrs["events_executed"], part.attrs["events_executed"]
    err = replay_error(scenario, whole)
    print(
        f"{cca:<6} packet {np.median(times['whole']):6.3f} s, incasts alone {np.median(times['incasts']):6.3f} s "
        f"({events[1]:,} of {events[0]:,} events): "
        f"bound {np.median(bound):5.2f}x ({bound.min():.2f}-{bound.max():.2f}); "
        f"warm Wormhole {np.median(times['wormhole']):6.3f} s = {np.median(speedup):5.2f}x "
        f"({speedup.min():.2f}-{speedup.max():.2f})",
        flush=True,
    )
    print(
        f"{'':<6} replaying wave 1's incasts: FCT error over all flows mean {err.mean():.2%}, "
        f"p99 {np.percentile(err, 99):.2%}, max {err.max():.2%} (bounds: mean 0.5 %, p99 3 %)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ccas", default=",".join(CCAS))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"compile (or load the cache) {compile_engine():.1f} s")
    with tempfile.TemporaryDirectory() as folder:
        for cca in args.ccas.split(","):
            measure(cca, args.repeat, Path(folder) / f"waves_{cca}.sqlite")


if __name__ == "__main__":
    main()
