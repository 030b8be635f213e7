"""Run a reference-style config.txt unchanged: read its topology and flows, write what it asks for.

Outputs: ``FCT_OUTPUT_FILE`` and ``PFC_OUTPUT_FILE`` always, ``QLEN_MON_FILE`` when the config names one (in the
reference's format). The binary packet trace of ``ENABLE_TRACE 1`` is not written; a notice says so and
points at ``telemetry_out`` (``--telemetry``), which streams per-port and per-flow series to a netCDF or zarr
store. Nothing else is recorded, so memory follows the engine's tables, not the run's length.

In flow mode (max-min fair rates, no packets) there are no queues to monitor and no PFC frames: the FCT file
is written, the PFC file is empty, QLEN_MON_FILE is not written (a notice says so) and ``telemetry_out`` is
refused.
"""

import re
import warnings
from dataclasses import replace
from pathlib import Path

from wormhole_lab.engine.config import MAX_STOP_TIME_PS
from wormhole_lab.errors import InputError
from wormhole_lab.ns3_config import read_ns3_config
from wormhole_lab.qlen_histogram import QlenHistogram
from wormhole_lab.results import check_writable, fct_lines, pfc_lines, write_lines
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry, check_store_path
from wormhole_lab.topology.hpcc_format import read_topology
from wormhole_lab.workload.hpcc_flow_format import flow_line, read_flows
from wormhole_lab.workload.validate import check_flows


def ns3_scenario(config_path) -> tuple[Scenario, object]:
    """The Scenario a reference config describes, plus the parsed config (for its output paths).

    Input and output paths are taken relative to the working directory, as the reference does."""
    cfg = read_ns3_config(config_path)
    topo = read_topology(Path(cfg.topology_file))
    flows = read_flows(Path(cfg.flow_file))
    try:
        check_flows(flows, topo, where="flows")
    except InputError as exc:  # name the flow file's line, not the row of a table the user never saw
        row = re.match(r"flows\[(\d+)\]", exc.where)
        where = f"{cfg.flow_file}:{flow_line(Path(cfg.flow_file), int(row.group(1)))}" if row else cfg.flow_file
        raise InputError(where, exc.problem, f"{exc.fix} (topology: {cfg.topology_file})") from None
    return Scenario(topo, flows, cfg.engine, name=str(config_path), telemetry=Telemetry.off()), cfg


class Ns3Notice(UserWarning):
    """Something the config asks for that the drop-in does differently (it says what, and what to use)."""


def run_ns3_config(
    config_path, mode: str = "packet", telemetry_out=None, notify=None, memo=None, rng=None, audit=None
):  # fmt: skip
    """Returns (the run's ``RunResults``, [paths written]); ``.dataset()`` gives the flow table as a Dataset.
    ``telemetry_out``: a .nc or .zarr store for the default
    telemetry series; ``notify(text)`` receives notices (default: an ``Ns3Notice`` warning); ``memo``: the memo
    DB of Wormhole mode, ``audit`` its self-audit's K; ``rng``: the ECN/PFC random generator (default "ns3",
    the reference's own draws; "xorshift" the engine's own)."""
    notify = notify or (lambda text: warnings.warn(text, Ns3Notice, stacklevel=3))
    scenario, cfg = ns3_scenario(config_path)
    scenario = replace(scenario, wormhole=scenario.wormhole.overridden(memo, audit))
    if rng is not None:
        scenario = replace(scenario, config=scenario.config.with_(rng=rng))
    keys = {"FCT_OUTPUT_FILE": cfg.fct_output_file, "PFC_OUTPUT_FILE": cfg.pfc_output_file}
    if mode == "flow":
        if telemetry_out is not None:
            raise InputError("--telemetry", "flow mode records no series", "drop --telemetry, or use --mode packet")
        if cfg.qlen_mon_file:
            notify(f"QLEN_MON_FILE: flow mode has no queues, so {cfg.qlen_mon_file} is not written")
            cfg = replace(cfg, qlen_mon_file=None)
    if cfg.qlen_mon_file:
        keys["QLEN_MON_FILE"] = cfg.qlen_mon_file
    for key, path in keys.items():
        check_writable(Path(path), f"{config_path}: {key}")
    fmt = check_store_path(telemetry_out, None) if telemetry_out is not None else None
    qlen = None
    monitor_start_ps, _ = QlenHistogram.window_ps(cfg.qlen_mon_start_ns, cfg.qlen_mon_end_ns)
    monitor = cfg.qlen_mon_file and monitor_start_ps <= (cfg.engine.stop_time_ps or MAX_STOP_TIME_PS)
    if cfg.qlen_mon_file and not monitor:
        write_lines(keys["QLEN_MON_FILE"], [])  # a window after the stop time: the reference writes an empty file
    if monitor:
        if telemetry_out is not None:
            raise InputError(
                "--telemetry",
                f"{config_path} asks for QLEN_MON_FILE, whose 100 ns monitor uses the telemetry sampler",
                "drop --telemetry, or remove QLEN_MON_FILE from the config to record the telemetry series",
            )
        qlen = QlenHistogram.for_topology(scenario.topology)
        scenario = replace(scenario, telemetry=qlen.telemetry(cfg.qlen_mon_start_ns, cfg.qlen_mon_end_ns))
    elif telemetry_out is not None:
        scenario = replace(scenario, telemetry=Telemetry())
    if cfg.enable_trace:
        notify(
            f"ENABLE_TRACE 1: the packet trace ({cfg.trace_output_file}) is not written; for queues, rates, PFC "
            "state and CCA state over time, run with --telemetry out.nc (telemetry_out=...)"
        )
    sim = Simulation(scenario, mode=mode)
    if telemetry_out is not None:
        for _ in sim.stream(out=telemetry_out, fmt=fmt):
            pass
    else:  # the queue monitor reads the engine's arrays: no Dataset is made, nor xarray loaded
        for times, port_rows, _ in sim.raw_chunks():
            qlen.add(times, port_rows, sim.telemetry_selection[0])
    ds = sim.results
    write_lines(keys["FCT_OUTPUT_FILE"], fct_lines(ds))
    write_lines(keys["PFC_OUTPUT_FILE"], pfc_lines(ds))
    if qlen is not None:
        write_lines(keys["QLEN_MON_FILE"], qlen.lines)
    return ds, [Path(p) for p in keys.values()] + ([Path(telemetry_out)] if telemetry_out is not None else [])
