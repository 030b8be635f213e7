"""The paper style and ``export``: HoloViews objects to PNG/PDF/SVG through the matplotlib backend.

No browser is involved. The style:

- **Widths**: ``"single"`` = 3.33 in (one column of a two-column USENIX/ACM/IEEE page), ``"double"`` =
  7.0 in (full text width); any number is inches. Height defaults to 0.62 x width (single) or 0.36 x
  width (double), or pass ``height`` in inches.
- **Fonts**: 8 pt labels and titles, 7 pt ticks and legends, DejaVu Sans (shipped with matplotlib, so
  output is identical everywhere); TrueType fonts embedded in PDF (``pdf.fonttype 42``), text kept as text
  in SVG.
- **Colours**: the Okabe-Ito palette (colour-blind safe, also readable in grey scale), ``PALETTE``.
  Fast-forwarded windows are shaded ``SKIP_COLOR``, memo-hit transients ``MEMO_COLOR``; audited stretches are
  outlined ``AUDIT_COLOR``.
- **Resolution**: PNG at 300 dpi by default, so a single-column PNG is 999 x 619 pixels.
"""

import warnings
from pathlib import Path

import holoviews as hv
import matplotlib as mpl
from matplotlib.figure import Figure

from wormhole_lab.errors import InputError
from wormhole_lab.viz.live import FASTFORWARD, MEMO, PACKET

__all__ = [
    "EDGE_COLORS",
    "JOB_COLORS",
    "PALETTE",
    "PAPER_RC",
    "SHARED_COLOR",
    "STATE_COLORS",
    "WIDTHS",
    "export",
    "figure_size",
    "job_colors",
]

#: Okabe & Ito (2008), "Color Universal Design": black, orange, sky blue, bluish green, yellow, blue,
#: vermillion, reddish purple
PALETTE = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
SKIP_COLOR = "#56B4E9"  # sky blue: fast-forwarded (steady) windows
MEMO_COLOR = "#E69F00"  # orange: transients taken from the memo DB
AUDIT_COLOR = "#D55E00"  # vermillion: outlines of the stretches the self-audit re-simulated
PACKET_COLOR = "#999999"  # grey: packet-level
BAND_COLOR = "#009E73"  # bluish green: the steady test's threshold band
LINE_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
#: partition graph edges, one colour per partition: greys and the palette colours that mean nothing else here
#: (sky blue and blue read as fast-forwarded, orange as memo hit, vermillion as audited)
EDGE_COLORS = ["#555555", "#009E73", "#CC79A7", "#AAAAAA", "#000000"]
#: partition graph nodes: a flow by what it is doing (live.PACKET, FASTFORWARD, MEMO), a port white
STATE_COLORS = {PACKET: PACKET_COLOR, FASTFORWARD: SKIP_COLOR, MEMO: MEMO_COLOR, "port": "#FFFFFF"}
#: jobs (workload.jobs), in job order: colours the state colours do not use (grey, sky blue, orange), so a flow can
#: be filled in its job's colour and ringed in what it is doing; cycled beyond five jobs
JOB_COLORS = ["#0072B2", "#CC79A7", "#009E73", "#F0E442", "#000000"]
#: a partition holding flows of several jobs (where the jobs interfere): vermillion, dashed outline
SHARED_COLOR = "#D55E00"
#: Bokeh legend options for legends beside a plot: a dozen flows fit next to a 260 px high plot
COMPACT_LEGEND = {"label_text_font_size": "8pt", "glyph_height": 12, "label_height": 12, "spacing": 0, "padding": 4}

WIDTHS = {"single": 3.33, "double": 7.0}
ASPECT = {"single": 0.62, "double": 0.36}
FORMATS = ("png", "pdf", "svg")

PAPER_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.0,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "axes.prop_cycle": mpl.cycler(color=LINE_COLORS),
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    "savefig.dpi": 300,
}


def job_colors(names) -> dict[str, str]:
    """Each job's colour (``JOB_COLORS`` in job order)."""
    return {name: JOB_COLORS[j % len(JOB_COLORS)] for j, name in enumerate(names)}


def figure_size(width="single", height: float | None = None) -> tuple[float, float]:
    """(width, height) in inches for a named width (``"single"``, ``"double"``) or a number of inches."""
    if isinstance(width, str):
        if width not in WIDTHS:
            raise InputError("export(width)", f"unknown width {width!r}", "use 'single', 'double' or inches")
        w, aspect = WIDTHS[width], ASPECT[width]
    else:
        w, aspect = float(width), ASPECT["single"]
        if not 0.5 <= w <= 20:
            raise InputError("export(width)", f"{w} in is not a figure width", "use 0.5 to 20 inches")
    h = w * aspect if height is None else float(height)
    if not 0.3 <= h <= 20:
        raise InputError("export(height)", f"{h} in is not a figure height", "use 0.3 to 20 inches")
    return w, h


def _paper_opts(obj, aspect: float):
    """matplotlib-backend options that make HoloViews follow PAPER_RC instead of its own larger defaults."""
    fs = {"title": 8, "labels": 8, "xticks": 7, "yticks": 7, "legend": 7}
    return obj.opts(
        hv.opts.Curve(linewidth=1.0, fontsize=fs, aspect=aspect),
        hv.opts.Scatter(s=8, fontsize=fs, aspect=aspect),
        hv.opts.Area(fontsize=fs, aspect=aspect),
        hv.opts.Graph(fontsize=fs, xaxis=None, yaxis=None, aspect=aspect),
        hv.opts.Overlay(fontsize=fs, legend_position="best", aspect=aspect),
        hv.opts.NdOverlay(fontsize=fs, legend_position="best", aspect=aspect, legend_limit=6),
        backend="matplotlib",
        clone=True,
    )


def _grid(obj) -> tuple[int, int]:
    """(rows, columns) of subplots a HoloViews object renders to."""
    if isinstance(obj, hv.Layout):
        n = len(obj)
        cols = obj._max_cols if getattr(obj, "_max_cols", None) else min(n, 4)
        return -(-n // cols), cols
    return 1, 1


def export(obj, path, width="single", height: float | None = None, dpi: int = 300) -> Path:
    """Write ``obj`` (a HoloViews element, overlay or layout, or a matplotlib Figure) to ``path``.

    The format comes from the suffix: ``.png``, ``.pdf`` or ``.svg``. ``width``: ``"single"`` column
    (3.33 in), ``"double"`` (7.0 in) or inches; ``height`` in inches (default: see the module docstring).
    Rendering goes through HoloViews' matplotlib backend in the paper style; no browser is needed.
    Returns the path written."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(
            "export(path)",
            f"cannot write {path.suffix or 'a file without suffix'}",
            f"end the file name with one of {', '.join('.' + f for f in FORMATS)}",
        )
    if not path.parent.is_dir():
        raise InputError("export(path)", f"folder {path.parent} does not exist", "create it first")
    w, h = figure_size(width, height)
    with mpl.rc_context(PAPER_RC):
        if isinstance(obj, Figure):
            fig = obj
        else:
            import holoviews.plotting.mpl  # noqa: F401  (registers the backend without switching to it)

            rows, cols = _grid(obj)
            with warnings.catch_warnings():  # HoloViews' span artists always pass color; harmless
                warnings.filterwarnings("ignore", message="Setting the 'color' property", category=UserWarning)
                fig = hv.render(_paper_opts(obj, (w / cols) / (h / rows) * 0.8), backend="matplotlib")
        fig.set_size_inches(w, h)
        fig.set_dpi(dpi)
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", UserWarning
            )  # "not compatible with tight_layout": keep HoloViews' placement
            try:
                fig.tight_layout(pad=0.3)
            except (ValueError, RuntimeError):
                pass
        fig.savefig(path, format=fmt, dpi=dpi, metadata={"Creator": "wormhole_lab.viz.export"})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
