"""The Wormhole explorer: run a workload in Wormhole mode and watch partitions, skipped windows and the memo DB.

``Exploration`` (``param.Parameterized``) picks the workload and builds the Scenario (usable in a notebook:
``Exploration(workload="SimAI file", simai_path="...").run()``); ``ExploreApp`` is the Panel page served by
``widgets/explore.py``. "Compare with packet mode" runs the same scenario packet by packet and shows the
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
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.viz.app_base import LiveDriver
from wormhole_lab.viz.components import memo_panel, partition_graph, timeline
from wormhole_lab.viz.figures import compare_modes
from wormhole_lab.viz.live import LiveRun
from wormhole_lab.viz.scenarios import LIVE_TELEMETRY, incast, parking_lot, repeated_incast, staggered
from wormhole_lab.viz.style import LINE_COLORS
from wormhole_lab.wormhole.controller import WormholeConfig
from wormhole_lab.wormhole.steady import SteadyConfig

WORKLOADS = (
    "repeated incast (memo hits)",
    "N-to-1 incast",
    "staggered flows (dumbbell)",
    "parking lot (two bottlenecks)",
    "SimAI file",
)
PRESETS = ("hp", "dctcp", "timely", "dcqcn")


def simai_scenario(path, cca: str = "hp", size_scale: float = 0.001) -> Scenario:
    """A SimAI/AICB workload file on a rail-optimised cluster of its GPUs, flow sizes scaled by ``size_scale``
    (at least 1000 bytes each) so that it runs interactively. Parse errors are InputErrors naming the line."""
    from wormhole_lab.engine.presets import preset
    from wormhole_lab.workload.simai import read_simai, simai_flows

    if not 0 < size_scale <= 1:
        raise InputError("size_scale", f"must be in (0, 1], got {size_scale}", "e.g. 0.001")
    w = read_simai(path)
    gpus = int(getattr(w, "all_gpus", 0) or 8)
    topo = rail_optimized(max(1, -(-gpus // 8)), min(8, gpus))
    flows = simai_flows(w, topo)
    if len(flows) == 0:
        raise InputError(
            str(path),
            "this workload makes no network flows (all of its traffic is tensor-parallel, "
            "which SimAI keeps inside a server)",
            "pick a workload with DP, PP or EP groups",
        )
    flows = replace(flows, size=np.maximum(1000, (flows.size * size_scale).astype(np.int64)))
    return Scenario(topo, flows, preset(cca), name=f"{Path(path).name} x{size_scale:g}", telemetry=LIVE_TELEMETRY)


class Exploration(param.Parameterized):
    """One Wormhole-mode run of a workload, with its memo DB."""

    workload = param.Selector(label="Workload", objects=list(WORKLOADS), default=WORKLOADS[0])
    cca = param.Selector(label="CCA preset", objects=list(PRESETS), default="hp", doc="engine preset")
    n = param.Integer(default=3, label="N (senders)", bounds=(1, 16), doc="senders (teaching workloads)")
    simai_path = param.String(
        default="", label="SimAI file path", doc="path of a SimAI/AICB workload file on the server"
    )
    size_scale = param.Number(
        default=0.001, label="SimAI size scale", bounds=(1e-6, 1), doc="SimAI flow sizes are multiplied by this"
    )
    theta = param.Number(
        default=0.05, label="Steady test θ", bounds=(0.005, 0.5), step=0.005, doc="steady test threshold theta"
    )
    memo_path = param.String(
        default="",
        label="Memo DB path (empty: per session)",
        doc="memo DB (SQLite); empty: a fresh file per session, kept between runs",
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._folder = None

    def memo_file(self) -> str:
        if self.memo_path:
            return self.memo_path
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="wormhole_memo_")
        return str(Path(self._folder) / "memo.sqlite")

    def build(self) -> Scenario:
        if self.workload == "SimAI file":
            if not self.simai_path:
                raise InputError("simai_path", "no SimAI workload file chosen", "upload one or type its path")
            scenario = simai_scenario(self.simai_path, self.cca, self.size_scale)
        elif self.workload == WORKLOADS[0]:
            scenario = repeated_incast(n=self.n, cca=self.cca)
        else:
            make = {WORKLOADS[1]: incast, WORKLOADS[2]: staggered, WORKLOADS[3]: parking_lot}[self.workload]
            scenario = make(n=self.n, cca=self.cca, size=2_000_000)
        steady = SteadyConfig(theta=self.theta)
        return replace(scenario, wormhole=WormholeConfig(steady=steady, memo=self.memo_file()))

    def live(self) -> LiveRun:
        return LiveRun(self.build(), mode="wormhole")

    def run(self) -> LiveRun:
        return self.live().run()


def explorer_summary(run: LiveRun) -> str:
    m = run.memo_table()
    executed = m["events_executed"][-1] if len(m["events_executed"]) else 0
    skipped = m["events_skipped"][-1] if len(m["events_skipped"]) else 0
    lookups, hits = (m["lookups"][-1], m["hits"][-1]) if len(m["lookups"]) else (0, 0)
    speedup = (executed + skipped) / executed if executed else float("nan")
    skips = run.skip_windows()
    return (
        f"- **Running speedup estimate** (events executed + skipped) / executed: {speedup:.2f}×\n"
        f"- **Memo:** {lookups} lookups, {hits} hits, hit rate {hits / lookups if lookups else 0:.0%}\n"
        f"- **Skipped windows:** {sum(not w.memo for w in skips)} fast-forwards, {sum(w.memo for w in skips)} "
        f"memo hits; partitions now: {len(run.partitions())}"
    )


def fct_error_plot(result: dict) -> hv.Bars:
    packet, fast = result["packet"], result["wormhole"]
    err = (fast["fct"].values / packet["fct"].values - 1) * 100
    bars = hv.Bars(
        (np.arange(len(err)).astype(str), err),
        hv.Dimension("flow", label="flow"),
        hv.Dimension("error", label="FCT error (Wormhole vs packet)", unit="%"),
    )
    return bars.opts(
        color=LINE_COLORS[0],
        title=f"per-flow FCT error: mean {np.abs(err).mean():.2f} %, max {np.abs(err).max():.2f} %",
        responsive=True,
        height=250,
    )


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
        opts = dict(responsive=True, height=320)
        self.graph = pn.pane.HoloViews(hv.Curve([]).opts(title="partition graph", **opts), sizing_mode="stretch_width")
        self.timeline = pn.pane.HoloViews(hv.Curve([]).opts(title="timeline", **opts), sizing_mode="stretch_width")
        self.memo = pn.pane.HoloViews(hv.Curve([]).opts(title="memo", **opts), sizing_mode="stretch_width")
        self.compare = pn.pane.HoloViews(hv.Curve([]).opts(title="FCT error", **opts), sizing_mode="stretch_width")
        self.driver = LiveDriver(self._update, self.alert, self.status)
        self.run_button.on_click(lambda _e: self.start())
        self.compare_button.on_click(lambda _e: self.compare_with_packet())
        self.upload.param.watch(self._uploaded, "value")
        widgets = {"workload": pn.widgets.Select, "cca": pn.widgets.Select, "size_scale": pn.widgets.FloatInput}
        self.controls = pn.Param(self.exploration, widgets=widgets, show_name=False, sizing_mode="stretch_width")
        self._upload_dir = None

    def start(self) -> LiveRun | None:
        return self.driver.start(self.exploration.live)

    def _uploaded(self, event) -> None:
        if not event.new:
            return
        if self._upload_dir is None:
            self._upload_dir = tempfile.mkdtemp(prefix="wormhole_upload_")
        path = Path(self._upload_dir) / Path(self.upload.filename or "workload.txt").name
        path.write_bytes(event.new)
        self.exploration.param.update(simai_path=str(path), workload="SimAI file")

    def compare_with_packet(self):
        self.alert.visible = False
        try:
            result = compare_modes(self.exploration.build())
        except Exception as exc:  # noqa: BLE001
            self.driver.show_error(exc)
            return None
        self.compare.object = fct_error_plot(result)
        self.status.object = (
            f"Compared with packet mode: events speedup {result['speedup_events']:.2f}×, "
            f"FCT error mean {result['fct_error_mean']:.2%}, p99 {result['fct_error_p99']:.2%}."
        )
        return result

    def _update(self, run: LiveRun, final: bool) -> None:
        bokeh = dict(responsive=True, height=320, backend="bokeh")
        self.graph.object = partition_graph(run).opts(**bokeh)
        self.timeline.object = timeline(
            run, "flow_rate", theta=self.exploration.theta, title="sending rate; blue: fast-forwarded, orange: memo hit"
        ).opts(hv.opts.Overlay(legend_position="right", **bokeh))
        self.memo.object = memo_panel(run).opts(
            hv.opts.Curve(responsive=True, height=220, backend="bokeh"),
            hv.opts.Overlay(responsive=True, height=220, backend="bokeh"),
        )
        self.summary.object = explorer_summary(run)

    def view(self) -> pn.template.FastListTemplate:
        intro = pn.pane.Markdown(
            "Runs the workload in Wormhole mode and shows, as it runs: the partitions (flows grey when simulated "
            "packet by packet, blue when fast-forwarded, orange when taken from the memo DB; white squares are "
            "ports), the sending rates with skipped windows shaded, and the memo DB's hit rate. The memo DB is "
            "kept between runs of this session, so a second run hits more."
        )
        return pn.template.FastListTemplate(
            title="wormhole_lab: Wormhole explorer",
            sidebar=[self.controls, self.upload, self.run_button, self.compare_button],
            main=[
                pn.Column(
                    intro,
                    self.status,
                    self.alert,
                    self.summary,
                    pn.Row(self.graph, self.timeline, sizing_mode="stretch_width"),
                    self.memo,
                    self.compare,
                    sizing_mode="stretch_width",
                )
            ],
        )
