"""The CCA teaching app: pick a congestion control, a scenario and a few knobs, press run, watch it converge.

``CCALesson`` (a ``param.Parameterized``) holds the choices and builds the Scenario; it works on its own in a
notebook (``CCALesson(cca="DCQCN", n=4).run()`` returns a finished ``LiveRun``). ``TeachApp`` puts it in a
Panel page; ``widgets/teach.py`` serves it (``panel serve widgets/teach.py``).
"""

import holoviews as hv
import numpy as np
import panel as pn
import param

from wormhole_lab.topology.routing import Routes
from wormhole_lab.viz.analysis import convergence_time_ps, jain_index, steady_flags, steady_params, theta_bound
from wormhole_lab.viz.app_base import LiveDriver, PlotSlot, app_page
from wormhole_lab.viz.components import cca_plots
from wormhole_lab.viz.live import LiveRun
from wormhole_lab.viz.scenarios import SCENARIOS, teaching_scenario
from wormhole_lab.viz.style import COMPACT_LEGEND

CCAS = {"DCQCN": "dcqcn", "HPCC": "hp", "TIMELY": "timely", "DCTCP": "dctcp"}


class CCALesson(param.Parameterized):
    """One teaching run. Zero in a knob means "the preset's value" (the reference's run.py)."""

    cca = param.Selector(label="CCA", objects=list(CCAS), default="HPCC", doc="congestion-control algorithm")
    scenario = param.Selector(label="Scenario", objects=list(SCENARIOS), default="N-to-1 incast", doc="traffic pattern")
    n = param.Integer(
        default=4, label="N (senders)", bounds=(1, 16), doc="number of senders (long flows in the parking lot)"
    )
    link_gbps = param.Selector(
        label="Link speed (Gb/s)",
        objects=[10, 25, 40, 50, 100, 200, 400],
        default=100,
        doc="speed of every link, Gb/s (HPCC's INT encodes 25/50/100/200/400 only)",
    )
    flow_mb = param.Number(default=1.0, label="Flow size (MB)", bounds=(0.01, 20), doc="bytes each flow sends, MB")
    kmin_kb = param.Integer(
        default=0,
        label="ECN Kmin (KB, 0 = preset)",
        bounds=(0, 100_000),
        doc="ECN Kmin at the link speed, KB (0: preset)",
    )
    kmax_kb = param.Integer(
        default=0,
        label="ECN Kmax (KB, 0 = preset)",
        bounds=(0, 100_000),
        doc="ECN Kmax at the link speed, KB (0: preset)",
    )
    ai_mbps = param.Integer(
        default=0,
        label="Additive increase (Mb/s, 0 = preset)",
        bounds=(0, 100_000),
        doc="additive increase, Mb/s (DCQCN/HPCC/TIMELY rate AI, DCTCP's dctcp_rate_ai; 0: preset)",
    )
    ewma_gain = param.Number(
        default=0.0,
        label="α gain g (DCQCN/DCTCP, 0 = preset)",
        bounds=(0, 1),
        doc="DCQCN/DCTCP alpha gain g (0: preset)",
    )
    u_target = param.Number(
        default=0.0, label="HPCC η (0 = preset)", bounds=(0, 1), doc="HPCC target utilisation eta (0: preset, 0.95)"
    )
    timely_beta = param.Number(
        default=0.0,
        label="TIMELY β (0 = preset)",
        bounds=(0, 1),
        doc="TIMELY multiplicative decrease beta (0: preset, 0.8)",
    )
    theta = param.Number(
        default=0.05, label="Steady test θ", bounds=(0.005, 0.5), step=0.005, doc="steady test threshold theta"
    )
    mode = param.Selector(
        label="Mode",
        objects=["packet", "wormhole"],
        default="packet",
        doc="packet: ground truth; wormhole: steady windows are fast-forwarded (shaded)",
    )

    def changes(self) -> dict:
        """EngineConfig overrides from the non-zero knobs."""
        rate = self.link_gbps * 10**9
        out = {}
        if self.kmin_kb or self.kmax_kb:
            from wormhole_lab.engine.presets import preset

            base = preset(CCAS[self.cca], host_bw_gbps=self.link_gbps)
            kmin = dict(base.kmin_bytes)
            kmax = dict(base.kmax_bytes)
            if self.kmin_kb:
                kmin[rate] = self.kmin_kb * 1000
            if self.kmax_kb:
                kmax[rate] = self.kmax_kb * 1000
            out.update(kmin_bytes=kmin, kmax_bytes=kmax)
        if self.ai_mbps:
            out["dctcp_rate_ai_bps" if self.cca == "DCTCP" else "rate_ai_bps"] = self.ai_mbps * 10**6
        if self.ewma_gain:
            out["ewma_gain"] = self.ewma_gain
        if self.u_target:
            out["u_target"] = self.u_target
        if self.timely_beta:
            out["timely_beta"] = self.timely_beta
        return out

    def build(self):
        """The Scenario (raises InputError naming the knob for impossible combinations)."""
        return teaching_scenario(
            self.scenario,
            n=self.n,
            cca=CCAS[self.cca],
            link_gbps=self.link_gbps,
            size=int(self.flow_mb * 1e6),
            **self.changes(),
        )

    def live(self) -> LiveRun:
        return LiveRun(self.build(), mode=self.mode)

    def run(self) -> LiveRun:
        """Build and run to the end (for notebooks and tests)."""
        return self.live().run()

    def theta_bound(self, scenario=None) -> tuple[float, float]:
        """(DCTCP theta bound of paper Eq. 11 for these n flows, base RTT in s) on the scenario's bottleneck."""
        scenario = scenario or self.build()
        rtt_ns, _ = Routes(scenario.topology, payload_bytes=scenario.config.payload_bytes).max_rtt_bdp()
        n = len(scenario.flows)
        return theta_bound(n, self.link_gbps * 1e9, rtt_ns * 1e-9, scenario.config.payload_bytes), rtt_ns * 1e-9


def lesson_summary(lesson: CCALesson, run: LiveRun) -> str:
    """Markdown: fairness now, convergence time, the steady detector, and the DCTCP theta bound."""
    series = run.series
    lines = []
    if series is not None:
        rates = series["flow_rate"].values
        busy = np.flatnonzero(np.isfinite(rates).sum(axis=1) >= min(2, rates.shape[1]))
        if len(busy):
            t = busy[-1]
            lines.append(
                f"**Jain's fairness index** of the sending rates at {series.time.values[t] / 1e6:.0f} µs "
                f"(last sample with {np.isfinite(rates[t]).sum()} active flows): {jain_index(rates[t]):.3f}"
            )
        else:
            lines.append("**Jain's fairness index:** no sample with two active flows yet")
        stride, window, theta = steady_params(run.scenario.config, lesson.theta)
        flags = steady_flags(series["flow_rate"].values, stride, window, theta)
        conv = convergence_time_ps(series, flags, run.scenario.flows.start_ps)
        lines.append(
            "**Convergence time** (all active flows steady after the last start): "
            + (f"{conv / 1e6:.0f} µs" if conv is not None else "not reached yet")
        )
        fired = np.flatnonzero(flags.any(axis=1))
        lines.append(
            f"**Steady detector** (θ = {theta:g}, l = {window} samples every {stride} µs): "
            + (
                f"first fired at {series.time.values[fired[0]] / 1e6:.0f} µs, "
                f"steady in {flags.any(axis=1).mean():.0%} of samples"
                if len(fired)
                else "has not fired"
            )
        )
    bound, rtt = lesson.theta_bound(run.scenario)
    verdict = (
        "above it: DCTCP's sawtooth fits in the band"
        if lesson.theta > bound
        else "below it: DCTCP's sawtooth is wider than the band, so DCTCP flows will not test steady"
    )
    lines.append(
        f"**DCTCP θ bound** (paper Eq. 11, N = {len(run.scenario.flows)}, C = {lesson.link_gbps} Gb/s, "
        f"RTT = {rtt * 1e6:.1f} µs): θ > {bound:.3f}; your θ = {lesson.theta:g} is {verdict}."
    )
    if run.mode == "wormhole":
        skips = run.skip_windows()
        lines.append(
            f"**Skipped windows:** {sum(not w.memo for w in skips)} fast-forwards (shaded blue), "
            f"{sum(w.memo for w in skips)} memo hits (orange)"
        )
    return "\n\n".join(f"- {line}" for line in lines)


class TeachApp:
    """The Panel page: controls in the sidebar, live plots and the summary in the main area."""

    def __init__(self, lesson: CCALesson | None = None):
        self.lesson = lesson or CCALesson()
        self.run_button = pn.widgets.Button(label="Run", color="primary")
        self.status = pn.pane.Markdown(
            "Choose a congestion control and a scenario, then press **Run**.", css_classes=["run-status"]
        )
        self.alert = pn.pane.Alert("", alert_type="warning", visible=False)
        self.summary = pn.pane.Markdown("", css_classes=["lesson-summary"])
        self.plots = PlotSlot(
            "**Plots** — appear when the run starts: sending rate per flow (with the steady band), window or bytes "
            "in flight, the busiest queues, the CCA's own state, and Jain's fairness index with the steady detector."
        )
        self.driver = LiveDriver(self._update, self.alert, self.status)
        self.run_button.on_click(lambda _event: self.start())
        widgets = {
            "cca": pn.widgets.Select,
            "scenario": pn.widgets.Select,
            "mode": pn.widgets.RadioButtonGroup,
            "link_gbps": pn.widgets.Select,
            "kmin_kb": pn.widgets.IntInput,
            "kmax_kb": pn.widgets.IntInput,
            "ai_mbps": pn.widgets.IntInput,
            "ewma_gain": pn.widgets.FloatInput,
            "u_target": pn.widgets.FloatInput,
            "timely_beta": pn.widgets.FloatInput,
        }
        self.controls = pn.Param(self.lesson, widgets=widgets, show_name=False, sizing_mode="stretch_width")

    def start(self) -> LiveRun | None:
        return self.driver.start(self.lesson.live)

    def _update(self, run: LiveRun, final: bool) -> None:
        layout = cca_plots(run, theta=self.lesson.theta).opts(
            hv.opts.Curve(responsive=True, height=260, tools=["hover"], backend="bokeh"),
            hv.opts.Overlay(
                responsive=True, height=260, legend_position="right", legend_opts=COMPACT_LEGEND, backend="bokeh"
            ),
            hv.opts.NdOverlay(
                responsive=True, height=260, legend_position="right", legend_opts=COMPACT_LEGEND, backend="bokeh"
            ),
        )
        self.plots.show(layout)
        self.summary.object = lesson_summary(self.lesson, run)

    def view(self) -> pn.template.BootstrapTemplate:
        intro = pn.pane.Markdown(
            "Pick a CCA and a scenario, press **Run**: rates, windows and queues stream in as the simulation "
            "runs. The green band is the steady test's threshold around flow 0's window mean; shaded windows "
            "(Wormhole mode) were fast-forwarded."
        )
        return app_page(
            "wormhole_lab: congestion control, live",
            sidebar=[self.controls, self.run_button],
            main=[
                pn.Column(intro, self.status, self.alert, self.summary, self.plots.panel, sizing_mode="stretch_width")
            ],
        )
