"""What both Panel apps share: running a ``LiveRun`` from a periodic callback, showing errors in the page, plot
slots that say what will appear before the first run, and a page that loads nothing from the internet.

The run advances in small slices of wall time on the server's event loop (``pn.state.add_periodic_callback``, every
``PERIOD_MS``: a slice that schedules the next itself got lost now and then, its callback held by Panel's hold of the
document),
so the page stays responsive and the plots redraw as chunks arrive. A bad input or a failed run becomes an
``Alert`` in the page; the server keeps serving.
"""

import time
import traceback

import panel as pn

from wormhole_lab.compile_notice import page_notice
from wormhole_lab.errors import InputError
from wormhole_lab.viz.live import LiveRun

SLICE_S = 0.15  # wall time the engine may use per callback
REDRAW_S = 0.4  # shortest wall time between two redraws during a run
PERIOD_MS = 10  # the server's loop calls for the next slice this often: idle at most this long between two slices


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
        # the box is shown, not the pane: a HoloViews pane's own visible fails in a served Bootstrap page
        # (Panel 1.9 passes a stylesheet object where it wants a string)
        self.box = pn.Column(visible=False, sizing_mode="stretch_width")
        self.panel = pn.Column(*([self.note] if placeholder else []), self.box, sizing_mode="stretch_width")

    @property
    def content(self):
        return self.box.objects[0] if self.box.objects else None

    def show(self, obj) -> None:
        """Put ``obj`` in the slot: a Panel object (a live view, which then updates itself in place) or a HoloViews
        object."""
        if not isinstance(obj, pn.viewable.Viewable):
            obj = pn.pane.HoloViews(obj, sizing_mode="stretch_width")
        if self.content is not obj:
            self.box.objects = [obj]
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
    """Runs one ``LiveRun``, or several side by side, for an app session; calls ``on_update(final)`` to redraw, at
    most every ``REDRAW_S`` of wall time and once at the end. The status line shows the time the person waited."""

    def __init__(self, on_update, alert: pn.pane.Alert, status: pn.pane.Markdown):
        self.on_update = on_update
        self.alert = alert
        self.status = status
        self.runs: list[LiveRun] = []
        self.runs_started = 0
        self.started_at = 0.0
        self._callback = None
        self._last_draw = 0.0

    @property
    def run(self) -> LiveRun | None:
        return self.runs[0] if self.runs else None

    def start(self, make_runs) -> LiveRun | None:
        """``make_runs()`` builds the LiveRun, or a list of them (may raise InputError); then they stream until done.
        Returns the first run."""
        self.stop()
        self.alert.visible = False
        self.started_at = time.perf_counter()
        try:
            runs = make_runs()
        except Exception as exc:  # noqa: BLE001  (any failure is shown, the server must survive)
            self.show_error(exc)
            return None
        self.runs = list(runs) if isinstance(runs, list | tuple) else [runs]
        self.runs_started += 1
        self._last_draw = 0.0
        self.status.object = page_notice(self.runs) or (
            f"Run {self.runs_started}: starting {self._names()} ({self.run.mode} mode)…"
        )
        if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
            self._callback = pn.state.add_periodic_callback(self._tick, period=PERIOD_MS)
        else:  # notebook without a live server, or a plain script: run to the end now
            while self._tick():
                pass
        return self.run

    def _names(self) -> str:
        return " and ".join(r.scenario.name for r in self.runs)

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
        running = [r for r in self.runs if not r.done]
        try:
            for run in running:
                run.step(budget_s=SLICE_S / len(running))
        except Exception as exc:  # noqa: BLE001
            self.stop()
            self.show_error(exc)
            return False
        more = any(not r.done for r in self.runs)
        now = time.perf_counter()
        if not more or now - self._last_draw > REDRAW_S:
            try:
                self.on_update(not more)
            except Exception as exc:  # noqa: BLE001
                self.stop()
                self.show_error(exc)
                return False
            self._last_draw = time.perf_counter()
        waited = time.perf_counter() - self.started_at
        t_us = max(r.now_ps for r in self.runs) / 1e6
        if more:
            self.status.object = f"Run {self.runs_started}: {self._names()}, simulated {t_us:.0f} µs… ({waited:.1f} s)"
        else:
            self.stop()
            simulated = sum(r.wall_seconds for r in self.runs)
            self.status.object = (
                f"Run {self.runs_started} done: {self._names()}, {self.run.mode} mode, {t_us:.0f} µs simulated. "
                f"You waited {waited:.1f} s, {simulated:.1f} s of it in the simulation."
            )
        return more
