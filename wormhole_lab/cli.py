"""The ``wormhole-lab`` command: run a scenario (file or built-in), compare the two modes, run a
reference-style config unchanged, and look after memo DB files."""

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

from wormhole_lab.engine.state import ResourceLimitError
from wormhole_lab.errors import InputError
from wormhole_lab.interrupts import Terminated, sigterm_as_interrupt
from wormhole_lab.results import audit_summary

EPILOG_RUN = """examples:
  wormhole-lab run                                  # built-in fat-tree scenario, packet mode
  wormhole-lab run data/scenarios/incast_hpcc.yaml  # a scenario file (format: docs/scenario-format.md)
  wormhole-lab run scenario.yaml --mode wormhole --out results.nc   # memoizes within the run by default
  wormhole-lab run --out results/                   # fct.txt and flows.nc in a folder
  wormhole-lab run scenario.yaml --mode wormhole --memo memo.sqlite   # kept: a second run reuses the first's patterns
  wormhole-lab run scenario.yaml --mode wormhole --no-memo          # every transient packet by packet
  wormhole-lab run scenario.yaml --mode flow        # max-min fair rates per flow, no packets (docs/flow-level-mode.md)
"""
EPILOG_COMPARE = """examples:
  wormhole-lab compare data/scenarios/gpt13b_128gpu_hpcc.yaml
  wormhole-lab compare data/scenarios/gpt13b_128gpu_hpcc.yaml --mode flow
Runs packet mode, then Wormhole mode (or flow mode), and prints the speedup, FCT errors and iteration-time error.
"""
EPILOG_SWEEP = """examples:
  wormhole-lab sweep data/sweeps/incast_hpcc.yaml
  wormhole-lab sweep sweep.yaml --scheduler tcp://10.0.0.5:8786   # an existing Dask cluster
A sweep file is a scenario file plus 'axes' (mode, config.<field>, steady.theta, steady.window: lists of
values), and optionally 'memo' (a shared memo DB) and 'results' (a folder; a rerun skips finished cases).
"""
EPILOG_MEMO = """examples:
  wormhole-lab memo info memo.sqlite
  wormhole-lab memo merge memo.sqlite worker1.sqlite worker2.sqlite
  wormhole-lab memo clear memo.sqlite
"""
EPILOG_TRAFFIC = """examples:
  wormhole-lab traffic --cdf WebSearch_distribution.txt --load 0.3 --hosts 320 --bw 100G --time 0.005 -o flow.txt
The reference's traffic generator (traffic_gen.py): per host, Poisson arrivals at load x bandwidth / mean
size, uniform destinations among the other hosts, sizes from the CDF file ('size percent' lines), starting
after --base-time (2 s, as the reference). Unlike the reference it takes a --seed, so a workload repeats.
"""
EPILOG_ASTRA = """examples:
  wormhole-lab astra --workload-configuration=all_reduce/8npus_1MB/all_reduce \\
      --system-configuration=Ring_4chunks.json --network-configuration=Ring_8npus.yml \\
      --remote-memory-configuration=no_memory_expansion.json
Prints ASTRA-sim's lines (sys[i] finished, N cycles; 1 cycle = 1 ns), the slowest rank beside ASTRA-sim's own
congestion-unaware answer for the same flows, and the usual summary; writes fct.txt and astra.nc (per-flow FCTs,
per-rank finish, collective, send/receive and compute times). The network is built from the YAML: a Switch
dimension is a switch, Ring and FullyConnected dimensions are links between per-NPU routers (docs/chakra.md).
"""
EPILOG_NS3 = """examples:
  wormhole-lab ns3 config.txt           # like the reference's `third config.txt`
  wormhole-lab ns3 config.txt --mode wormhole   # accelerated; statistics on stderr
  wormhole-lab ns3 config.txt --mode wormhole --memo memo.sqlite   # and with the memo DB
  wormhole-lab ns3 config.txt --telemetry series.nc   # also stream queue/rate/CCA series to a file
  wormhole-lab ns3 config.txt --mode flow   # max-min fair rates per flow: fct.txt only, in a fraction of the time
Paths inside the config (TOPOLOGY_FILE, FLOW_FILE, FCT_OUTPUT_FILE, PFC_OUTPUT_FILE, QLEN_MON_FILE) are
relative to the working directory, as in the reference. Written: the FCT and PFC files, and the queue-length
histogram when QLEN_MON_FILE is set; the packet trace (ENABLE_TRACE 1) is not (a note says so).
Random ECN marks and PFC ids are drawn as the reference draws them (--rng ns3, its seed 1, run 1), so DCQCN
outputs are the reference's byte for byte; --rng xorshift uses the engine's own generator instead.
"""


def summary(ds) -> str:
    """Flows, mean/p99 FCT and slowdown, events executed and wall time of a finished run (its Dataset or
    RunResults)."""
    done = np.asarray(ds["completed"]) == 1
    fct_us = np.asarray(ds["fct"])[done] / 1e6
    slow = np.asarray(ds["slowdown"])[done]
    lines = [
        f"scenario        {ds.attrs['title']}",
        f"flows           {int(done.sum())} completed of {len(done)}",
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
        f"wall time       {ds.attrs['wall_seconds']:.2f} s (simulation alone), "
        f"set-up {ds.attrs['setup_seconds']:.2f} s",
        f"memory          {ds.attrs['engine_bytes'] / 2**20:,.1f} MiB engine tables, "
        f"{ds.attrs['flow_table_bytes'] / 2**20:,.1f} MiB flow table: {ds.attrs['bytes_per_flow']:,.0f} B per flow, "
        f"the rest for the packets, events, ports and active flows",
    ]
    if "job_slowdown" in ds:
        from wormhole_lab.job_results import job_lines

        lines += job_lines(ds)
    if "rank_finish" in ds:
        finish = np.asarray(ds["rank_finish"])
        lines.append(f"ranks           {len(finish)}; the slowest finishes at {finish.max():,} ns (ASTRA-sim cycles)")
    return "\n".join(lines)


def wormhole_statistics(ds) -> str:
    """One line of what Wormhole mode executed, skipped and fast-forwarded (for stderr)."""
    if ds.attrs.get("mode") != "wormhole":
        return ""
    executed, skipped = ds.attrs["events_executed"], ds.attrs["events_skipped_estimate"]
    line = (
        f"wormhole: {executed:,} events executed, ~{skipped:,} skipped "
        f"({skipped / max(executed + skipped, 1):.1%}); {ds.attrs['skips']} fast-forwards, "
        f"{ds.attrs['skip_backs']} skip-backs, up to {ds.attrs['partitions_max']} partitions"
    )
    line += "\nmemo:     " + memo_statistics(ds.attrs)
    if ds.attrs.get("audit_k"):
        line += "\naudit:    " + audit_summary(ds.attrs)
    return line


def memo_statistics(attrs) -> str:
    """What the memo did in a Wormhole run, and where it was kept (the default keeps it within the run)."""
    if attrs["memo"] == "off":
        return "off (--no-memo or memo: false); every transient was simulated packet by packet"
    where = (
        "within this run only (the default; --memo FILE keeps it across runs, --no-memo turns it off)"
        if attrs["memo"] == "run"
        else f"kept in {attrs['memo']}"
    )
    return (
        f"{attrs['memo_lookups']:,} lookups, {attrs['memo_hits']:,} hits, {attrs['memo_inserts']:,} new entries; "
        f"DB {attrs['memo_db_bytes'] / 1024:,.0f} KiB, {where}"
    )


def flow_statistics(ds) -> str:
    """One line of what flow mode computed (for stderr)."""
    if ds.attrs.get("mode") != "flow":
        return ""
    return (
        f"flow:     {ds.attrs['rate_recomputations']:,} max-min recomputations over {ds.attrs['flows_rerated']:,} "
        f"flows (at most {ds.attrs['largest_recomputed_set']:,} at once); no queues, ECN, PFC or CCA dynamics"
    )


def mode_statistics(ds) -> str:
    """What Wormhole or flow mode reports beyond the summary; '' in packet mode."""
    return wormhole_statistics(ds) or flow_statistics(ds)


def _load(path, args, modes=("wormhole",)):
    """The scenario file's (or the built-in) Scenario; ``--memo`` and ``--audit`` override its ``wormhole:``."""
    from dataclasses import replace

    from wormhole_lab.scenario_io import load_scenario
    from wormhole_lab.scenarios import default_scenario

    scenario = load_scenario(path) if path else default_scenario()
    _check_wormhole_options(args, modes)
    return replace(scenario, wormhole=scenario.wormhole.overridden(memo_option(args), args.audit))


def memo_option(args):
    """--memo FILE (a path), --no-memo (False), or neither (None: the scenario's setting)."""
    return False if args.no_memo else args.memo


def _check_wormhole_options(args, modes) -> None:
    flags = (("--memo", args.memo), ("--no-memo", args.no_memo or None), ("--audit", args.audit))
    for flag, value in flags:
        if value is not None and "wormhole" not in modes:
            raise InputError(flag, f"{flag} is for Wormhole mode only", f"add --mode wormhole, or drop {flag}")
    if args.memo is not None and not Path(args.memo).resolve().parent.is_dir():
        raise InputError("--memo", f"the folder of {args.memo} does not exist", "create it or give another path")
    if args.audit is not None and args.audit < 0:
        raise InputError("--audit", f"must be 0 or more, got {args.audit}", "e.g. --audit 8 (0: no audit)")


MODE_CHOICES = ["packet", "wormhole", "flow"]  # simulation.MODES; the command line does not import it up front
MODE_HELP = "packet (default), wormhole (accelerated), flow (max-min fair rates per flow, no packets)"
MEMO_HELP = (
    "memo DB file (SQLite) for Wormhole mode, kept across runs: patterns seen in earlier runs are reused "
    "(default: a memo within the run only)"
)
NO_MEMO_HELP = "Wormhole mode without memoization: every transient simulated packet by packet"
AUDIT_HELP = "Wormhole mode: re-simulate K fast-forwards and K memo hits packet by packet for an error estimate"
PROGRESS_REDRAW_S = 0.1  # the bar redraws at most this often (wall time), however fast simulated time moves


def _simulate(scenario, mode: str, out=None, quiet: bool = False):
    """Run with a progress bar on stderr (simulated time, flows finished, events skipped) unless ``quiet``.

    Unfinished flows are reported once, by ``_warn_unfinished``, not as a Python warning with a traceback line."""
    import warnings

    from tqdm import tqdm

    from wormhole_lab.simulation import Simulation, UnfinishedFlowsWarning, check_scenario, compile_kernels

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnfinishedFlowsWarning)
        if quiet:
            return Simulation(scenario, mode=mode).run(out=out)
        check_scenario(scenario)  # a bad input is told before a first run compiles
        compile_kernels(mode, scenario.config.cca)  # a first run says it compiles (and how long) before the bar
        bar = tqdm(
            total=len(scenario.flows), unit="flow", desc=f"{mode:>8}", file=sys.stderr, leave=False,
            mininterval=PROGRESS_REDRAW_S,
        )  # fmt: skip
        last_draw = [0.0]

        def progress(p):
            now = time.monotonic()
            if now - last_draw[0] < PROGRESS_REDRAW_S:
                return
            last_draw[0] = now
            bar.n = p.flows_done
            skipped = f", ~{p.events_skipped:,} skipped" if p.events_skipped else ""
            bar.set_postfix_str(f"{p.sim_time_ps / 1e6:,.0f} us simulated, {p.events:,} events{skipped}")

        with bar:
            return Simulation(scenario, mode=mode, progress=progress).run(out=out)


def _warn_unfinished(ds) -> None:
    if ds.attrs.get("unfinished_message"):
        print(f"wormhole-lab: warning: {ds.attrs['unfinished_message']}", file=sys.stderr)


def _cmd_run(args) -> int:
    from wormhole_lab.results import check_writable, fct_lines, write_lines

    out = Path(args.out)
    store = out.suffix in (".nc", ".zarr")
    folder = out.parent if store else out
    if not folder.is_dir():
        raise InputError("--out", f"folder {folder} does not exist", "create it or pass an existing folder")
    fct_path = folder / (f"{out.stem}.fct.txt" if store else "fct.txt")
    check_writable(fct_path, "--out")
    scenario = _load(args.scenario, args, (args.mode,))
    t0 = time.perf_counter()
    ds = _simulate(scenario, args.mode, out if store else None, quiet=args.quiet)
    print(summary(ds))
    _warn_unfinished(ds)
    if args.mode != "packet":
        print(mode_statistics(ds), file=sys.stderr)
    write_lines(fct_path, fct_lines(ds))
    if not store:
        out = folder / "flows.nc"
        ds.to_netcdf(out, engine="h5netcdf")
    print(f"wrote           {fct_path} and {out} ({time.perf_counter() - t0:.1f} s in all)")
    return 0


def _cmd_compare(args) -> int:
    scenario = _load(args.scenario, args, (args.mode,))
    packet = _simulate(scenario, "packet", quiet=args.quiet)
    other = _simulate(scenario, args.mode, quiet=args.quiet)
    _warn_unfinished(packet)
    done = (packet["completed"].values == 1) & (other["completed"].values == 1)
    error = np.abs(other["fct"].values[done] / packet["fct"].values[done] - 1)
    executed, skipped = other.attrs["events_executed"], other.attrs.get("events_skipped_estimate", 0)
    iteration = abs(other.attrs["iteration_time_ps"] / packet.attrs["iteration_time_ps"] - 1)
    print(f"scenario        {scenario.name}: {len(scenario.flows)} flows")
    print(
        f"speedup         {packet.attrs['wall_seconds'] / max(other.attrs['wall_seconds'], 1e-9):.1f}x wall, "
        f"{packet.attrs['events_executed'] / max(executed, 1):.1f}x fewer events "
        + (f"({skipped / max(executed + skipped, 1):.1%} skipped)" if args.mode == "wormhole" else "(flow events)")
    )
    if done.any():
        print(f"FCT error       mean {error.mean():.3%}   p99 {np.percentile(error, 99):.3%}   max {error.max():.3%}")
    if other.attrs.get("audit_k"):
        print(
            f"audit estimate  mean {other.attrs['audit_fct_error_estimate']:.3%}   "
            f"max {other.attrs['audit_fct_error_estimate_max']:.3%}   (the measured error is above)"
        )
    print(
        f"iteration time  packet {packet.attrs['iteration_time_ps'] / 1e9:.3f} ms, "
        f"{args.mode} {other.attrs['iteration_time_ps'] / 1e9:.3f} ms (error {iteration:.3%})"
    )
    return 0


def _cmd_sweep(args) -> int:
    import yaml
    from tqdm import tqdm

    from wormhole_lab.scenario_io import scenario_from_dict
    from wormhole_lab.sweep import sweep

    path = Path(args.sweep)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(str(path), f"cannot read the sweep file ({exc})", "give a YAML sweep file") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("axes"), dict):
        raise InputError(
            f"{path}: axes", "a sweep file needs an 'axes' mapping", "e.g. axes: {mode: [packet, wormhole]}"
        )
    axes = doc.pop("axes")
    memo, results = doc.pop("memo", None), doc.pop("results", None)
    base = scenario_from_dict(doc, base_dir=path.parent, source=str(path))
    resolve = lambda p: str(path.parent / p) if p else None  # noqa: E731 - paths are relative to the sweep file
    with tqdm(desc="cases", unit="case", file=sys.stderr, leave=False) as bar:

        def progress(done, failed, running):
            bar.total = done + running
            bar.n = done
            bar.set_postfix_str(f"{failed} failed, {running} to go")

        ds = sweep(
            base, axes, scheduler=args.scheduler, memo=resolve(memo), results=resolve(results), progress=progress
        )
    table = ds[["iteration_time", "fct_mean", "events", "memo_hit_rate"]].to_dataframe()
    print(table.to_string())
    print(
        f"cases {ds.attrs['cases']}, failed {ds.attrs['failed']}; memo hit rate per batch: "
        + ", ".join(f"{r:.0%}" for r in ds["batch_memo_hit_rate"].values if r == r)
    )
    for error in sorted({str(e) for e in ds["error"].values.ravel() if e}):
        print(f"failed: {error}", file=sys.stderr)
    return 0


def _cmd_app(args) -> int:
    import socket
    import subprocess

    if not 1 <= args.port <= 65535:
        raise InputError("--port", f"{args.port} is not a TCP port", "give a port between 1 and 65535")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", args.port)) == 0:
            raise InputError("--port", f"port {args.port} is already in use", "pick another one with --port")
    # a process of its own: the command line must not import the viz layer, which sits above it
    command = [sys.executable, "-m", "wormhole_lab.viz.serve", args.app, "--port", str(args.port)]
    print(f"serving the {args.app} app at http://127.0.0.1:{args.port}/{args.app} (Ctrl-C stops it)")
    return subprocess.call(command + (["--show"] if args.show else []))


def _cmd_memo(args) -> int:
    from wormhole_lab.wormhole import memo_admin

    path = Path(args.db)
    if args.action != "merge" and not path.is_file():
        raise InputError(args.db, "no such memo DB file", "give the path of an existing .sqlite file")
    if args.action == "info":
        for key, value in memo_admin.info(path).items():
            print(f"{key:<16}{value}")
    elif args.action == "merge":
        if not args.sources:
            raise InputError("memo merge", "no source DB given", "wormhole-lab memo merge TARGET SOURCE [SOURCE ...]")
        missing = [src for src in args.sources if not Path(src).is_file()]
        if missing:
            raise InputError(missing[0], "no such memo DB file", "give existing .sqlite files to merge")
        counts = memo_admin.merge(path, args.sources)
        print(", ".join(f"{k} {v}" for k, v in counts.items()))
    else:
        print(f"removed {memo_admin.clear(path)} entries from {path}")
    return 0


def _cmd_traffic(args) -> int:
    from wormhole_lab.units import parse_rate
    from wormhole_lab.workload.traffic_gen import traffic_command

    bw = args.bw + "bps" if re.fullmatch(r"[0-9.]+[kKMGT]", args.bw) else args.bw  # the reference writes 10G
    n = traffic_command(
        args.cdf, args.load, args.hosts, parse_rate(bw, "--bw"), args.time, args.seed, args.output,
        base_time_s=args.base_time, like_reference=args.like_reference,
    )  # fmt: skip
    print(f"wrote           {args.output}: {n:,} flows")
    return 0


def _cmd_astra(args) -> int:
    from dataclasses import replace

    from wormhole_lab.astra_run import astra_scenario, check_remote_memory
    from wormhole_lab.chakra_results import astra_lines
    from wormhole_lab.results import check_writable, fct_lines, write_lines

    for flag, value, default in (("--num-queues-per-dim", args.num_queues_per_dim, 1),
                                 ("--rendezvous-protocol", args.rendezvous_protocol, "false")):  # fmt: skip
        if str(value).lower() != str(default):
            raise InputError(flag, f"{value} is not modelled here (ASTRA-sim's default is {default})",
                             f"leave {flag} out")  # fmt: skip
    out = Path(args.out)
    if not out.is_dir():
        raise InputError("--out", f"folder {out} does not exist", "create it or pass an existing folder")
    check_writable(out / "fct.txt", "--out")
    if args.remote_memory_configuration:
        check_remote_memory(args.remote_memory_configuration)
    _check_wormhole_options(args, (args.mode,))
    scenario = astra_scenario(args.workload_configuration, args.system_configuration,
                              args.network_configuration, args.comm_group_configuration, cca=args.cc)  # fmt: skip
    scenario = replace(scenario, wormhole=scenario.wormhole.overridden(memo_option(args), args.audit))
    t0 = time.perf_counter()
    store = out / "astra.nc"  # port and flow series stream there, so memory stays bounded however long the run
    ds = _simulate(scenario, args.mode, store, quiet=args.quiet)
    print("\n".join(astra_lines(ds)))
    print(summary(ds))
    _warn_unfinished(ds)
    if args.mode != "packet":
        print(mode_statistics(ds), file=sys.stderr)
    write_lines(out / "fct.txt", fct_lines(ds))
    print(f"wrote           {out / 'fct.txt'} and {store} ({time.perf_counter() - t0:.1f} s in all)")
    return 0


def _cmd_ns3(args) -> int:
    from wormhole_lab.ns3_run import run_ns3_config

    notice = lambda text: print(f"wormhole-lab: note: {text}", file=sys.stderr)  # noqa: E731
    _check_wormhole_options(args, (args.mode,))
    ds, written = run_ns3_config(
        args.config, mode=args.mode, telemetry_out=args.telemetry, notify=notice, memo=memo_option(args),
        rng=args.rng,
        audit=args.audit,
    )  # fmt: skip
    print(summary(ds))
    _warn_unfinished(ds)
    if args.mode != "packet":
        print(mode_statistics(ds), file=sys.stderr)
    print("wrote           " + ", ".join(str(p) for p in written))
    return 0


def _add_wormhole_options(parser: argparse.ArgumentParser, audit_help: str = AUDIT_HELP) -> None:
    """--memo FILE or --no-memo, and --audit K: Wormhole mode's options on every command that runs it."""
    memo = parser.add_mutually_exclusive_group()
    memo.add_argument("--memo", metavar="FILE", help=MEMO_HELP)
    memo.add_argument("--no-memo", action="store_true", help=NO_MEMO_HELP)
    parser.add_argument("--audit", metavar="K", type=int, help=audit_help)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wormhole-lab", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser(
        "run",
        help="run a scenario file (or the built-in fat-tree scenario) with a progress bar",
        epilog=EPILOG_RUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("scenario", nargs="?", help="scenario YAML file (default: the built-in scenario)")
    run.add_argument("--mode", choices=MODE_CHOICES, default="packet", help=MODE_HELP)
    run.add_argument("--out", default=".", help="a folder for fct.txt and flows.nc, or a .nc/.zarr file")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_wormhole_options(run)
    run.set_defaults(func=_cmd_run)
    compare = sub.add_parser(
        "compare",
        help="run both modes and compare them",
        epilog=EPILOG_COMPARE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("scenario", nargs="?", help="scenario YAML file (default: the built-in scenario)")
    compare.add_argument(
        "--mode", choices=MODE_CHOICES[1:], default="wormhole", help="the mode compared with packet mode"
    )
    compare.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_wormhole_options(compare, AUDIT_HELP + " (set beside the measured error)")
    compare.set_defaults(func=_cmd_compare)
    sweep = sub.add_parser(
        "sweep",
        help="run every combination of a sweep file on Dask",
        epilog=EPILOG_SWEEP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.add_argument("sweep", help="sweep YAML file")
    sweep.add_argument("--scheduler", help="address of an existing Dask scheduler (default: a local cluster)")
    sweep.set_defaults(func=_cmd_sweep)
    app = sub.add_parser(
        "app",
        help="serve a Panel app: teach (CCA lesson) or explore (Wormhole explorer)",
        epilog="examples:\n  wormhole-lab app teach\n  wormhole-lab app explore --port 5007 --show\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    app.add_argument("app", choices=["teach", "explore"])
    app.add_argument("--port", type=int, default=5006)
    app.add_argument("--show", action="store_true", help="open a browser tab")
    app.set_defaults(func=_cmd_app)
    memo = sub.add_parser(
        "memo",
        help="inspect, merge or empty memo DB files",
        epilog=EPILOG_MEMO,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    memo.add_argument("action", choices=["info", "merge", "clear"])
    memo.add_argument("db", help="the memo DB (for merge: the target)")
    memo.add_argument("sources", nargs="*", help="merge: the DB files to copy entries from")
    memo.set_defaults(func=_cmd_memo)
    ns3 = sub.add_parser(
        "ns3",
        help="run a reference (HPCC ns-3) config.txt unchanged",
        epilog=EPILOG_NS3,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ns3.add_argument("config", help="the reference-style config file")
    ns3.add_argument("--mode", choices=MODE_CHOICES, default="packet", help=MODE_HELP)
    _add_wormhole_options(ns3)
    ns3.add_argument(
        "--telemetry", metavar="FILE", help="stream per-port and per-flow series to a .nc or .zarr store (default: off)"
    )
    ns3.add_argument(
        "--rng",
        choices=["ns3", "xorshift"],
        default="ns3",
        help="ECN/PFC random draws: ns3 = the reference's own (byte-identical DCQCN, default); xorshift = ours",
    )
    ns3.set_defaults(func=_cmd_ns3)
    astra = sub.add_parser(
        "astra",
        help="run an ASTRA-sim workload (Chakra traces) with ASTRA-sim's own options, at packet level",
        epilog=EPILOG_ASTRA,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    astra.add_argument("--workload-configuration", required=True, metavar="DIR/PREFIX",
                       help="Chakra traces DIR/PREFIX.N.et, one per NPU")  # fmt: skip
    astra.add_argument("--system-configuration", required=True, metavar="JSON", help="ASTRA-sim system JSON")
    astra.add_argument("--network-configuration", required=True, metavar="YML", help="ASTRA-sim analytical network")
    astra.add_argument("--remote-memory-configuration", metavar="JSON", help="only NO_MEMORY_EXPANSION is modelled")
    astra.add_argument("--comm-group-configuration", metavar="JSON", help='communicator groups {"id": [ranks]}')
    astra.add_argument("--num-queues-per-dim", default=1, help=argparse.SUPPRESS)
    astra.add_argument("--rendezvous-protocol", default="false", help=argparse.SUPPRESS)
    astra.add_argument("--logging-folder", help=argparse.SUPPRESS)  # ASTRA-sim's log folder: nothing is logged
    astra.add_argument("--mode", choices=MODE_CHOICES, default="wormhole",
                       help="wormhole (default: accelerated), packet, or flow")  # fmt: skip
    astra.add_argument("--cc", default="dcqcn", help="congestion control preset (default dcqcn; see docs/chakra.md)")
    astra.add_argument("--out", default=".", help="a folder for fct.txt and astra.nc (default: here)")
    astra.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_wormhole_options(astra)
    astra.set_defaults(func=_cmd_astra)
    traffic = sub.add_parser(
        "traffic",
        help="write an HPCC flow file of Poisson arrivals with sizes from a CDF (the reference's generator)",
        epilog=EPILOG_TRAFFIC,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    traffic.add_argument("--cdf", required=True, help="flow-size CDF file: lines 'size_bytes percent'")
    traffic.add_argument("--load", type=float, required=True, help="offered load per host, in (0, 1]")
    traffic.add_argument("--hosts", type=int, required=True, help="number of hosts (ids 0..N-1)")
    traffic.add_argument("--bw", default="10G", help="host link rate, e.g. 100G or 25Gbps (default 10G, as theirs)")
    traffic.add_argument("--time", type=float, required=True, help="length of the arrival window, seconds")
    traffic.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    traffic.add_argument("--base-time", type=float, default=2.0, help="first possible arrival, seconds (default 2)")
    traffic.add_argument(
        "--like-reference", action="store_true",
        help="keep the reference's quirks: each host's last arrival dropped, gaps truncated to whole ns",
    )  # fmt: skip
    traffic.add_argument("-o", "--output", required=True, help="the flow file to write")
    traffic.set_defaults(func=_cmd_traffic)
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
