"""The CCA teaching app: pick a congestion control, a scenario and a few knobs, press run, watch it converge.

``CCALesson`` (a ``param.Parameterized``) holds the choices and builds the Scenario; it works on its own in a
notebook (``CCALesson(cca="DCQCN", n=4).run()`` returns a finished ``LiveRun``). ``TeachApp`` puts it in a
Panel page; ``widgets/teach.py`` serves it (``panel serve widgets/teach.py``).
"""

import panel as pn
import param
from bokeh.models import DataRange1d

from wormhole_lab.scenarios.teaching import SCENARIOS, teaching_scenario
from wormhole_lab.topology.routing import Routes
from wormhole_lab.viz.analysis import theta_bound
from wormhole_lab.viz.app_base import LiveDriver, PlotSlot, app_page
from wormhole_lab.viz.live import LiveRun, skip_counts
from wormhole_lab.viz.live_views import LessonView

CCAS = {"DCQCN": "dcqcn", "HPCC": "hp", "TIMELY": "timely", "DCTCP": "dctcp"}
CCA_NAMES = {"dcqcn": "DCQCN", "hpcc": "HPCC", "timely": "TIMELY", "dctcp": "DCTCP"}  # by EngineConfig.cca


class CCALesson(param.Parameterized):
    """One teaching run. Zero in a knob means "the preset's value" (the reference's run.py)."""

    cca = param.Selector(label="CCA", objects=list(CCAS), default="DCTCP", doc="congestion-control algorithm")
    compare = param.Selector(
        label="Side by side with",
        objects=["none", *CCAS],
        default="none",
        doc="a second CCA run on the same scenario, shown beside the first with the same time axis",
    )
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
    flow_mb = param.Number(default=5.0, label="Flow size (MB)", bounds=(0.01, 20), doc="bytes each flow sends, MB")
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
    # the default lesson (DCTCP, 4 senders, 5 MB) fast-forwards three steady windows: a HPCC incast's shares keep
    # converging for milliseconds, so it is never skipped (docs/wormhole-design.md)
    mode = param.Selector(
        label="Mode",
        objects=["packet", "wormhole"],
        default="wormhole",
        doc="packet: ground truth; wormhole: steady windows are fast-forwarded (shaded)",
    )

    def changes(self, cca: str | None = None) -> dict:
        """EngineConfig overrides from the non-zero knobs, for ``cca`` (default: the lesson's)."""
        cca = cca or self.cca
        rate = self.link_gbps * 10**9
        out = {}
        if self.kmin_kb or self.kmax_kb:
            from wormhole_lab.engine.presets import preset

            base = preset(CCAS[cca], host_bw_gbps=self.link_gbps)
            kmin = dict(base.kmin_bytes)
            kmax = dict(base.kmax_bytes)
            if self.kmin_kb:
                kmin[rate] = self.kmin_kb * 1000
            if self.kmax_kb:
                kmax[rate] = self.kmax_kb * 1000
            out.update(kmin_bytes=kmin, kmax_bytes=kmax)
        if self.ai_mbps:
            out["dctcp_rate_ai_bps" if cca == "DCTCP" else "rate_ai_bps"] = self.ai_mbps * 10**6
        if self.ewma_gain:
            out["ewma_gain"] = self.ewma_gain
        if self.u_target:
            out["u_target"] = self.u_target
        if self.timely_beta:
            out["timely_beta"] = self.timely_beta
        return out

    def build(self, cca: str | None = None):
        """The Scenario under ``cca`` (default: the lesson's; raises InputError naming the knob for impossible
        combinations)."""
        cca = cca or self.cca
        return teaching_scenario(
            self.scenario,
            n=self.n,
            cca=CCAS[cca],
            link_gbps=self.link_gbps,
            size=int(self.flow_mb * 1e6),
            **self.changes(cca),
        )

    def live(self) -> LiveRun:
        return LiveRun(self.build(), mode=self.mode, history=False)

    def live_runs(self) -> list[LiveRun]:
        """The lesson's run, and the one of the CCA it is compared with (if any), on the same scenario."""
        ccas = [self.cca] + ([self.compare] if self.compare not in ("none", self.cca) else [])
        return [LiveRun(self.build(cca), mode=self.mode, history=False) for cca in ccas]

    def run(self) -> LiveRun:
        """Build and run to the end (for notebooks and tests)."""
        return self.live().run()

    def theta_bound(self, scenario=None) -> tuple[float, float]:
        """(DCTCP theta bound of paper Eq. 11 for these n flows, base RTT in s) on the scenario's bottleneck."""
        scenario = scenario or self.build()
        rtt_ns, _ = Routes(scenario.topology, payload_bytes=scenario.config.payload_bytes).max_rtt_bdp()
        n = len(scenario.flows)
        return theta_bound(n, self.link_gbps * 1e9, rtt_ns * 1e-9, scenario.config.payload_bytes), rtt_ns * 1e-9


def why_nothing_was_skipped(run: LiveRun, feed) -> str:
    """Why a finished Wormhole run fast-forwarded nothing, from what its controller and the detector saw."""
    a = run.flows.attrs
    if a["steady_entries"] == 0:
        seen = (
            f"the detector on this page called {feed.steady_samples / max(feed.samples, 1):.0%} of samples steady, "
            "but it tests each flow on its own, where Wormhole needs every flow of a partition steady at the same "
            "check, in a window that restarts whenever a flow joins or leaves"
            if feed.steady_samples
            else "no flow's rate stayed inside the band for a whole window"
        )
        return (
            f"**Nothing was fast-forwarded:** no partition passed the steady test (θ = {feed.theta:g}, "
            f"l = {feed.window}) before its first flow finished; {seen}. HPCC's and DCQCN's incast shares keep "
            "moving for milliseconds: try DCTCP, bigger flows or a larger θ."
        )
    return (
        f"**Nothing was fast-forwarded:** partitions turned steady {a['steady_entries']} times, but each time a flow "
        "was about to finish or start, so the skip would have been too short to pay off: try bigger flows."
    )


def lesson_summary(lesson: CCALesson, run: LiveRun, feed, skips=None) -> str:
    """Markdown: fairness now, convergence time, the steady detector, skipped windows (Wormhole mode) and, under
    DCTCP, the paper's θ bound. ``feed``: the view's ``SeriesFeed``, which holds these numbers as the run goes;
    ``skips``: its ``SkipFeed`` (default: count the run's skip windows)."""
    cca = run.scenario.config.cca
    lines = []
    if feed.fair_now is not None:
        t_us, fair, active = feed.fair_now
        lines.append(
            f"**Jain's fairness index** of the sending rates at {t_us:.0f} µs (last sample with {active} active "
            f"flows): {fair:.3f}"
        )
    else:
        lines.append("**Jain's fairness index:** no sample with two active flows yet")
    if feed.converged_ps is not None:
        conv = f"{feed.converged_ps / 1e6:.0f} µs"
    elif run.done:
        conv = "never: the active flows did not all pass the steady test at one sample after the last start"
    else:
        conv = "not reached yet"
    lines.append(f"**Convergence time** (all active flows steady after the last start): {conv}")
    fired = (
        f"first fired at {feed.detector_first_us:.0f} µs, steady in {feed.steady_samples / feed.samples:.0%} of samples"
        if feed.detector_first_us is not None
        else "has not fired"
    )
    lines.append(f"**Steady detector** (θ = {feed.theta:g}, l = {feed.window} samples every {feed.stride} µs): {fired}")
    if cca == "dctcp":
        bound, rtt = lesson.theta_bound(run.scenario)
        measured = (
            f"here the detector fired at {feed.detector_first_us:.0f} µs with θ = {lesson.theta:g}"
            if feed.detector_first_us is not None
            else f"here the detector has not fired with θ = {lesson.theta:g}"
        )
        lines.append(
            f"**DCTCP θ bound** (paper Eq. 11, N = {len(run.scenario.flows)}, C = {lesson.link_gbps} Gb/s, "
            f"RTT = {rtt * 1e6:.1f} µs): θ > {bound:.3f} for a window-based DCTCP, whose window saw-tooths. This "
            f"DCTCP is the reference's rate-based one, whose rate does not follow that sawtooth: {measured}."
        )
    if run.mode == "wormhole":
        fast, memo = skip_counts(run, skips)
        lines.append(f"**Skipped windows:** {fast} fast-forwards (shaded blue), {memo} memo hits (orange)")
        if run.done and not fast + memo:
            lines.append(why_nothing_was_skipped(run, feed))
    return "\n\n".join(f"- {line}" for line in lines)


class TeachApp:
    """The Panel page: controls in the sidebar, live plots and the summary in the main area; with a second CCA
    chosen, both run on the same scenario and show side by side on one time axis."""

    def __init__(self, lesson: CCALesson | None = None):
        self.lesson = lesson or CCALesson()
        self.run_button = pn.widgets.Button(label="Run", color="primary")
        self.status = pn.pane.Markdown(
            "Choose a congestion control and a scenario, then press **Run**.", css_classes=["run-status"]
        )
        self.alert = pn.pane.Alert("", alert_type="warning", visible=False)
        self.summary = pn.Row(sizing_mode="stretch_width", css_classes=["lesson-summary"])
        self.plots = PlotSlot(
            "**Plots** — appear when the run starts: sending rate per flow (with the steady band), window or bytes "
            "in flight, the busiest queues, the CCA's own state, Jain's fairness index, and the steady detector."
        )
        self.views: list[LessonView] = []
        self.driver = LiveDriver(self._update, self.alert, self.status)
        self.run_button.on_click(lambda _event: self.start())
        widgets = {
            "cca": pn.widgets.Select,
            "compare": pn.widgets.Select,
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
        return self.driver.start(self._runs)

    def _runs(self) -> list[LiveRun]:
        runs = self.lesson.live_runs()
        x_range = DataRange1d(start=0)  # one time axis for both sides
        pair = len(runs) > 1
        self.views = [
            LessonView(
                r.scenario, r.mode, self.lesson.theta, x_range, ncols=1 if pair else 2,
                title_prefix=f"{CCA_NAMES[r.scenario.config.cca]}: " if pair else "",
            )
            for r in runs
        ]  # fmt: skip
        self.plots.show(pn.Row(*(v.layout for v in self.views), sizing_mode="stretch_width"))
        self.summary.objects = [pn.pane.Markdown("", sizing_mode="stretch_width") for _ in runs]
        return runs

    def _update(self, final: bool) -> None:
        pair = len(self.views) > 1
        for run, view, text in zip(self.driver.runs, self.views, self.summary.objects, strict=True):
            view.update(run)
            head = f"**{CCA_NAMES[run.scenario.config.cca]}**\n\n" if pair else ""
            text.object = head + lesson_summary(self.lesson, run, view.feed, view.skips)

    def view(self) -> pn.template.BootstrapTemplate:
        intro = pn.pane.Markdown(
            "Pick a CCA and a scenario, press **Run**: rates, windows and queues stream in as the simulation "
            "runs. On the rate plot, the green band is the steady test's threshold around the first flow's "
            "window mean; in Wormhole mode, windows shaded blue were fast-forwarded and orange ones taken from the "
            "memo. Choose a CCA under *Side by side with* to run a second one on the same scenario."
        )
        return app_page(
            "wormhole_lab: congestion control, live",
            sidebar=[self.controls, self.run_button],
            main=[
                pn.Column(intro, self.status, self.alert, self.summary, self.plots.panel, sizing_mode="stretch_width")
            ],
        )
