"""The same views with ipywidgets controls, for notebooks that do not serve Panel apps.

``lesson_widget()`` shows the CCA lesson's knobs as ipywidgets, a Run button and an output area where the live
views (``live_views``, the apps' own) receive what each step of the run added; ``explorer_widget()`` does the same
for the Wormhole explorer. Both load the plotting extension themselves (``offline.notebook_extension``, nothing from
a CDN) and edit the underlying ``param.Parameterized`` object, so ``widget.lesson`` / ``widget.exploration`` stay
scriptable.
"""

import asyncio
import time

import ipywidgets as widgets
import panel as pn
import param
from bokeh.models import DataRange1d
from panel.io.state import state

from wormhole_lab.compile_notice import page_notice
from wormhole_lab.viz.app_base import REDRAW_S, SLICE_S, describe_error
from wormhole_lab.viz.live_views import ExplorerView, LessonView
from wormhole_lab.viz.offline import notebook_extension

__all__ = ["explorer_widget", "lesson_widget", "param_controls"]


def param_controls(obj: param.Parameterized) -> dict[str, widgets.Widget]:
    """One ipywidget per parameter (dropdowns for selectors, number and text boxes), kept in sync with ``obj``."""
    controls = {}
    for name, p in obj.param.objects("existing").items():
        if name == "name":
            continue
        label = p.label or name
        value = getattr(obj, name)
        if isinstance(p, param.Selector):
            w = widgets.Dropdown(options=p.objects, value=value, description=label)
        elif isinstance(p, param.Integer):
            w = widgets.IntText(value=value, description=label)
        elif isinstance(p, param.Number):
            w = widgets.FloatText(value=value, description=label)
        elif isinstance(p, param.String):
            w = widgets.Text(value=value, description=label)
        else:
            continue
        w.style.description_width = "initial"
        w.observe(lambda change, n=name: setattr(obj, n, change["new"]), names="value")
        controls[name] = w
    return controls


class _RunWidget(widgets.VBox):
    """Controls, a run button, a status line and the live views. ``start_views()`` builds the runs and their views:
    (runs, a Panel layout, ``update(final)``). ``finishing_text(run)``: the status line while a run is ``finishing``
    (a multi-job run's alone runs, after its last flow), else it says how far the run is."""

    def __init__(self, obj, start_views, button_text: str, finishing_text=None):
        # the plotting extension, loaded here, in the cell that shows the widget: loaded from the button's callback
        # its scripts would reach no cell in JupyterLab (idempotent: a notebook that loaded it already is left as is)
        notebook_extension()
        self._obj = obj
        self._start_views = start_views
        self._finishing_text = finishing_text
        self.controls = param_controls(obj)
        self.button = widgets.Button(
            description=button_text, button_style="primary", layout=widgets.Layout(width="auto")
        )
        self.message = widgets.HTML()
        self.output = widgets.Output()
        self.run = None
        self.runs = []
        self.button.on_click(lambda _b: self._clicked())
        self._task = None
        super().__init__([*self.controls.values(), self.button, self.message, self.output])

    def _clicked(self) -> None:
        """In a kernel, the run goes on as a task of its event loop, so that the kernel serves the page between two
        slices of it: run inside the click's own handler, the page's messages (the plots' comm opening) waited for
        the whole run, and the views stopped at their first redraw (measured in JupyterLab). Elsewhere: ``start()``."""
        loop = _kernel_loop()
        if loop is None:
            self.start()
            return
        if self._task is not None and not self._task.done():
            return  # a run is going on: one at a time
        self._task = loop.create_task(self._start_in_slices())

    async def _start_in_slices(self) -> None:
        for _ in self._slices(live=True):
            await asyncio.sleep(0.001)  # the kernel handles the page's messages here

    def start(self):
        """Build the run(s) and run them to the end, then show the views; errors become a message. Returns the
        (first) run. Called from a cell, which holds the kernel until it ends, the page cannot open the views' comm
        before then: the views are shown once, finished (shown first and again at the end, the page sometimes
        failed while replacing the first, measured in JupyterLab). The Run button shows them live."""
        for _ in self._slices(live=False):
            pass
        return self.run

    def _slices(self, live: bool):
        """The run, a slice of ``SLICE_S`` of wall time at a time (a generator); ``live``: show the views at once and
        redraw them as it goes, else once at the end."""
        self.message.value = ""
        t0 = time.perf_counter()
        try:
            runs, layout, update = self._start_views()
            self.runs, self.run = runs, runs[0]
            self.message.value = page_notice(runs)  # the first run compiles before its first chunk
            self.output.outputs = ()
            if live:
                # shown once, through the widget's state (capturing display() in the Output widget stalled nbclient);
                # later redraws go through the layout's own comm
                self.output.append_display_data(layout)
            last = 0.0
            while any(not r.done for r in runs):
                running = [r for r in runs if not r.done]
                for r in running:
                    r.step(budget_s=SLICE_S / len(running))
                if live and time.perf_counter() - last > REDRAW_S and _redraw(layout, update, False):
                    last = time.perf_counter()
                finishing = [r for r in runs if not r.done and getattr(r, "finishing", False)]
                if finishing and self._finishing_text is not None:  # said before the next step holds the kernel
                    self.message.value = f"{self._finishing_text(finishing[0])} ({time.perf_counter() - t0:.1f} s)"
                elif time.perf_counter() - t0 > 1:  # where the run is, whether the views are drawn yet or not
                    self.message.value = (
                        f"running: {self.run.now_ps / 1e6:.0f} µs simulated ({time.perf_counter() - t0:.1f} s)"
                    )
                yield
            drawn = False
            for _ in range(3000 if live else 0):  # a short run may end before the page opened the views' comm
                if drawn := _redraw(layout, update, True):
                    break
                yield
            if not drawn:
                update(True)  # the page has not opened the views' comm: they are shown with their data, once
                self.output.outputs = ()
                self.output.append_display_data(layout)
        except Exception as exc:  # noqa: BLE001  (shown in the notebook, the kernel carries on)
            self.message.value = f"<b>{describe_error(exc)}</b>"
            self.run = None
            return
        names = " and ".join(r.scenario.name for r in runs)
        self.message.value = (
            f"done: {names}, {max(r.now_ps for r in runs) / 1e6:.0f} µs simulated, in {time.perf_counter() - t0:.1f} s"
        )


def _kernel_loop():
    """The running event loop of the IPython kernel this runs in, or None (a script, a test; another library's loop
    that runs in the same thread, such as Playwright's, would never run the task)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _redraw(layout, update, final: bool) -> bool:
    """``update(final)`` with the page's Bokeh document held, then what it changed sent through the notebook's comm;
    False (and nothing done) while the page has not opened that comm. The document of a notebook output is not held,
    so a source's ``stream`` outside a hold reaches no page (``pn.io.push_notebook`` sends held events only); and a
    change pushed before the comm opens is sent later, after newer ones that refer to what it defines (the page then
    rejects them: "reference isn't known", measured in JupyterLab). The feeds keep what was not drawn for the next
    redraw."""
    shown = [state._views[ref] for ref in layout._models if ref in state._views]
    if not shown:  # not displayed (a script, a test without a kernel)
        update(final)
        return True
    _, _, doc, comm = shown[0]
    if comm is None or not getattr(comm, "_comm", None):
        return False
    with pn.io.hold(doc, policy="collect", comm=comm):
        update(final)
    return True


def lesson_widget(lesson=None) -> _RunWidget:
    """ipywidgets version of the CCA teaching app; ``.lesson`` is the CCALesson, ``.run`` the last LiveRun (``.runs``
    both, with a CCA to compare with)."""
    from wormhole_lab.viz.teach_app import CCA_NAMES, CCALesson, lesson_summary

    lesson = lesson or CCALesson()

    def start_views():
        runs = lesson.live_runs()
        pair = len(runs) > 1
        x_range = DataRange1d(start=0)
        views = [
            LessonView(
                r.scenario, r.mode, lesson.theta, x_range, ncols=1 if pair else 2,
                title_prefix=f"{CCA_NAMES[r.scenario.config.cca]}: " if pair else "",
            )
            for r in runs
        ]  # fmt: skip
        texts = [pn.pane.Markdown("", sizing_mode="stretch_width") for _ in runs]
        layout = pn.Column(pn.Row(*texts), pn.Row(*(v.layout for v in views)), sizing_mode="stretch_width")

        def update(final):
            for run, view, text in zip(runs, views, texts, strict=True):
                view.update(run)
                text.object = lesson_summary(lesson, run, view.feed, view.skips)

        return runs, layout, update

    w = _RunWidget(lesson, start_views, "Run")
    w.lesson = lesson
    return w


def explorer_widget(exploration=None) -> _RunWidget:
    """ipywidgets version of the Wormhole explorer."""
    from wormhole_lab.viz.explore_app import Exploration, alone_runs_status, explorer_summary

    exploration = exploration or Exploration()

    def start_views():
        run = exploration.live()
        view = ExplorerView(run.scenario, theta=exploration.theta)
        text = pn.pane.Markdown("", sizing_mode="stretch_width")
        layout = pn.Column(text, pn.Row(view.graph.pane, view.rate_pane), view.memo_grid, sizing_mode="stretch_width")

        def update(final):
            view.update(run)
            text.object = explorer_summary(run, skips=view.skips)

        return [run], layout, update

    w = _RunWidget(exploration, start_views, "Run (Wormhole mode)", finishing_text=alone_runs_status)
    w.exploration = exploration
    return w
