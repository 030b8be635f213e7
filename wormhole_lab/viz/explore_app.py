"""The Wormhole explorer: run a workload in Wormhole mode and watch partitions, skipped windows and the memo DB.

Workloads: one training iteration of a model preset (``Exploration(model="GPT-13B", gpus=128).run()`` in a
notebook), a SimAI/AICB file (uploaded, or picked from a workload folder), small teaching patterns, or several jobs
on one fabric (``scenarios.interference``): two training jobs placed packed, interleaved or at random, or a job
beside background traffic at a load. With jobs, the views colour flows and partitions by job, and the finished run
shows each job's iteration time against the same job run alone (its slowdown).
``Exploration`` (``param.Parameterized``) holds the choices and builds the Scenario; ``ExploreApp`` is the Panel
page served by ``widgets/explore.py``. "Compare with packet mode" runs the same scenario packet by packet and shows the
per-flow FCT error.
"""

import tempfile
import time
from dataclasses import replace
from pathlib import Path

import holoviews as hv
import numpy as np
import panel as pn
import param

from wormhole_lab.engine import layout as L
from wormhole_lab.errors import InputError
from wormhole_lab.job_results import job_summary
from wormhole_lab.results import audit_summary
from wormhole_lab.scenarios.interference import PLACEMENTS, job_with_background, two_jobs
from wormhole_lab.scenarios.teaching import incast, parking_lot, repeated_incast, staggered
from wormhole_lab.scenarios.training import (
    GPU_COUNTS,
    MODELS,
    default_workload_folder,
    model_scenario,
    simai_files,
    simai_scenario,
)
from wormhole_lab.simulation import Scenario
from wormhole_lab.viz.app_base import LiveDriver, PlotSlot, app_page
from wormhole_lab.viz.figures import compare_modes
from wormhole_lab.viz.live import LiveRun, skip_counts
from wormhole_lab.viz.live_views import ExplorerView
from wormhole_lab.viz.style import LINE_COLORS
from wormhole_lab.wormhole.settings import WormholeConfig
from wormhole_lab.wormhole.steady import SteadyConfig

MODEL, SIMAI = "model preset", "SimAI file"
TOYS = (
    "repeated incast (memo hits under DCTCP)",
    "N-to-1 incast",
    "staggered flows (dumbbell)",
    "parking lot (two bottlenecks)",
)
TWO_JOBS, BACKGROUND = "two jobs", "job + background traffic"
JOBS = (TWO_JOBS, BACKGROUND)
WORKLOADS = (MODEL, SIMAI, *JOBS, *TOYS)
PRESETS = ("hp", "dctcp", "timely", "dcqcn")
JOB_GPUS = (16, 32, 64)  # per job, on the k=8 fat tree of scenarios.interference (128 GPUs)
LOADS = {"10 %": 0.1, "30 %": 0.3, "50 %": 0.5}
BACKGROUND_US = 500  # background traffic for this long from the start: over the job's first communication


class Exploration(param.Parameterized):
    """One Wormhole-mode run of a workload, with its memo DB.

    The default, GPT-7B on 64 GPUs at a hundredth of its bytes and compute, runs in a few seconds."""

    workload = param.Selector(label="Workload", objects=list(WORKLOADS), default=MODEL)
    cca = param.Selector(label="CCA preset", objects=list(PRESETS), default="hp", doc="engine preset")
    model = param.Selector(label="Model", objects=list(MODELS), default="GPT-7B", doc="Table 1 preset")
    gpus = param.Selector(label="GPUs", objects=list(GPU_COUNTS), default=64, doc="TP and PP as the preset; DP scales")
    size_scale = param.Number(
        default=0.01,
        label="Size scale",
        bounds=(1e-6, 1),
        doc="flow bytes (and a model's compute times) are multiplied by this",
    )
    simai_folder = param.String(default="", label="Workload folder", doc="folder whose SimAI files are listed")
    simai_file = param.Selector(
        label="SimAI file", objects={}, default=None, allow_None=True, check_on_set=False, doc="path of the file"
    )
    n = param.Integer(default=3, label="N (senders)", bounds=(1, 16), doc="senders (small workloads)")
    placement = param.Selector(
        label="Placement", objects=list(PLACEMENTS), default="interleaved",
        doc="where each job's GPUs are: packed (first free servers), interleaved (every other server), random",
    )  # fmt: skip
    load = param.Selector(label="Background load", objects=LOADS, default=0.3, doc="of the host link rate")
    job_gpus = param.Selector(label="GPUs per job", objects=list(JOB_GPUS), default=32, doc="on a 128-GPU fat tree")
    job_scale = param.Number(
        default=0.003, label="Size scale (jobs)", bounds=(1e-6, 1),
        doc="each job's flow bytes and compute times are multiplied by this",
    )  # fmt: skip
    iterations = param.Integer(default=1, label="Iterations", bounds=(1, 5), doc="per training job, one after another")
    start_us = param.Integer(default=0, label="Job b starts after (µs)", bounds=(0, 100_000), doc="two jobs")
    theta = param.Number(
        default=0.05, label="Steady test θ", bounds=(0.005, 0.5), step=0.005, doc="steady test threshold theta"
    )
    audit = param.Integer(
        default=4,
        label="Audit K (skips re-simulated)",
        bounds=(0, 64),
        doc="K fast-forwards and K memo hits re-simulated packet by packet for an error estimate (0: none)",
    )
    memo_path = param.String(
        default="",
        label="Memo DB path (empty: per session)",
        doc="memo DB (SQLite); empty: a fresh file per session, kept between runs",
    )

    def __init__(self, **params):
        params.setdefault("simai_folder", default_workload_folder())
        super().__init__(**params)
        self._folder = None

    @param.depends("simai_folder", watch=True, on_init=True)
    def _list_folder(self) -> None:
        found = simai_files(self.simai_folder)
        self.param.simai_file.objects = found
        if self.simai_file is None and found:
            self.simai_file = found.get("workload_gpt7b_64g.txt", next(iter(found.values())))

    def add_file(self, name: str, path: str) -> None:
        """Offer an uploaded file in the list and pick it."""
        self.param.simai_file.objects = {**self.param.simai_file.names, name: path}
        self.param.update(simai_file=path, workload=SIMAI)

    def memo_file(self) -> str:
        if self.memo_path:
            return self.memo_path
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="wormhole_memo_")
        return str(Path(self._folder) / "memo.sqlite")

    def build(self) -> Scenario:
        if self.workload == MODEL:
            scenario = model_scenario(self.model, self.gpus, self.cca, self.size_scale)
        elif self.workload == SIMAI:
            if not self.simai_file:
                raise InputError("simai_file", "no SimAI workload file chosen", "upload one or pick one from the list")
            scenario = simai_scenario(self.simai_file, self.cca, self.size_scale)
        elif self.workload == TWO_JOBS:
            scenario = two_jobs(
                self.placement, self.model, self.job_gpus, self.cca, self.job_scale, iterations=self.iterations,
                start_us=self.start_us,
            )  # fmt: skip
        elif self.workload == BACKGROUND:
            scenario = job_with_background(
                self.load, self.model, self.job_gpus, cca=self.cca, scale=self.job_scale, duration_us=BACKGROUND_US
            )
        elif self.workload == TOYS[0]:
            scenario = repeated_incast(n=self.n)  # DCTCP, as its label says: an HPCC incast is never memoized
        else:
            make = {TOYS[1]: incast, TOYS[2]: staggered, TOYS[3]: parking_lot}[self.workload]
            scenario = make(n=self.n, cca=self.cca, size=2_000_000)
        steady = SteadyConfig(theta=self.theta)
        return replace(scenario, wormhole=WormholeConfig(steady=steady, memo=self.memo_file(), audit=self.audit))

    def live(self) -> LiveRun:
        scenario = self.build()
        kind = JobsRun if "jobs" in scenario.flows.meta else LiveRun
        return kind(scenario, mode="wormhole", history=False)

    def run(self) -> LiveRun:
        return self.live().run()


class JobsRun(LiveRun):
    """A LiveRun of several jobs that pauses after the chunk in which every flow completed: the step after it
    finishes the run, which runs each job alone (``Scenario.alone_mode``) for the slowdowns and takes as long as a
    good part of the run, so the page says so in between (``finishing``). ``finish_seconds``: what that cost."""

    def __init__(self, scenario, mode: str = "wormhole", history: bool = True):
        super().__init__(scenario, mode=mode, history=history)
        self.finishing = False
        self.finish_seconds = 0.0

    def all_flows_done(self) -> bool:
        ctrl = self.controller
        return ctrl is not None and int(ctrl.state.g[L.G_DONE_COUNT]) >= len(self.scenario.flows)

    def step(self, max_chunks: int | None = None, budget_s: float | None = None) -> bool:
        t0 = time.perf_counter()
        if self.finishing:
            more = super().step(max_chunks, budget_s)
            self.finish_seconds += time.perf_counter() - t0
            return more
        pulled = 0
        while super().step(max_chunks=1):
            pulled += 1
            if self.all_flows_done():
                self.finishing = True
                return True
            if max_chunks is not None and pulled >= max_chunks:
                return True
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                return True
        return False


def _time(ps: float) -> str:
    if not np.isfinite(ps):
        return "–"
    return f"{ps / 1e9:.3f} ms" if ps >= 1e9 else f"{ps / 1e6:.1f} µs"


def jobs_markdown(ds, finish_seconds: float | None = None) -> str:
    """The per-job table of a finished run and what "alone" means, as Markdown; empty without jobs."""
    rows = job_summary(ds)
    if not rows:
        return ""
    lines = [
        "**Jobs** (colours as in the views)",
        "",
        "| job | iterations | mean iteration time | alone | slowdown |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        its = "–" if r["iterations"] is None else str(r["iterations"])
        fct = " (mean FCT)" if r["measure"] == "FCT" else ""
        slow = f"{r['slowdown']:.3f}" if np.isfinite(r["slowdown"]) else "–"
        name = f"{r['job']} (background)" if r["kind"] == "background" and r["job"] != "background" else r["job"]
        lines.append(f"| {name} | {its} | {_time(r['mean_ps'])}{fct} | {_time(r['alone_ps'])} | {slow} |")
    mode = ds.attrs.get("alone_mode", "off")
    if mode == "off":
        note = "*Alone:* not run (alone mode off), so no slowdown."
    else:
        took = f" (they took {finish_seconds:.1f} s)" if finish_seconds else ""
        note = (
            f"*Alone:* each job run by itself on the same GPUs after the run, in {mode} mode{took}. Slowdown: "
            "the mean iteration time over the mean alone (background traffic: mean FCT over its mean alone); "
            "above 1, the job lost time to the other's traffic on the ports they share."
        )
    return "\n".join([*lines, "", note])


def explorer_summary(run: LiveRun, compared: dict | None = None, skips=None) -> str:
    """Markdown: events skipped so far (the estimate Wormhole keeps), the memo, the skipped windows, the audit; after a
    comparison with packet mode, what was measured beside what was estimated."""
    m = run.memo_log
    executed, skipped = m["events_executed"][-1], m["events_skipped"][-1]
    lookups, hits = m["lookups"][-1], m["hits"][-1]
    estimate = (executed + skipped) / executed if executed else float("nan")
    fast, memo_hits = skip_counts(run, skips)
    text = (
        f"- **Events:** {executed:,} executed, ~{skipped:,.0f} skipped (an estimate: skipped stretches at the "
        f"event rate packet mode had there), so about {estimate:.1f}× fewer events than packet mode\n"
        f"- **Memo:** {lookups} lookups, {hits} hits, hit rate {hits / lookups if lookups else 0:.0%} "
        f"({_memo_where(run)})\n"
        f"- **Skipped windows:** {fast} fast-forwards, {memo_hits} memo hits; partitions now: "
        f"{len(run.partitions())}"
    )
    a = run.flows.attrs if run.flows is not None else {}
    if a.get("audit_k"):
        text += f"\n- **Audit:** {audit_summary(a)}; the re-simulated stretches are outlined red on the timeline"
    if compared is not None:
        text += (
            f"\n- **Measured against packet mode** (same scenario): {compared['speedup_events']:.1f}× fewer events "
            f"executed, FCT error mean {compared['fct_error_mean']:.2%}, p99 {compared['fct_error_p99']:.2%}. The "
            "estimate above counts skipped stretches at the rate of the events around them; where packet mode "
            "runs more events in those stretches (queues building, retransmissions), the measured ratio is higher."
        )
        if a.get("audit_k"):
            text += (
                " The audit's error estimate comes from the few skips it re-simulates, weighted by the bytes they "
                "credit; the measured error also includes flows the audit did not sample."
            )
    if run.done:
        jobs = jobs_markdown(run.flows, getattr(run, "finish_seconds", None))
        text += f"\n\n{jobs}" if jobs else ""
    return text


def _memo_where(run: LiveRun) -> str:
    memo = run.scenario.wormhole.memo
    if memo is True:
        return "within this run"
    return f"kept in {memo}" if memo else "off"


BARS_UP_TO = 64  # flows; more get a histogram of their errors


def fct_error_plot(result: dict) -> hv.Element:
    """Per-flow FCT error of the Wormhole run against the packet run: bars per flow, or a histogram for many."""
    packet, fast = result["packet"], result["wormhole"]
    err = (fast["fct"].values / packet["fct"].values - 1) * 100
    title = f"per-flow FCT error: mean {np.abs(err).mean():.2f} %, max {np.abs(err).max():.2f} %"
    error = hv.Dimension("error", label="FCT error (Wormhole vs packet)", unit="%")
    if len(err) <= BARS_UP_TO:
        plot = hv.Bars((np.arange(len(err)).astype(str), err), hv.Dimension("flow", label="flow"), error)
    else:
        counts, edges = np.histogram(err, bins=40)
        plot = hv.Histogram((edges, counts), kdims=[error], vdims=[hv.Dimension("flows", label="flows")])
        title += f" ({len(err)} flows)"
    return plot.opts(color=LINE_COLORS[0], title=title, responsive=True, height=250)


def _visible_for(workload: str) -> dict[str, bool]:
    return {
        "model": workload == MODEL, "simai": workload == SIMAI, "jobs": workload in JOBS,
        "two": workload == TWO_JOBS, "background": workload == BACKGROUND, "toy": workload in TOYS,
    }  # fmt: skip


def alone_runs_status(run) -> str:
    """What a ``JobsRun`` does once ``finishing``: each job runs alone for its slowdown (the page's status and the
    notebook widget's message say it)."""
    return (
        f"every flow completed by {run.now_ps / 1e6:.0f} µs; now running each job alone on the same GPUs "
        f"({run.scenario.alone_mode} mode) for its slowdown…"
    )


class _Driver(LiveDriver):
    """The LiveDriver, saying what happens between the last flow's end and the run's: each job runs alone. The
    slices follow each other without a pause, so after that status the next ticks leave the server's loop idle for
    ``PAUSE_S``: the page gets it before the alone runs hold the loop."""

    PAUSE_S = 0.1
    _paused_until = None

    def start(self, make_runs):
        self._paused_until = None
        return super().start(make_runs)

    def _tick(self) -> bool:
        if self._paused_until is not None and time.perf_counter() < self._paused_until:
            return True
        more = super()._tick()
        run = self.run
        if more and getattr(run, "finishing", False):
            if self._paused_until is None and self._callback is not None:
                self._paused_until = time.perf_counter() + self.PAUSE_S
            self.status.object = (
                f"Run {self.runs_started}: {alone_runs_status(run)} ({time.perf_counter() - self.started_at:.1f} s)"
            )
        return more


class ExploreApp:
    """The Panel page of the explorer."""

    def __init__(self, exploration: Exploration | None = None):
        self.exploration = exploration or Exploration()
        self.run_button = pn.widgets.Button(label="Run in Wormhole mode", color="primary")
        self.compare_button = pn.widgets.Button(label="Compare with packet mode", color="default")
        self.upload = pn.widgets.FileInput(accept=".txt")
        self.status = pn.pane.Markdown(
            "Pick a workload and press **Run in Wormhole mode**.", css_classes=["run-status"]
        )
        self.alert = pn.pane.Alert("", alert_type="warning", visible=False)
        self.summary = pn.pane.Markdown("", css_classes=["explore-summary"])
        self.graph = PlotSlot(
            "**Partition graph** — appears when the run starts: each partition (flows that share links) in its own "
            "cell, flows as circles coloured by what they do, the ports they use as white squares. With several "
            "jobs, flows are filled in their job's colour and ringed by what they do; a cell outlined dashed "
            "vermillion holds flows of several jobs (they share ports there)."
        )
        self.timeline = PlotSlot(
            "**Timeline** — appears with the first telemetry chunk: sending rates of the largest flows (with jobs: "
            "of each job in turn, coloured by job), fast-forwarded windows shaded blue, memo-hit transients orange, "
            "audited stretches outlined red."
        )
        self.memo = PlotSlot(
            "**Memo DB** — appears with the first chunk: lookups, hits and misses, hit rate, the DB's size, and "
            "events executed against events skipped."
        )
        self.compare = PlotSlot()  # only once there is a comparison
        self.compared = None  # the last comparison's numbers
        self.views = None  # the run's ExplorerView
        self.driver = _Driver(self._update, self.alert, self.status)
        self.run_button.on_click(lambda _e: self.start())
        self.compare_button.on_click(lambda _e: self.compare_with_packet())
        self.upload.param.watch(self._uploaded, "value")
        self._upload_dir = None
        e = self.exploration
        widgets = {
            "workload": pn.widgets.Select, "cca": pn.widgets.Select, "size_scale": pn.widgets.FloatInput,
            "job_scale": pn.widgets.FloatInput,
        }  # fmt: skip

        def group(*names):
            return pn.Param(e, parameters=list(names), widgets=widgets, show_name=False, sizing_mode="stretch_width")

        upload_label = pn.pane.Markdown("or upload a SimAI file:", margin=(0, 10))
        self.groups = {
            "model": group("model", "gpus", "size_scale"),
            "simai": pn.Column(group("simai_folder", "simai_file", "size_scale"), upload_label, self.upload),
            "jobs": group("model", "job_gpus", "job_scale"),
            "two": group("placement", "iterations", "start_us"),
            "background": group("load"),
            "toy": group("n"),
        }
        self.controls = pn.Column(
            group("workload", "cca"),
            *self.groups.values(),
            group("theta", "audit", "memo_path"),
            sizing_mode="stretch_width",
        )
        e.param.watch(self._show_controls, "workload")
        self._show_controls()

    def _show_controls(self, *_event) -> None:
        for name, visible in _visible_for(self.exploration.workload).items():
            self.groups[name].visible = visible

    def start(self) -> LiveRun | None:
        return self.driver.start(self._runs)

    def _uploaded(self, event) -> None:
        if not event.new:
            return
        if self._upload_dir is None:
            self._upload_dir = tempfile.mkdtemp(prefix="wormhole_upload_")
        name = Path(self.upload.filename or "workload.txt").name
        path = Path(self._upload_dir) / name
        path.write_bytes(event.new)
        self.exploration.add_file(f"{name} (uploaded)", str(path))

    def compare_with_packet(self):
        self.alert.visible = False
        try:
            scenario = self.exploration.build()
            if "jobs" in scenario.flows.meta:  # the comparison needs no slowdowns: no alone runs
                scenario = replace(scenario, alone_mode="off")
            result = compare_modes(scenario)
        except Exception as exc:  # noqa: BLE001
            self.driver.show_error(exc)
            return None
        self.compared = result
        self.compare.show(fct_error_plot(result))
        self.status.object = (
            f"Compared with packet mode: {result['speedup_events']:.1f}× fewer events executed, "
            f"FCT error mean {result['fct_error_mean']:.2%}, p99 {result['fct_error_p99']:.2%}."
        )
        if self.driver.run is not None and self.driver.run.done:
            self.summary.object = explorer_summary(self.driver.run, result, self.views.skips)
        return result

    def _runs(self) -> LiveRun:
        run = self.exploration.live()
        self.views = ExplorerView(run.scenario, theta=self.exploration.theta)
        self.compared = None
        self.graph.show(self.views.graph.pane)
        self.timeline.show(self.views.rate_pane)
        self.memo.show(self.views.memo_grid)
        return run

    def _update(self, final: bool) -> None:
        run = self.driver.run
        self.views.update(run)
        self.summary.object = explorer_summary(run, self.compared, self.views.skips)

    def view(self) -> pn.template.BootstrapTemplate:
        intro = pn.pane.Markdown(
            "Runs the workload in Wormhole mode and shows, as it runs: the partitions (flows grey when simulated "
            "packet by packet, blue when fast-forwarded, orange when taken from the memo DB; white squares are "
            "ports), the sending rates with skipped windows shaded, and the memo DB's hit rate. The memo DB is "
            "kept between runs of this session, so a second run hits more. With two jobs, or a job beside "
            "background traffic, flows are filled in their job's colour (ringed by what they do), a partition "
            "holding several jobs' flows is outlined dashed vermillion (that is where the jobs interfere), the "
            "rate lines take their job's colour, and the finished run lists each job's slowdown against running "
            "alone."
        )
        return app_page(
            "wormhole_lab: Wormhole explorer",
            sidebar=[self.controls, self.run_button, self.compare_button],
            main=[
                pn.Column(
                    intro,
                    self.status,
                    self.alert,
                    self.summary,
                    pn.Row(self.graph.panel, self.timeline.panel, sizing_mode="stretch_width"),
                    self.memo.panel,
                    self.compare.panel,
                    sizing_mode="stretch_width",
                )
            ],
        )
