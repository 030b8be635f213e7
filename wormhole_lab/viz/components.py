"""HoloViews components: timeline, CCA plots, partition graph, memo panel.

Each takes a ``LiveRun`` (or, where noted, a results ``xarray.Dataset``) and returns a HoloViews object
that shows in a notebook, inside a Panel app, and through ``export`` on paper. Each returns the same
structure however far the run has got (empty layers when there is nothing yet), so it can be the
callback of a ``hv.DynamicMap`` fed by a ``streams.Pipe`` for live updates.

Units on axes: time in us, rates in Gb/s, queues and windows in KB (1000 bytes).
"""

import textwrap

import holoviews as hv
import numpy as np
import xarray as xr

from wormhole_lab.viz.analysis import fairness_series, steady_band, steady_flags, steady_params
from wormhole_lab.viz.graph_layout import DETAIL_NODES, cell_layout, grid_centres
from wormhole_lab.viz.live import FASTFORWARD, MEMO, PACKET, LiveRun, SkipWindow, flow_states
from wormhole_lab.viz.live_data import CCA_STATE, QUANTITIES
from wormhole_lab.viz.style import (
    AUDIT_COLOR,
    BAND_COLOR,
    COMPACT_LEGEND,
    EDGE_COLORS,
    LINE_COLORS,
    MEMO_COLOR,
    PACKET_COLOR,
    SKIP_COLOR,
    STATE_COLORS,
)

__all__ = ["cca_plots", "memo_panel", "partition_graph", "skip_spans", "timeline"]

TIME = hv.Dimension("time", label="time", unit="µs")
PS_PER_US = 1e6

#: partition graph node shapes: flows are circles, ports squares
MARKERS = {"flow": "circle", "port": "square", "partition": "circle"}
#: bokeh title size, and what fits on a line of it: HoloViews' default plot is 300 px wide, its title starts
#: at the frame (after the y axis) and is cut where the canvas ends
TITLE_FONTSIZE = "10pt"
TITLE_CHARS = 30
#: frame width (px) of a fixed-size bokeh plot: a legend beside it adds to the plot's width instead of squeezing
#: the data into what is left of HoloViews' default 300 px
FRAME_WIDTH = 240


def _both(obj, **style):
    """Apply ``style`` for both backends (translating line_width <-> linewidth)."""
    bokeh = dict(style)
    mpl = {("linewidth" if k == "line_width" else k): v for k, v in style.items()}
    return obj.opts(backend="bokeh", **bokeh).opts(backend="matplotlib", **mpl)


def _fit_title(title: str, chars: int = TITLE_CHARS) -> str:
    """``title`` wrapped at word boundaries into lines of at most ``chars`` characters (bokeh cuts long ones)."""
    return "\n".join(textwrap.wrap(title, chars, break_on_hyphens=False)) or title


def _fixed_frame(plot, element) -> None:
    """Bokeh hook: a plot of HoloViews' default fixed size keeps a ``FRAME_WIDTH`` frame, and grows by whatever
    sits beside it (legend, axis). Responsive plots (the live apps) and plots given a width are left alone."""
    fig = plot.state
    default_width = plot.param["width"].default
    if getattr(fig, "sizing_mode", None) in (None, "fixed") and plot.frame_width is None and fig.width == default_width:
        fig.frame_width = FRAME_WIDTH
        fig.width = None  # bokeh sizes the plot from the frame then (a width set too would win)


def _titled(obj, title: str):
    """``title`` on both backends: wrapped to fit a default-size bokeh plot, one line for matplotlib."""
    obj = obj.opts(title=_fit_title(title), fontsize={"title": TITLE_FONTSIZE}, hooks=[_fixed_frame], backend="bokeh")
    return obj.opts(title=title, backend="matplotlib")


def _legend_beside(obj):
    """Bokeh legend to the right of the plot, outside the data (the matplotlib export places its own)."""
    return obj.opts(legend_position="right", legend_opts=COMPACT_LEGEND, backend="bokeh")


def _series(data) -> xr.Dataset | None:
    return data.series if isinstance(data, LiveRun) else data


def _ydim(name: str) -> hv.Dimension:
    label, unit, _ = QUANTITIES.get(name, (name, None, 1.0))
    return hv.Dimension(name, label=label, unit=unit)


def _spans(el, color: str, alpha: float):
    el = el.opts(color=color, alpha=alpha, line_width=0, backend="bokeh")
    return el.opts(facecolor=color, edgecolor="none", alpha=alpha, backend="matplotlib")


SPAN_LAYERS = ("fast-forwarded", "memo hit", "audited")


def skip_spans(skips: list[SkipWindow], audited: list[SkipWindow] = (), layers=SPAN_LAYERS) -> hv.Overlay:
    """Fast-forwarded windows shaded sky blue, memo-hit transients shaded orange, the stretches the self-audit
    re-simulated outlined in red (x in us). ``layers``: which of the three to draw (and list in the legend)."""
    ff = [(w.start_ps / PS_PER_US, w.end_ps / PS_PER_US) for w in skips if not w.memo]
    memo = [(w.start_ps / PS_PER_US, w.end_ps / PS_PER_US) for w in skips if w.memo]
    ff_el = _spans(hv.VSpans(ff, kdims=[TIME, "x1"], label="fast-forwarded"), SKIP_COLOR, 0.25)
    memo_el = _spans(hv.VSpans(memo, kdims=[TIME, "x1"], label="memo hit"), MEMO_COLOR, 0.35)
    spans = [(w.start_ps / PS_PER_US, w.end_ps / PS_PER_US) for w in audited]
    audit_el = hv.VSpans(spans, kdims=[TIME, "x1"], label="audited").opts(
        fill_alpha=0, line_color=AUDIT_COLOR, line_width=2, line_dash="dashed", backend="bokeh"
    )
    audit_el = audit_el.opts(facecolor="none", edgecolor=AUDIT_COLOR, linewidth=1.5, backend="matplotlib")
    by_label = {"fast-forwarded": ff_el, "memo hit": memo_el, "audited": audit_el}
    return hv.Overlay([by_label[k] for k in layers])


def _span_layers(data, skips: list[SkipWindow], audited: list[SkipWindow]) -> tuple[str, ...]:
    """The skip layers a timeline shows: those with windows, and in a Wormhole run those it can have (so a live
    view keeps one structure as the run goes). A packet-mode run gets none of them in its legend."""
    wormhole = isinstance(data, LiveRun) and data.mode == "wormhole"
    cfg = data.scenario.wormhole if wormhole else None
    has = {
        "fast-forwarded": wormhole or any(not w.memo for w in skips),
        "memo hit": (wormhole and bool(cfg.memo)) or any(w.memo for w in skips),
        "audited": (wormhole and cfg.audit > 0) or bool(audited),
    }
    return tuple(k for k in SPAN_LAYERS if has[k])


def _curves(series: xr.Dataset | None, name: str, max_lines: int, label_of=None) -> hv.NdOverlay:
    """One curve per flow (or per busiest port) of variable ``name``, scaled to display units."""
    key = "port" if name.startswith("port_") else "flow"
    ydim = _ydim(name)
    curves = {}
    if series is not None and name in series:
        scale = QUANTITIES.get(name, (None, None, 1.0))[2]
        values = series[name].values.astype(float) * scale
        ids = series[key].values
        if key == "port":  # the busiest ports only
            order = np.argsort(-np.nan_to_num(values, nan=0).max(axis=0), kind="stable")[:max_lines]
        else:  # the flows with the most samples: a training job's first flows may be active only briefly
            order = np.argsort(-np.isfinite(values).sum(axis=0), kind="stable")[:max_lines]
        t = series["time"].values / PS_PER_US
        for k, i in enumerate(sorted(order)):
            label = label_of(int(ids[i])) if label_of else f"{key} {int(ids[i])}"
            curves[label] = _both(
                hv.Curve((t, values[:, i]), TIME, ydim), color=LINE_COLORS[k % len(LINE_COLORS)], line_width=1.2
            )
    return hv.NdOverlay(curves, kdims=[key], sort=False)


def timeline(
    data,
    variable: str = "flow_rate",
    skips: list[SkipWindow] | None = None,
    theta: float | None = None,
    band_flow: int | None = 0,
    steady_cfg=None,
    max_lines: int = 12,
    title: str | None = None,
) -> hv.Overlay:
    """Per-flow or per-port series over time with skipped windows shaded and the steady band drawn.

    ``data``: a LiveRun (its skips are used) or a Dataset with telemetry. ``theta`` (with the engine config
    ``steady_cfg``, default the run's) draws the steady test's threshold band around flow ``band_flow``'s
    window mean: a window whose samples all stay inside it passes the spread test."""
    series = _series(data)
    if skips is None:
        skips = data.skip_windows() if isinstance(data, LiveRun) else []
    audited = data.audit_windows() if isinstance(data, LiveRun) else []
    if steady_cfg is None and isinstance(data, LiveRun):
        steady_cfg = data.scenario.config
    layers = _span_layers(data, skips, audited)
    curves = _curves(series, variable, max_lines)
    overlay = skip_spans(skips, audited, layers) * curves if layers else hv.Overlay([curves])
    # always there (something to plot before the first chunk), in the legend only when there can be a band
    can_band = theta is not None and variable == "flow_rate"
    band = hv.Area(([], [], []), TIME, [_ydim(variable), "upper"], label="steady band" if can_band else "")
    if theta is not None and steady_cfg is not None and series is not None and variable == "flow_rate":
        flows = list(series["flow"].values)
        if band_flow in flows:
            stride, window, theta = steady_params(steady_cfg, theta)
            rate = series[variable].values[:, flows.index(band_flow)] * 1e-9
            lo, hi = steady_band(rate, stride, window, theta)
            band = hv.Area(
                (series["time"].values / PS_PER_US, lo, hi),
                TIME,
                [_ydim(variable), "upper"],
                label=f"steady band (θ={theta:g}), flow {band_flow}",
            )
    overlay = overlay * _both(band, color=BAND_COLOR, alpha=0.3, line_width=0)
    ydim = _ydim(variable)
    # x from 0: the shaded spans would pad it below 0, and the memo panel beside it shares this axis
    overlay = _both(overlay, show_legend=True, xlabel=TIME.pprint_label, ylabel=ydim.pprint_label, xlim=(0, None))
    return _legend_beside(_titled(overlay, title or f"{ydim.label} over time"))


def _state_curves(series: xr.Dataset | None, cca: str, max_lines: int, timely_min_rtt_s: float) -> list:
    panels = []
    for name in CCA_STATE[cca]:
        if name == "timely_gradient":
            ydim = hv.Dimension("timely_gradient", label="TIMELY RTT gradient (normalised)")
            curves = {}
            if series is not None and "timely_rtt" in series:
                rtt = series["timely_rtt"].values
                grad = np.vstack([np.full((1, rtt.shape[1]), np.nan), np.diff(rtt, axis=0)]) / timely_min_rtt_s
                t = series["time"].values / PS_PER_US
                for k in range(min(rtt.shape[1], max_lines)):
                    curves[f"flow {int(series['flow'].values[k])}"] = _both(
                        hv.Curve((t, grad[:, k]), TIME, ydim), color=LINE_COLORS[k % len(LINE_COLORS)], line_width=1
                    )
            panels.append(
                _legend_beside(_titled(hv.NdOverlay(curves, kdims=["flow"], sort=False), "TIMELY RTT gradient"))
            )
        else:
            panels.append(_legend_beside(_titled(_curves(series, name, max_lines), QUANTITIES[name][0])))
    return panels


def cca_plots(run: LiveRun, theta: float = 0.05, max_lines: int = 12) -> hv.Layout:
    """Rate (with skips and the steady band), window (or bytes in flight without a window), busiest queues,
    the CCA's internal state, Jain's fairness index, and the steady detector (the fraction of active flows that
    pass the steady test) on its own 0-1 axis."""
    series = run.series
    cfg = run.scenario.config
    rate = timeline(run, "flow_rate", theta=theta, max_lines=max_lines, title="sending rate per flow")
    has_window = series is not None and np.isfinite(series["flow_window"].values).any()
    window = _curves(series, "flow_window" if has_window else "flow_inflight", max_lines)
    window = _legend_beside(
        _titled(window, "window per flow" if has_window else "bytes in flight per flow (no window)")
    )
    queue = _curves(series, "port_queue", 4, label_of=lambda p: f"port {p}")
    queue = _legend_beside(_titled(queue, "busiest queues"))
    state = _state_curves(series, cfg.cca, max_lines, cfg.timely_min_rtt_ps / 1e12)
    fair_dim = hv.Dimension("fairness", label="Jain's fairness index", range=(0, 1.05))
    detector_dim = hv.Dimension("steady", label="flows steady", unit="fraction", range=(0, 1.05))
    if series is not None:
        t = series["time"].values / PS_PER_US
        fair = hv.Curve((t, fairness_series(series).values), TIME, fair_dim, label="Jain's index")
        stride, l_window, th = steady_params(cfg, theta)
        flags = steady_flags(series["flow_rate"].values, stride, l_window, th)
        active = np.isfinite(series["flow_rate"].values)
        with np.errstate(invalid="ignore"):
            frac = np.where(
                active.any(axis=1), (flags & active).sum(axis=1) / np.maximum(active.sum(axis=1), 1), np.nan
            )
        steady = hv.Curve((t, frac), TIME, detector_dim, label="steady detector")
    else:
        fair = hv.Curve(([], []), TIME, fair_dim, label="Jain's index")
        steady = hv.Curve(([], []), TIME, detector_dim, label="steady detector")
    fair = _titled(_both(fair, color=LINE_COLORS[0], line_width=1.5), "Jain's fairness index")
    steady = _titled(_both(steady, color=BAND_COLOR, line_width=1.5), f"steady detector: flows steady (θ={theta:g})")
    panels = [rate, window, queue, *state, fair, steady]
    return hv.Layout(panels).cols(2)


class _GraphData:
    """Columns of the partition graph's nodes and edges, filled partition by partition."""

    NODE_COLS = ("x", "y", "index", "kind", "state", "partition", "label", "color", "size", "marker")

    def __init__(self):
        self.nodes = {c: [] for c in self.NODE_COLS}
        self.edges = {"start": [], "end": [], "partition": [], "edge_color": []}

    def node(self, x, y, kind, state, part, label, size) -> int:
        i = len(self.nodes["x"])
        values = (float(x), float(y), i, kind, state, part, label, STATE_COLORS[state], float(size), MARKERS[kind])
        for c, v in zip(self.NODE_COLS, values, strict=True):
            self.nodes[c].append(v)
        return i

    def edge(self, a: int, b: int, part: int) -> None:
        for c, v in zip(self.edges, (a, b, part, EDGE_COLORS[part % len(EDGE_COLORS)]), strict=True):
            self.edges[c].append(v)

    def detail(self, run, part, flows, centre, states, ports_of) -> None:
        """Every flow and port of one partition, laid out in its cell."""
        owner, peer = run.scenario.topology.port_node(), run.scenario.topology.port_peer_node()
        pos = cell_layout(run.cache.setdefault("graph_layouts", {}), tuple(flows), ports_of)
        ports: dict[int, int] = {}
        for f in flows:
            x, y = centre + pos[("flow", f)]
            a = self.node(x, y, "flow", states.get(f, PACKET), part, f"flow {f}", 14)
            for p in ports_of(f):
                if p not in ports:
                    x, y = centre + pos[("port", p)]
                    ports[p] = self.node(x, y, "port", "port", part, f"port {p} ({owner[p]}→{peer[p]})", 14)
                self.edge(a, ports[p], part)

    def aggregate(self, part, flows, centre, states) -> None:
        """One circle for a whole partition: sized by its flows, coloured by what most of them do."""
        counts = {s: sum(states.get(f, PACKET) == s for f in flows) for s in (PACKET, FASTFORWARD, MEMO)}
        state = max(counts, key=counts.get)
        label = f"partition {part}: {len(flows)} flows, " + ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        self.node(*centre, "partition", state, part, label, 6 + 3 * np.sqrt(len(flows)))

    def graph(self) -> hv.Graph:
        vdims = list(self.NODE_COLS[3:])
        node_el = hv.Nodes(tuple(self.nodes[c] for c in self.NODE_COLS), vdims=vdims)
        e = self.edges
        return hv.Graph(
            ((e["start"], e["end"], e["partition"], e["edge_color"]), node_el), vdims=["partition", "edge_color"]
        )


def partition_graph(run: LiveRun, now_ps: int | None = None, max_nodes: int = DETAIL_NODES) -> hv.Graph:
    """Active flows (circles) and the ports they use (white squares), one partition per cell of a grid, edges
    coloured by partition in greys, green and purple (never the state colours). Above ``max_nodes`` flows and
    ports it draws one circle per partition instead, sized by its flows and coloured by what most of them do
    (hover for the counts). The matplotlib export draws ports as white circles (one marker per graph there).

    Flow colour says what the flow is doing now: grey packet-level, sky blue fast-forwarded, orange memo hit.
    Needs a Wormhole-mode run (the partitions come from its controller)."""
    data = _GraphData()
    parts = run.partitions()
    ctrl = run.controller
    shown_at = run.now_ps if now_ps is None else now_ps
    states = flow_states(run, now_ps) if parts else {}
    if not parts and run.done and run.last_busy is not None:  # finished: show the last partitions seen
        shown_at, parts, states = run.last_busy
    aggregated = False
    if ctrl is not None and parts:

        def ports_of(f):
            return sorted(ctrl.ff.paths[f])

        ordered = sorted(parts.items())
        n_ports = sum(len(set().union(*(ports_of(f) for f in fs))) for _, fs in ordered)
        aggregated = sum(len(fs) for _, fs in ordered) + n_ports > max_nodes
        for (part, flows), centre in zip(ordered, grid_centres(len(ordered)), strict=True):
            if aggregated:
                data.aggregate(part, flows, centre, states)
            else:
                data.detail(run, part, flows, centre, states, ports_of)
    n_parts = len(parts)
    title = f"partitions: {n_parts} at t = {shown_at / PS_PER_US:.0f} µs" if n_parts else "partitions: no active flow"
    if n_parts and run.done:
        title = f"last partitions ({n_parts}) at t = {shown_at / PS_PER_US:.0f} µs"
    if aggregated:
        title += f", {sum(len(fs) for fs in parts.values())} flows (a circle per partition)"
    common = dict(node_color="color", edge_color="edge_color", xaxis=None, yaxis=None)
    graph = data.graph().opts(
        hv.opts.Graph(
            **common,
            node_size="size",
            node_marker="marker",
            edge_line_width=2,
            tools=["hover"],
            node_line_color="black",
            backend="bokeh",
        ),
        hv.opts.Graph(**common, node_size=6, edge_linewidth=1.5, node_edgecolors="black", backend="matplotlib"),
    )
    return _titled(graph, title)


def memo_panel(run: LiveRun) -> hv.Layout:
    """Memo lookups, hits and misses, the hit rate, the DB size, and events executed against events skipped,
    all over simulated time from t = 0, like the timeline (one sample per telemetry chunk, and one at t = 0)."""
    m = {k: np.asarray(v, dtype=float) for k, v in run.memo_table().items()}
    t = m["time_ps"] / PS_PER_US
    count = hv.Dimension("count", label="memo operations", unit="count")
    counts = hv.Overlay(
        [
            _both(hv.Curve((t, m[k]), TIME, count, label=k), color=c, line_width=1.5)
            for k, c in (("lookups", LINE_COLORS[0]), ("hits", MEMO_COLOR), ("misses", PACKET_COLOR))
        ]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(m["lookups"] > 0, m["hits"] / np.maximum(m["lookups"], 1), np.nan)
    hit_rate = _both(
        hv.Curve((t, rate), TIME, hv.Dimension("hit_rate", label="hit rate", range=(0, 1.05))),
        color=MEMO_COLOR,
        line_width=1.5,
    )
    size = _both(
        hv.Curve((t, m["db_bytes"] / 1e3), TIME, hv.Dimension("db", label="memo DB size", unit="KB")),
        color=LINE_COLORS[0],
        line_width=1.5,
    )
    ev = hv.Dimension("events", label="events", unit="count")
    events = hv.Overlay(
        [
            _both(hv.Curve((t, m["events_executed"]), TIME, ev, label="executed"), color=PACKET_COLOR, line_width=1.5),
            _both(
                hv.Curve((t, m["events_skipped"]), TIME, ev, label="skipped (estimate)"),
                color=SKIP_COLOR,
                line_width=1.5,
            ),
        ]
    )
    panels = [
        _legend_beside(_titled(counts, "memo lookups, hits, misses")),
        _titled(hit_rate, "memo hit rate"),
        _titled(size, "memo DB size"),
        _legend_beside(_titled(events, "events executed vs skipped")),
    ]
    return hv.Layout([_both(p, xlim=(0, None)) for p in panels]).cols(2)
