"""Scenario -> results: the one entry point notebooks, the CLI and the apps use."""

import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

import wormhole_lab
from wormhole_lab.chakra_results import add_rank_results
from wormhole_lab.compile_notice import announce_compile_if_cold, kernels_key
from wormhole_lab.engine import invariants
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.config import MAX_STOP_TIME_PS, EngineConfig
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.runner import advance, compile_engine
from wormhole_lab.engine.state import DATA_HEADER_BYTES, EngineState, ResourceLimitError, build_state
from wormhole_lab.engine.timing import serialisation_ps
from wormhole_lab.errors import InputError
from wormhole_lab.flowlevel.run import FlowLevel, compile_flow_level
from wormhole_lab.interrupts import deferred_signals, sigterm_as_interrupt
from wormhole_lab.job_results import add_job_results, alone_runs, check_alone_mode
from wormhole_lab.results import add_wormhole_results, flow_results, iteration_summary
from wormhole_lab.telemetry import ChunkBuilder, StoreWriter, Telemetry, check_store_path, open_store
from wormhole_lab.topology.builders import star
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.routing import Routes
from wormhole_lab.topology.validate import check_topology
from wormhole_lab.workload.flows import FlowTable, make_flows
from wormhole_lab.workload.validate import check_flows
from wormhole_lab.wormhole.settings import WormholeConfig

if TYPE_CHECKING:  # xarray is imported where a Dataset is made (see results.py)
    import xarray as xr

MODES = ("packet", "wormhole", "flow")
# a compiled kernel holds off Ctrl-C and SIGTERM until it returns: without telemetry or a progress callback, a
# packet run (hours at 1024 GPUs) returned only at its end, so the engine returns at least this often (simulated)
SAFE_POINT_PS = 10**9


@dataclass(frozen=True)
class Scenario:
    """A cluster, its traffic and the engine configuration: everything a run depends on."""

    topology: Topology
    flows: FlowTable
    config: EngineConfig
    name: str = "scenario"
    telemetry: Telemetry = field(default_factory=Telemetry)
    wormhole: WormholeConfig = field(default_factory=WormholeConfig)
    check_invariants: bool = False  # cross-check the engine's bookkeeping at every stop (slower; tests use it)
    meta: dict = field(default_factory=dict)
    alone_mode: str = "wormhole"  # several jobs: the mode of each job's run alone, for its slowdown (job_results.py)


@dataclass
class Prepared:
    """A checked scenario turned into engine arrays plus the per-flow reference figures."""

    state: EngineState
    standalone_ps: np.ndarray
    max_rtt_ns: int
    max_bdp_bytes: int


def check_scenario(scenario: Scenario) -> None:
    """Check the scenario's topology and flows, raising an InputError that names the field and the fix."""
    topo = scenario.topology
    check_topology(topo, where=f"Scenario({scenario.name}).topology")
    check_flows(scenario.flows, topo, where=f"Scenario({scenario.name}).flows")
    check_alone_mode(scenario.alone_mode, f"Scenario({scenario.name}).alone_mode")
    if np.any(topo.link_error_rate != 0):
        raise InputError(
            f"Scenario({scenario.name}).topology",
            "links with a non-zero error rate are not modelled yet",
            "set every link's error_rate to 0",
        )


def prepare(scenario: Scenario) -> Prepared:
    """Validate every input, route every flow and build the engine state; nothing here simulates."""
    check_scenario(scenario)
    return _build(scenario)


def _build(scenario: Scenario) -> Prepared:
    """``prepare`` of a checked scenario."""
    topo, flows, cfg = scenario.topology, scenario.flows, scenario.config
    routes = Routes(topo, payload_bytes=cfg.payload_bytes)
    paths = routes.paths(flows)
    max_rtt_ns, max_bdp = routes.max_rtt_bdp()
    constants = routes.flow_constants(flows.src, flows.dst, flows.size)
    standalone_ns = constants.standalone_ns
    if not cfg.has_win:
        window = np.zeros(len(flows), dtype=np.int64)
    elif cfg.global_t:
        window = np.full(len(flows), max_bdp, dtype=np.int64)
    else:
        window = constants.bdp_bytes
    if cfg.global_t:
        base_rtt = np.full(len(flows), max_rtt_ns, dtype=np.int64)
    else:
        base_rtt = constants.base_rtt_ns
    state = build_state(topo, flows, paths, cfg, window, base_rtt)
    return Prepared(state, standalone_ns * 1000, max_rtt_ns, max_bdp)


_wormhole_compiled = set()  # the CCAs compile_wormhole compiled for
_PRESET_OF_CCA = {"dcqcn": "dcqcn", "hpcc": "hp", "timely": "timely", "dctcp": "dctcp"}


def compile_wormhole(cca: str = "dcqcn") -> float:
    """Compile (or load from the cache) the kernels Wormhole mode calls with the congestion control ``cca`` (each CCA
    has its own event loop: engine.kernel.event_loop), once per process and CCA; returns the seconds taken.

    Otherwise each loads at its first call, mid-run: a first run after installing stalled there for ~15 s of
    compilation, and a first run with a memo DB spent about half of GPT-7B's 0.08 s loading them, outside the
    set-up the summary reports. The scenario takes each path: a flow settles, is stored and fast-forwarded, a short
    flow is placed at a steady verdict, and one like the first takes the stored transient."""
    if cca in _wormhole_compiled:
        return 0.0
    _wormhole_compiled.add(cca)  # the run below compiles nothing more
    t0 = time.perf_counter()
    flows = make_flows([0, 2, 0], [1, 3, 1], [4_000_000, 20_000, 4_000_000], [0, 30_000_000, 2_000_000_000])
    with tempfile.TemporaryDirectory() as folder:
        config = WormholeConfig(memo=f"{folder}/memo.sqlite")
        engine = preset(_PRESET_OF_CCA[cca])
        scenario = Scenario(star(4), flows, engine, telemetry=Telemetry.off(), wormhole=config)
        simulation = Simulation(scenario, mode="wormhole")
        for _ in simulation.raw_chunks():
            pass
    # the skip-back test, for a flow that starts unannounced (on a dependency) during a skip
    simulation.controller.partitions.skipping_at_ports_of(np.zeros(1, dtype=np.int64), 0)
    return time.perf_counter() - t0


def compile_kernels(mode: str = "packet", cca: str = "dcqcn") -> float:
    """Compile (or load from the cache) the kernels a run in ``mode`` with the congestion control ``cca`` (the
    scenario's ``config.cca``; flow mode has none) calls, once per process; returns the seconds taken. When they are
    not cached on this machine yet, says so on stderr first, and how long it took after (``compile_notice``); when
    they are, says nothing."""
    if mode == "flow":
        with announce_compile_if_cold(mode):
            return compile_flow_level()
    with announce_compile_if_cold(kernels_key(mode, cca)):
        # Wormhole runs have partitions attached: their event loop is run_until's, which compile_wormhole's run
        # compiles with all it calls; compile_engine's run_until_packet's would be a second, unused compile
        return compile_wormhole(cca) if mode == "wormhole" else compile_engine(cca)


def _min_interval_ps(scenario: Scenario) -> int:
    """Serialisation time of one full data packet on the fastest link: the shortest useful sampling interval."""
    wire = scenario.config.payload_bytes + DATA_HEADER_BYTES
    return int(serialisation_ps(wire, int(scenario.topology.link_rate_bps.max()), scenario.config.time_quantum_ps))


@dataclass(frozen=True)
class Progress:
    """Where a run is: simulated time, flows finished, events executed and (Wormhole mode) skipped."""

    sim_time_ps: int
    flows_done: int
    flows_total: int
    events: int
    events_skipped: int


class UnfinishedFlowsWarning(UserWarning):
    """A run ended with flows that did not complete (its stop time came first, or nothing was left to happen)."""


def unfinished_message(ds) -> str:
    """What a run that left flows unfinished tells its user: how many, why, and how to run longer; '' if none.
    ``ds``: the run's RunResults or Dataset."""
    left = int(ds.attrs["flows_unfinished"])
    if not left:
        return ""
    total = len(ds["completed"])
    if ds.attrs["stop_reason"] == "time":
        return (
            f"{left:,} of {total:,} flows did not finish by the stop time "
            f"({ds.attrs['sim_end_ps'] / 1e12:g} s simulated); raise it (EngineConfig.stop_time_ps, "
            "config.stop_time_ps in a scenario file, SIMULATOR_STOP_TIME in a reference config) or leave it "
            "unset to run until every flow completes"
        )
    return (
        f"{left:,} of {total:,} flows did not finish and no event was left to run at "
        f"{ds.attrs['sim_end_ps'] / 1e12:g} s (stopped: {ds.attrs['stop_reason']}); check the flows' dependencies"
    )


class Simulation:
    """Runs a Scenario. ``run()`` returns an ``xarray.Dataset`` with one row per flow.

    ``mode``: "packet" (the packet engine), "wormhole" (the same, accelerated) or "flow" (max-min fair rates
    per flow, no packets: ``docs/flow-level-mode.md``; it records no telemetry series)."""

    def __init__(
        self, scenario: Scenario, mode: str = "packet", progress=None, progress_step_ps: int = 10**8,
        audit: int | None = None,
    ):  # fmt: skip
        """``progress(Progress)`` is called every ``progress_step_ps`` of simulated time (and at the end).
        ``audit=K`` (Wormhole mode) re-simulates K fast-forwards and K memo hits packet by packet for an error
        estimate; it overrides the scenario's ``WormholeConfig.audit``."""
        if mode not in MODES:
            raise InputError("Simulation.mode", f"unknown mode {mode!r}", f"choose one of {', '.join(MODES)}")
        if audit is not None:
            if mode != "wormhole" and audit:
                raise InputError("Simulation.audit", "the audit checks Wormhole mode's skips", 'use mode="wormhole"')
            scenario = replace(scenario, wormhole=scenario.wormhole.overridden(audit=audit))
        self.scenario = scenario
        self.mode = mode
        self.results = None  # RunResults once the run has ended
        self._flows = None
        self.progress = progress
        self.progress_step_ps = progress_step_ps

    def stream(self, out=None, fmt: str | None = None) -> Iterator["xr.Dataset"]:
        """Yield each telemetry chunk as a Dataset as soon as the engine fills it.

        With ``out``, chunks are also appended to a netCDF or zarr store (``fmt`` or the suffix decides);
        a run that stops early (an exception, Ctrl-C, or the consumer stopping) leaves the store readable
        and marked incomplete. After the last chunk, ``self.flows`` holds the flow table Dataset."""
        if out is None:
            yield from self._stream(None, None)
            return
        fmt = check_store_path(out, fmt)
        # between the engine's safe points (deferred_signals) SIGTERM would kill the process with the store open
        # and half written, unreadable; raised as Terminated it reaches the store's close, as Ctrl-C does
        with sigterm_as_interrupt():
            yield from self._stream(out, fmt)

    def _stream(self, out, fmt) -> Iterator["xr.Dataset"]:
        writer, finished = None, False
        try:
            with deferred_signals() as pending:
                if out is not None:
                    writer = StoreWriter(out, fmt, {"title": f"wormhole_lab {self.mode} run of {self.scenario.name}"})
            pending.check()
            builder = None
            for raw in self.raw_chunks():
                with deferred_signals() as pending:
                    if builder is None:
                        ports, flow_ids = self.telemetry_selection
                        topo, flows, cfg = self.scenario.topology, self.scenario.flows, self.scenario.config
                        builder = ChunkBuilder(
                            topo, flows, ports, flow_ids, cfg.cca, self.scenario.telemetry.interval_ps
                        )
                    chunk = builder.build(*raw)
                    if writer is not None:
                        writer.append(chunk)
                pending.check()
                yield chunk
            finished = True
        finally:
            if writer is not None:
                writer.close(self.flows if finished else None, "" if finished else "the run stopped early")

    def raw_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Run, yielding each telemetry chunk as the engine's arrays (sample times, rows of the selected ports,
        rows of the selected flows: ``telemetry_selection``) as soon as it is full. After the last chunk,
        ``self.results`` holds the flow table (``self.flows`` as a Dataset). Nothing here imports xarray."""
        scenario = self.scenario
        t_setup = time.perf_counter()
        check_scenario(scenario)  # a bad input is told before the kernels load (on a first run, compile)
        # loaded before the tables are built (build_state calls some), the kernels' share of the set-up is all here
        self.compile_seconds = compile_kernels(self.mode, scenario.config.cca)
        prepared = _build(scenario)
        state = prepared.state
        state.outside_bytes = scenario.flows.nbytes
        if "jobs" in scenario.flows.meta and self.mode != "flow":
            state.count_marks_per_hop()  # the ECN marks of each job at each port (job_results)
        self._state = state
        telemetry = scenario.telemetry
        self.telemetry_selection = None
        flow = FlowLevel(state) if self.mode == "flow" else None
        if telemetry.enabled and flow is None:
            ports, flow_ids = telemetry.select(scenario.topology, len(scenario.flows), _min_interval_ps(scenario))
            state.attach_telemetry(
                ports, flow_ids, telemetry.interval_ps, telemetry.chunk_samples,
                telemetry.start_ps, telemetry.end_ps, telemetry.idle_samples,
            )  # fmt: skip
            self.telemetry_selection = (ports, flow_ids)
        horizon = scenario.config.stop_time_ps or MAX_STOP_TIME_PS
        controller = None
        if self.mode == "wormhole":
            from wormhole_lab.wormhole.controller import WormholeController  # (networkx, sqlite3) only when used

            controller = WormholeController(state, scenario.flows, scenario.wormhole, scenario.config)
        self.controller = controller
        state.ci[L.CI_CHECK] = scenario.check_invariants
        self.setup_seconds = time.perf_counter() - t_setup
        wall = 0.0

        def step() -> tuple[str, tuple | None]:
            """Run the engine to its next stop and act on it; returns the stop and a telemetry chunk, if any."""
            nonlocal wall
            t0 = time.perf_counter()
            target = min(horizon, state.now_ps + (SAFE_POINT_PS if self.progress is None else self.progress_step_ps))
            stop = advance(state, target) if flow is None else flow.advance(target)
            if self.progress is not None and stop in ("time", "all_done", "idle"):
                self.progress(self._progress(state, controller))
            if stop == "time" and target < horizon:
                wall += time.perf_counter() - t0
                return "progress", None
            if scenario.check_invariants and flow is None:
                invariants.check(state, scenario.config.pfc)
            if controller is not None:
                controller.on_stop(stop == "steady", horizon)
            wall += time.perf_counter() - t0
            chunk = None
            if stop not in ("flow_event", "steady") and self.telemetry_selection is not None:
                if stop == "chunk" or state.g[L.G_TEL_ROW] > 0:
                    chunk = state.take_chunk()
            return stop, chunk

        # signals wait for a safe point (see interrupts.py); the consumer's own code between chunks is left alone.
        # One block spans the stops up to the next chunk: MoE-32x22B on 1024 GPUs stops 50,000 times in its first
        # 350 ms, and handlers set and put back at each cost ~20 us (1.1 s of 57 s)
        running = True
        while running:
            with deferred_signals() as pending:
                while True:
                    stop, chunk = step()
                    pending.check()
                    running = stop in ("progress", "flow_event", "steady", "chunk")
                    if chunk is not None or not running:
                        break
            pending.check()  # one that came after the last check, while the handler was still ours (once in CI)
            if chunk is not None:
                yield chunk
        with deferred_signals() as pending:
            if controller is not None:
                t0 = time.perf_counter()
                controller.finish()  # books the skips still running; the audit replays its sample
                wall += time.perf_counter() - t0
            attrs = self._attrs(prepared, stop, wall)
            if flow is not None:
                flow.finish()
                attrs.update(flow.attrs())
            results = flow_results(state, scenario.flows, prepared.standalone_ps, attrs)
            results.attrs.update(iteration_summary(results, scenario.flows.tail_ps))
            results.attrs["flows_unfinished"] = int((results["completed"] == 0).sum())
            results.attrs["unfinished_message"] = unfinished_message(results)
            if results.attrs["unfinished_message"]:
                warnings.warn(results.attrs["unfinished_message"], UnfinishedFlowsWarning, stacklevel=3)
            if controller is not None:
                results = add_wormhole_results(results, controller)
        pending.check()
        if "jobs" in scenario.flows.meta:  # the alone runs are runs of their own: Ctrl-C reaches them
            results = add_job_results(results, scenario, state, alone_runs(scenario, scenario.alone_mode, Simulation))
        if "chakra" in scenario.flows.meta:
            results = add_rank_results(results, scenario)
        self.results, self._flows = results, None

    @property
    def flows(self) -> "xr.Dataset | None":
        """The flow table of the finished run as a Dataset (made on first use); None before the run ends."""
        if self._flows is None and self.results is not None:
            self._flows = self.results.dataset()
        return self._flows

    def _keep(self, chunk: "xr.Dataset", kept_bytes: int) -> int:
        """Count a telemetry chunk kept in memory against the cap before it is kept; returns the bytes kept then.
        Kept series count twice: joining them at the end copies them once more."""
        state, cap = self._state, self.scenario.config.memory_cap_bytes
        series = kept_bytes + chunk.nbytes
        total = state.nbytes() + self.scenario.flows.nbytes + 2 * series
        if total > cap:
            raise ResourceLimitError(
                f"telemetry kept in memory would take the run to {total / 2**30:.2f} GiB at "
                f"t={state.now_ps} ps, over the {cap / 2**30:.2f} GiB cap (EngineConfig.memory_cap_bytes): "
                f"{series / 2**30:.2f} GiB of series of {chunk.sizes['port']} ports and {chunk.sizes['flow']} "
                f"flows, joined at the end into a copy as large; the engine's tables hold "
                f"{state.nbytes() / 2**30:.2f} GiB. Fix: stream the series to a file (run(out='series.nc'); "
                "--out series.nc or --telemetry series.nc), sample less often (Telemetry(interval_ps=...)), "
                "record fewer ports or flows (Telemetry(ports=[...], flows=None)), or raise the cap"
            )
        state.outside_bytes = self.scenario.flows.nbytes + 2 * series
        return series

    def _progress(self, state, controller) -> Progress:
        skipped = int(controller.ff.events_skipped) if controller is not None else 0
        return Progress(state.now_ps, state.flows_done, len(self.scenario.flows), state.events_executed, skipped)

    def run(self, out=None, fmt: str | None = None) -> "xr.Dataset":
        """The flow table plus every telemetry series, in one Dataset.

        With ``out`` the series go to disk chunk by chunk (memory stays bounded) and are read back lazily.
        Without it they are kept in memory, inside ``EngineConfig.memory_cap_bytes`` with everything else: a
        chunk that would go over the cap stops the run with a ResourceLimitError saying how to shrink it."""
        if out is not None:
            for _ in self.stream(out, fmt):
                pass
            return open_store(out)
        chunks, kept = [], 0
        for chunk in self.stream(out, fmt):
            kept = self._keep(chunk, kept)
            chunks.append(chunk)
        if not chunks:
            return self.flows
        import xarray as xr

        series = xr.concat(chunks, dim="time", data_vars="all", coords="minimal", compat="override")
        return xr.merge([self.flows, series], join="outer", combine_attrs="override")

    def _attrs(self, prepared: Prepared, stop: str, wall: float) -> dict:
        cfg, state, topo = self.scenario.config, prepared.state, self.scenario.topology
        switch_ports = state.pt[:, L.PT_IS_SWITCH] == 1
        rates, headrooms = state.pt[switch_ports, L.PT_RATE], state.pt[switch_ports, L.PT_HEADROOM]
        headroom = {int(r): int(h) for r, h in zip(rates, headrooms, strict=True)}
        return {
            "title": f"wormhole_lab {self.mode} run of {self.scenario.name}",
            "wormhole_lab_version": wormhole_lab.__version__,
            "mode": self.mode,
            "cca": cfg.cca,
            "config_json": cfg.manifest_json(),
            "ecn_thresholds": "; ".join(
                f"{r} bit/s: Kmin {cfg.kmin_bytes[r]} B, Kmax {cfg.kmax_bytes[r]} B, Pmax {cfg.pmax[r]}"
                for r in sorted(cfg.kmin_bytes)
            ),
            "buffer_bytes": cfg.buffer_bytes,
            "pfc_headroom_bytes": "; ".join(f"{r} bit/s: {h} B" for r, h in sorted(headroom.items())),
            "max_rtt_ns": prepared.max_rtt_ns,
            "max_bdp_bytes": prepared.max_bdp_bytes,
            "n_hosts": int(len(topo.hosts)),
            "n_switches": int(len(topo.switches)),
            "n_links": topo.n_links,
            "stop_reason": stop,
            "sim_end_ps": state.now_ps,
            "events_executed": state.events_executed,
            "ecn_marks": int(state.g[L.G_ECN_MARKS]),
            "drops": int(state.g[L.G_DROPS]),
            "pfc_frames": int(state.g[L.G_PFC_COUNT]),
            "wall_seconds": wall,
            "compile_seconds": self.compile_seconds,
            "setup_seconds": self.setup_seconds,  # checks, routes, engine tables, controller, kernels (compile_seconds)
            "engine_bytes": state.nbytes(),
            "flow_table_bytes": self.scenario.flows.nbytes,
            # what each flow costs, apart from what the traffic in flight does (``per_flow_nbytes``)
            "bytes_per_flow": (state.per_flow_nbytes() + self.scenario.flows.nbytes) / max(len(self.scenario.flows), 1),
        }
