"""Views of runs: HoloViews components for notebooks and Panel apps, paper figures and their export.

``LiveRun`` advances a Simulation a chunk at a time and records what the views need; ``timeline``,
``cca_plots``, ``partition_graph`` and ``memo_panel`` draw it; ``export`` writes PNG/PDF/SVG in the
paper style (``style``); ``figures`` has the paper's figures. Scenarios come from ``wormhole_lab.scenarios``.
"""

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (both backends' options are set by the components)
import holoviews.plotting.mpl  # noqa: F401

from wormhole_lab.viz.components import cca_plots, memo_panel, partition_graph, skip_spans, timeline
from wormhole_lab.viz.live import LiveRun, SkipWindow, flow_states
from wormhole_lab.viz.style import PALETTE, WIDTHS, export

hv.Store.set_current_backend("bokeh")

__all__ = [
    "PALETTE",
    "WIDTHS",
    "LiveRun",
    "SkipWindow",
    "cca_plots",
    "export",
    "flow_states",
    "memo_panel",
    "partition_graph",
    "skip_spans",
    "timeline",
]
