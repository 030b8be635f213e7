"""The same views with ipywidgets controls, for notebooks that do not serve Panel apps.

``lesson_widget()`` shows the CCA lesson's knobs as ipywidgets, a Run button and an output area where the
plots redraw as the run streams; ``explorer_widget()`` does the same for the Wormhole explorer. Both edit the
underlying ``param.Parameterized`` object, so ``widget.lesson`` / ``widget.exploration`` stay scriptable.
"""

import ipywidgets as widgets
import param

from wormhole_lab.viz.app_base import describe_error
from wormhole_lab.viz.components import cca_plots, memo_panel, partition_graph, timeline

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
    def __init__(self, obj, draw, button_text: str):
        self._obj = obj
        self._draw = draw
        self.controls = param_controls(obj)
        self.button = widgets.Button(description=button_text, button_style="primary")
        self.message = widgets.HTML()
        self.output = widgets.Output()
        self.run = None
        self.button.on_click(lambda _b: self.start())
        super().__init__([*self.controls.values(), self.button, self.message, self.output])

    def start(self, redraw_every: int = 10):
        """Build and stream the run, redrawing every ``redraw_every`` chunks; errors become a message."""
        self.message.value = ""
        try:
            run = self._obj.live()
            self.run = run
            chunks = 0
            while run.step(max_chunks=redraw_every):
                chunks += 1
                self._show(run)
            self._show(run)
        except Exception as exc:  # noqa: BLE001  (shown in the notebook, the kernel carries on)
            self.message.value = f"<b>{describe_error(exc)}</b>"
            return None
        self.message.value = f"done: {run.scenario.name}, {run.now_ps / 1e6:.0f} µs simulated"
        return run

    def _show(self, run):
        # set through the widget's state, not by capturing display() in the Output widget: nbclient (nbmake)
        # stalled ~300 s on a redraw loop of captured clear_output(wait=True) + display
        self.output.outputs = ()
        self.output.append_display_data(self._draw(run))


def lesson_widget(lesson=None) -> _RunWidget:
    """ipywidgets version of the CCA teaching app; ``.lesson`` is the CCALesson, ``.run`` the last LiveRun."""
    from wormhole_lab.viz.teach_app import CCALesson

    lesson = lesson or CCALesson()
    w = _RunWidget(lesson, lambda run: cca_plots(run, theta=lesson.theta), "Run")
    w.lesson = lesson
    return w


def explorer_widget(exploration=None) -> _RunWidget:
    """ipywidgets version of the Wormhole explorer."""
    from wormhole_lab.viz.explore_app import Exploration

    exploration = exploration or Exploration()

    def draw(run):
        return (partition_graph(run) + timeline(run, theta=exploration.theta) + memo_panel(run)).cols(2)

    w = _RunWidget(exploration, draw, "Run in Wormhole mode")
    w.exploration = exploration
    return w
