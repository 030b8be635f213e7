"""The ``wormhole-lab`` command: run the built-in scenario, or a reference-style config unchanged."""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from wormhole_lab.engine.state import ResourceLimitError
from wormhole_lab.errors import InputError
from wormhole_lab.interrupts import Terminated, sigterm_as_interrupt

EPILOG_RUN = """examples:
  wormhole-lab run                      # built-in fat-tree scenario, packet mode
  wormhole-lab run --out results/       # also write results/fct.txt and results/flows.nc
  wormhole-lab run --mode wormhole      # the same scenario, accelerated
"""
EPILOG_NS3 = """examples:
  wormhole-lab ns3 config.txt           # like the reference's `third config.txt`
  wormhole-lab ns3 config.txt --mode wormhole   # accelerated; statistics on stderr
Paths inside the config (TOPOLOGY_FILE, FLOW_FILE, FCT_OUTPUT_FILE, PFC_OUTPUT_FILE) are
relative to the working directory, as in the reference.
"""


def summary(ds) -> str:
    """Flows, mean/p99 FCT and slowdown, events executed and wall time of a finished run."""
    done = ds["completed"].values == 1
    fct_us = ds["fct"].values[done] / 1e6
    slow = ds["slowdown"].values[done]
    lines = [
        f"scenario        {ds.attrs['title']}",
        f"flows           {int(done.sum())} completed of {ds.sizes['flow']}",
    ]
    if done.any():
        lines += [
            f"FCT             mean {fct_us.mean():.2f} us   p99 {np.percentile(fct_us, 99):.2f} us",
            f"slowdown        mean {slow.mean():.3f}   p99 {np.percentile(slow, 99):.3f}",
        ]
    lines += [
        f"events          {ds.attrs['events_executed']:,} executed"
        f" ({ds.attrs['events_executed'] / max(ds.attrs['wall_seconds'], 1e-9):,.0f} per second)",
        f"ECN marks       {ds.attrs['ecn_marks']:,}   PFC frames {ds.attrs['pfc_frames']}   drops {ds.attrs['drops']}",
        f"simulated       {ds.attrs['sim_end_ps'] / 1e6:.1f} us (stopped: {ds.attrs['stop_reason']})",
        f"wall time       {ds.attrs['wall_seconds']:.2f} s (simulation alone)",
    ]
    return "\n".join(lines)


def wormhole_statistics(ds) -> str:
    """One line of what Wormhole mode executed, skipped and fast-forwarded (for stderr)."""
    if ds.attrs.get("mode") != "wormhole":
        return ""
    executed, skipped = ds.attrs["events_executed"], ds.attrs["events_skipped_estimate"]
    return (
        f"wormhole: {executed:,} events executed, ~{skipped:,} skipped "
        f"({skipped / max(executed + skipped, 1):.1%}); {ds.attrs['skips']} fast-forwards, "
        f"{ds.attrs['skip_backs']} skip-backs, up to {ds.attrs['partitions_max']} partitions"
    )


def _cmd_run(args) -> int:
    from wormhole_lab.results import check_writable, fct_lines, write_lines
    from wormhole_lab.scenarios import default_scenario
    from wormhole_lab.simulation import Simulation

    out = Path(args.out)
    if not out.is_dir():
        raise InputError("--out", f"folder {out} does not exist", "create it or pass an existing folder")
    fct_path = out / "fct.txt"
    check_writable(fct_path, "--out")
    t0 = time.perf_counter()
    ds = Simulation(default_scenario(), mode=args.mode).run()
    print(summary(ds))
    if args.mode == "wormhole":
        print(wormhole_statistics(ds), file=sys.stderr)
    write_lines(fct_path, fct_lines(ds))
    ds.to_netcdf(out / "flows.nc", engine="h5netcdf")
    print(f"wrote           {fct_path} and {out / 'flows.nc'} ({time.perf_counter() - t0:.1f} s in all)")
    return 0


def _cmd_ns3(args) -> int:
    from wormhole_lab.ns3_run import run_ns3_config

    ds, written = run_ns3_config(args.config, mode=args.mode)
    print(summary(ds))
    if args.mode == "wormhole":
        print(wormhole_statistics(ds), file=sys.stderr)
    print("wrote           " + ", ".join(str(p) for p in written))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wormhole-lab", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser(
        "run",
        help="run the built-in fat-tree scenario",
        epilog=EPILOG_RUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--mode", choices=["packet", "wormhole"], default="packet")
    run.add_argument("--out", default=".", help="folder for fct.txt and flows.nc (default: current folder)")
    run.set_defaults(func=_cmd_run)
    ns3 = sub.add_parser(
        "ns3",
        help="run a reference (HPCC ns-3) config.txt unchanged",
        epilog=EPILOG_NS3,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ns3.add_argument("config", help="the reference-style config file")
    ns3.add_argument("--mode", choices=["packet", "wormhole"], default="packet")
    ns3.set_defaults(func=_cmd_ns3)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["run", *(argv or sys.argv[1:])])
    try:
        with sigterm_as_interrupt():
            return args.func(args)
    except KeyboardInterrupt as exc:
        if args.debug:
            raise
        print(
            f"wormhole-lab: interrupted ({exc or 'Ctrl-C'}); files written so far are marked incomplete",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, Terminated) else 130
    except (InputError, ResourceLimitError, OSError) as exc:
        if args.debug:
            raise
        print(f"wormhole-lab: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
