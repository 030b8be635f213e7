"""What both Panel apps share: running a ``LiveRun`` from a periodic callback, showing errors in the page, plot
slots that say what will appear before the first run, and a page that loads nothing from the internet.

The run advances in small slices of wall time on the server's event loop (``pn.state.add_periodic_callback``),
so the page stays responsive and the plots redraw as chunks arrive. A bad input or a failed run becomes an
``Alert`` in the page; the server keeps serving.
"""

import time
import traceback

import panel as pn

from wormhole_lab.errors import InputError
from wormhole_lab.viz.live import LiveRun

SLICE_S = 0.15  # wall time the engine may use per callback
REDRAW_S = 0.4  # shortest wall time between two redraws during a run


def app_page(title: str, sidebar: list, main: list) -> pn.template.BootstrapTemplate:
    """The page both apps use: controls in the sidebar. Bootstrap, because Panel's Fast templates load a web font
    from fonts.googleapis.com, which fails offline (a classroom, an air-gapped cluster); this page loads
    everything from the app's own server."""
    return pn.template.BootstrapTemplate(title=title, sidebar=sidebar, main=main)


class PlotSlot:
    """A place for a plot: until the first draw it says what will appear there (instead of empty 0-1 axes);
    with no ``placeholder`` it stays hidden until then."""

    def __init__(self, placeholder: str | None = None):
        self.note = pn.pane.Markdown(placeholder or "", css_classes=["plot-placeholder"], visible=bool(placeholder))
        self.pane = pn.pane.HoloViews(None, sizing_mode="stretch_width")
        # the box is shown, not the pane: a HoloViews pane's own visible fails in a served Bootstrap page
        # (Panel 1.9 passes a stylesheet object where it wants a string)
        self.box = pn.Column(self.pane, visible=False, sizing_mode="stretch_width")
        self.panel = pn.Column(*([self.note] if placeholder else []), self.box, sizing_mode="stretch_width")

    def show(self, obj) -> None:
        self.pane.object = obj
        self.box.visible = True
        self.note.visible = False


def describe_error(exc: BaseException) -> str:
    """A message for a person: InputError already names the field and the fix; others get their type."""
    if isinstance(exc, InputError):
        return f"**Cannot run this:** {exc.problem}  \n*where:* `{exc.where}`" + (
            f"  \n*fix:* {exc.fix}" if exc.fix else ""
        )
    return f"**The run failed:** {type(exc).__name__}: {exc}"


class LiveDriver:
    """Runs ``LiveRun``s for one app session; calls ``on_update(run, final)`` to redraw."""

    def __init__(self, on_update, alert: pn.pane.Alert, status: pn.pane.Markdown):
        self.on_update = on_update
        self.alert = alert
        self.status = status
        self.run: LiveRun | None = None
        self.runs_started = 0
        self._callback = None
        self._last_draw = 0.0

    def start(self, make_run) -> LiveRun | None:
        """``make_run()`` builds the LiveRun (may raise InputError); then it streams until done."""
        self.stop()
        self.alert.visible = False
        try:
            run = make_run()
        except Exception as exc:  # noqa: BLE001  (any failure is shown, the server must survive)
            self.show_error(exc)
            return None
        self.run = run
        self.runs_started += 1
        self.status.object = f"Run {self.runs_started}: starting {run.scenario.name} ({run.mode} mode)…"
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            self._callback = pn.state.add_periodic_callback(self._tick, period=50)
        else:  # notebook without a live server, or a plain script: run to the end now
            while self._tick():
                pass
        return run

    def stop(self) -> None:
        if self._callback is not None:
            self._callback.stop()
            self._callback = None

    def show_error(self, exc: BaseException) -> None:
        self.alert.object = describe_error(exc)
        self.alert.alert_type = "warning" if isinstance(exc, InputError) else "danger"
        self.alert.visible = True
        if not isinstance(exc, InputError):
            traceback.print_exc()
        self.status.object = "Not running."

    def _tick(self) -> bool:
        run = self.run
        if run is None:
            return False
        try:
            more = run.step(budget_s=SLICE_S)
        except Exception as exc:  # noqa: BLE001
            self.stop()
            self.show_error(exc)
            return False
        now = time.perf_counter()
        if not more or now - self._last_draw > REDRAW_S:
            self._last_draw = now
            try:
                self.on_update(run, not more)
            except Exception as exc:  # noqa: BLE001
                self.stop()
                self.show_error(exc)
                return False
        t_us = run.now_ps / 1e6
        if more:
            self.status.object = f"Run {self.runs_started}: {run.scenario.name}, simulated {t_us:.0f} µs…"
        else:
            self.stop()
            self.status.object = (
                f"Run {self.runs_started} done: {run.scenario.name}, {run.mode} mode, {t_us:.0f} µs simulated, "
                f"{len(run.series.time) if run.series is not None else 0} samples, {run.wall_seconds:.2f} s wall."
            )
        return more
