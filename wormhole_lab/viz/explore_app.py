"""The Wormhole explorer: run a workload in Wormhole mode and watch partitions, skipped windows and the memo DB.

Workloads: one training iteration of a model preset (``Exploration(model="GPT-13B", gpus=128).run()`` in a
notebook), a SimAI/AICB file (uploaded, or picked from a workload folder), or small teaching patterns.
``Exploration`` (``param.Parameterized``) holds the choices and builds the Scenario; ``ExploreApp`` is the Panel
page served by ``widgets/explore.py``. "Compare with packet mode" runs the same scenario packet by packet and shows the
per-flow FCT error.
"""

import tempfile
from dataclasses import replace
from pathlib import Path

import holoviews as hv
import numpy as np
import panel as pn
import param

from wormhole_lab.errors import InputError
from wormhole_lab.results import audit_summary
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
WORKLOADS = (MODEL, SIMAI, *TOYS)
PRESETS = ("hp", "dctcp", "timely", "dcqcn")


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
        elif self.workload == TOYS[0]:
            scenario = repeated_incast(n=self.n)  # DCTCP, as its label says: an HPCC incast is never memoized
        else:
            make = {TOYS[1]: incast, TOYS[2]: staggered, TOYS[3]: parking_lot}[self.workload]
            scenario = make(n=self.n, cca=self.cca, size=2_000_000)
        steady = SteadyConfig(theta=self.theta)
        return replace(scenario, wormhole=WormholeConfig(steady=steady, memo=self.memo_file(), audit=self.audit))

    def live(self) -> LiveRun:
        return LiveRun(self.build(), mode="wormhole", history=False)

    def run(self) -> LiveRun:
        return self.live().run()


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
    return {"model": workload == MODEL, "simai": workload == SIMAI, "toy": workload in TOYS}


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
            "cell, flows as circles coloured by what they do, the ports they use as white squares."
        )
        self.timeline = PlotSlot(
            "**Timeline** — appears with the first telemetry chunk: sending rates of the largest flows, "
            "fast-forwarded windows shaded blue, memo-hit transients orange, audited stretches outlined red."
        )
        self.memo = PlotSlot(
            "**Memo DB** — appears with the first chunk: lookups, hits and misses, hit rate, the DB's size, and "
            "events executed against events skipped."
        )
        self.compare = PlotSlot()  # only once there is a comparison
        self.compared = None  # the last comparison's numbers
        self.views = None  # the run's ExplorerView
        self.driver = LiveDriver(self._update, self.alert, self.status)
        self.run_button.on_click(lambda _e: self.start())
        self.compare_button.on_click(lambda _e: self.compare_with_packet())
        self.upload.param.watch(self._uploaded, "value")
        self._upload_dir = None
        e = self.exploration
        widgets = {"workload": pn.widgets.Select, "cca": pn.widgets.Select, "size_scale": pn.widgets.FloatInput}

        def group(*names):
            return pn.Param(e, parameters=list(names), widgets=widgets, show_name=False, sizing_mode="stretch_width")

        upload_label = pn.pane.Markdown("or upload a SimAI file:", margin=(0, 10))
        self.groups = {
            "model": group("model", "gpus", "size_scale"),
            "simai": pn.Column(group("simai_folder", "simai_file", "size_scale"), upload_label, self.upload),
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
            result = compare_modes(self.exploration.build())
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
            "kept between runs of this session, so a second run hits more."
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
