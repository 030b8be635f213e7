"""Live Bokeh views for the apps and the notebook widgets, fed only what is new.

A view owns its Bokeh figures and ColumnDataSources. ``update(run)`` takes what the run added since the last
update (new telemetry chunks through a ``SeriesFeed``, the skip log's newly final rows, the memo counters' new
rows, the partitions as they are now) and streams it into the sources (``ColumnDataSource.stream``); it replaces a
source's data only after a thinning (at most ``feed.MAX_POINTS`` rows) or when the partitions changed (at most
``DETAIL_NODES`` nodes), and patches the graph's colours when only what the flows do changed. ``sent`` counts the
rows handed to Bokeh: what redraws cost the page. A view's Panel layouts are built before they are shown; a served
app sends the changes by itself, a notebook widget through the output's comm (``notebook._redraw``).

Units: time in µs (from 0), rates in Gb/s, queues and windows in KB.
"""

import numpy as np
import panel as pn
from bokeh.core.properties import field
from bokeh.models import ColumnDataSource, DataRange1d, HoverTool, Legend, LegendItem, Range1d
from bokeh.plotting import figure

from wormhole_lab.viz.feed import MAX_POINTS, Update
from wormhole_lab.viz.graph_layout import DETAIL_NODES, cell_layout, grid_centres
from wormhole_lab.viz.live import FASTFORWARD, MEMO, PACKET
from wormhole_lab.viz.live_data import CCA_STATE, QUANTITIES, QUEUE_LINES, MemoFeed, SeriesFeed, SkipFeed
from wormhole_lab.viz.style import (
    AUDIT_COLOR,
    BAND_COLOR,
    COMPACT_LEGEND,
    EDGE_COLORS,
    LINE_COLORS,
    MEMO_COLOR,
    PACKET_COLOR,
    SHARED_COLOR,
    SKIP_COLOR,
    STATE_COLORS,
    job_colors,
)

__all__ = ["ExplorerView", "LessonView", "LinePlot", "PartitionGraphView"]

HEIGHT = 230


def _figure(title: str, ylabel: str, x_range=None, y_range=None, height: int = HEIGHT):
    fig = figure(
        title=title,
        height=height,
        sizing_mode="stretch_width",
        x_range=x_range if x_range is not None else DataRange1d(start=0),
        x_axis_label="time (µs)",
        y_axis_label=ylabel,
        tools="pan,box_zoom,wheel_zoom,reset,save",
        toolbar_location="above",
    )
    if y_range is not None:
        fig.y_range = y_range
    fig.title.text_font_size = "10pt"
    return fig


def _legend(fig, items: list) -> Legend:
    """A legend beside the plot, never over the data; a click hides a line."""
    legend = Legend(items=items, click_policy="hide", location="top_left", **COMPACT_LEGEND)
    fig.add_layout(legend, "right")
    return legend


def _axis_label(name: str) -> str:
    label, unit, _ = QUANTITIES[name]
    return f"{label} ({unit})" if unit else label


class LinePlot:
    """A figure with a line per column of a source fed from a ``ThinnedTable``'s updates (``push``)."""

    def __init__(
        self, title, ylabel, lines: dict, x_range=None, y_range=None, extra: tuple = (), source=None,
        colors: dict | None = None, groups: dict | None = None,
    ):  # fmt: skip
        """``lines``: column -> legend label; ``extra``: more columns the source holds (drawn by the caller);
        ``source``: another plot's source to draw from (that plot pushes the updates); ``colors``: column -> colour
        (default: ``LINE_COLORS`` in turn); ``groups``: legend label -> columns, one legend entry per group (a click
        hides the group's lines; the hover names the line)."""
        self.source = source or ColumnDataSource({c: np.zeros(0) for c in ("time", *lines, *extra)})
        self.figure = _figure(title, ylabel, x_range, y_range)
        self.items = []
        renderers = {}
        for k, (column, label) in enumerate(lines.items()):
            color = colors[column] if colors else LINE_COLORS[k % len(LINE_COLORS)]
            line = self.figure.line("time", column, source=self.source, color=color, name=label)
            line.glyph.line_width = 1.5
            renderers[column] = line
            if groups is None:
                self.items.append(LegendItem(label=label, renderers=[line]))
        for label, columns in (groups or {}).items():
            self.items.append(LegendItem(label=label, renderers=[renderers[c] for c in columns]))
        tips = [("time", "@time{0.0} µs"), ("value", "$y{0.000}")] + ([("line", "$name")] if groups else [])
        self.figure.add_tools(HoverTool(tooltips=tips))
        self.legend = _legend(self.figure, self.items) if self.items else None
        self.sent = 0

    def push(self, update: Update) -> None:
        columns = self.source.column_names
        if update.reset:
            self.source.data = {c: update.rows[c] for c in columns}
        elif len(update):
            self.source.stream({c: update.rows[c] for c in columns})
        self.sent += len(update)


class StripLayer:
    """Fast-forwarded windows shaded sky blue and memo hits orange on a figure: final ones streamed once, the ones
    in progress (a skip-back may shorten them) replaced at each update."""

    def __init__(self, fig):
        self.final, self.running = {}, {}
        self.items = []
        for kind, label, color, alpha in (
            ("fastforward", "fast-forwarded", SKIP_COLOR, 0.25),
            ("memo", "memo hit", MEMO_COLOR, 0.35),
        ):
            renderers = []
            for store in (self.final, self.running):
                store[kind] = ColumnDataSource({"x0": np.zeros(0), "x1": np.zeros(0), "part": np.zeros(0)})
                strip = fig.vstrip(x0="x0", x1="x1", source=store[kind], fill_color=color, fill_alpha=alpha)
                strip.glyph.line_width = 0
                strip.level = "underlay"
                renderers.append(strip)
            self.items.append(LegendItem(label=label, renderers=renderers))
        self.audit = ColumnDataSource({"x0": np.zeros(0), "x1": np.zeros(0)})
        audit = fig.vstrip(x0="x0", x1="x1", source=self.audit, fill_alpha=0, line_color=AUDIT_COLOR, line_width=2)
        audit.glyph.line_dash = "dashed"
        self.audit_item = LegendItem(label="audited", renderers=[audit])
        self.sent = 0

    def push(self, new: dict, running: dict) -> None:
        for kind, rows in new.items():
            if len(rows["x0"]):
                self.final[kind].stream(rows)
                self.sent += len(rows["x0"])
            if len(running[kind]["x0"]) or len(self.running[kind].data["x0"]):
                self.running[kind].data = running[kind]
                self.sent += len(running[kind]["x0"])

    def show_audit(self, windows) -> None:
        """The stretches the self-audit re-simulated (known at the end of the run)."""
        self.audit.data = {"x0": [w.start_ps / 1e6 for w in windows], "x1": [w.end_ps / 1e6 for w in windows]}
        self.sent += len(windows)


def _flow_label(scenario, f: int) -> str:
    flows = scenario.flows
    return f"flow {f} ({flows.src[f]}→{flows.dst[f]})"


class LessonView:
    """The CCA lesson's plots: sending rate per flow (with the steady band of the first flow, and skipped windows
    in Wormhole mode), window or bytes in flight, the busiest queues, the CCA's state, Jain's fairness index, and
    the share of flows the steady detector calls steady, in ``ncols`` columns. ``x_range`` links the time axis with
    another view."""

    def __init__(
        self, scenario, mode: str, theta: float = 0.05, x_range=None, ncols: int = 2, title_prefix: str = "",
        max_points: int = MAX_POINTS,
    ):  # fmt: skip
        self.scenario, self.mode = scenario, mode
        self.feed = SeriesFeed(scenario, theta=theta, max_points=max_points)
        self.x_range = x_range if x_range is not None else DataRange1d(start=0)
        self.title_prefix = title_prefix
        self.seen = 0  # chunks taken
        self.plots: dict[str, LinePlot] = {}
        self.strips = None
        self.skips = SkipFeed()
        self.queue_ports = np.zeros(0, dtype=np.int64)
        self._build()
        panes = [pn.pane.Bokeh(p.figure, sizing_mode="stretch_width") for p in self.plots.values()]
        self.layout = pn.GridBox(*panes, ncols=ncols, sizing_mode="stretch_width")

    @property
    def sent(self) -> int:
        return sum(p.sent for p in self.plots.values()) + (self.strips.sent if self.strips else 0)

    def _build(self) -> None:
        """The figures, for the flows and ports the run's telemetry traces; built before they are shown, since a
        model added to a page shown in a notebook later is not known to the page's patches."""
        feed, x, prefix = self.feed, self.x_range, self.title_prefix
        lines = {f"f{f}": _flow_label(self.scenario, int(f)) for f in feed.flows}
        rate = LinePlot(
            f"{prefix}sending rate per flow", _axis_label("flow_rate"), lines, x, DataRange1d(start=0),
            extra=("band_lo", "band_hi"),
        )  # fmt: skip
        band = rate.figure.varea(
            "time", "band_lo", "band_hi", source=rate.source, fill_color=BAND_COLOR, fill_alpha=0.3
        )
        band_flow = int(feed.flows[0])
        rate.legend.items.append(
            LegendItem(label=f"steady band (θ={feed.theta:g}), flow {band_flow}", renderers=[band])
        )
        if self.mode == "wormhole":
            self.strips = StripLayer(rate.figure)
            rate.legend.items.extend([*self.strips.items, self.strips.audit_item])
        self.plots["rate"] = rate
        window = feed.window_variable
        title = "window per flow" if window == "flow_window" else "bytes in flight per flow (no window)"
        self.plots["window"] = LinePlot(f"{prefix}{title}", _axis_label(window), lines, x, DataRange1d(start=0))
        slots = {f"q{k}": f"queue {k + 1}" for k in range(QUEUE_LINES)}
        self.plots["queue"] = LinePlot(
            f"{prefix}busiest queues", _axis_label("port_queue"), slots, x, DataRange1d(start=0)
        )
        for name in CCA_STATE.get(feed.cca, []):
            self.plots[name] = LinePlot(f"{prefix}{QUANTITIES[name][0]}", _axis_label(name), lines, x)
        self.plots["fairness"] = LinePlot(
            f"{prefix}Jain's fairness index", "Jain's index", {"fairness": "Jain's index"}, x,
            y_range=Range1d(0, 1.05), extra=("steady",),
        )  # fmt: skip
        self.plots["steady"] = LinePlot(
            f"{prefix}steady detector (θ={feed.theta:g}, l={feed.window})", "flows steady (fraction)",
            {"steady": "share of active flows steady"}, x, y_range=Range1d(0, 1.05),
            source=self.plots["fairness"].source,  # one source, two plots: the fairness plot's stream feeds both
        )  # fmt: skip

    def update(self, run) -> None:
        """Take the chunks (and skips) ``run`` added since the last update."""
        self.feed.add(run.chunks[self.seen :])
        self.seen = len(run.chunks)
        tables = self.feed.tables
        for name, plot in self.plots.items():
            if name in ("steady", "queue"):
                continue
            plot.push(tables[name].take())
        self._push_queues()
        if self.strips is not None and run.controller is not None:
            self.strips.push(*self.skips.take(run.controller.ff.skips))
            if run.done:
                self.strips.show_audit(run.audit_windows())

    def _push_queues(self) -> None:
        """The busiest queues so far: streamed while they stay the busiest, replaced (thinned) when others are."""
        feed, plot = self.feed, self.plots["queue"]
        table = feed.tables["queue"]
        busiest = feed.busiest_ports()
        update = table.take()
        if update.reset or not np.array_equal(busiest, self.queue_ports):
            self.queue_ports = busiest
            update = Update(table.rows(), reset=True)
            topo = self.scenario.topology
            owner, peer = topo.port_node(), topo.port_peer_node()
            for k, item in enumerate(plot.items):
                if k < len(busiest):
                    p = int(feed.ports[busiest[k]])
                    item.label = {"value": f"port {p} ({owner[p]}→{peer[p]})"}
                item.visible = k < len(busiest)
        rows = {"time": update.rows["time"]}
        for k in range(QUEUE_LINES):
            column = f"p{feed.ports[self.queue_ports[k]]}" if k < len(self.queue_ports) else None
            rows[f"q{k}"] = update.rows[column] if column else np.full(len(rows["time"]), np.nan)
        plot.push(Update(rows, update.reset))


class PartitionGraphView:
    """The partitions as they are now: each in its own cell, flows as circles coloured by what they do (grey packet
    by packet, sky blue fast-forwarded, orange memo hit), ports as white squares, edges a colour per partition. When
    the partitions did not change it patches the colours of the flows whose state did.

    With several jobs (``jobs``, a ``workload.jobs.JobLayout``) a flow is filled in its job's colour and ringed in
    what it is doing, its edges take its job's colour, and each partition's cell is drawn in its job's colour, or
    with a thick dashed vermillion outline when it holds flows of several jobs: those share ports at that moment,
    which is where the jobs interfere. A legend names the jobs."""

    COLUMNS = ("x", "y", "marker", "color", "line_color", "line_width", "size", "label", "kind", "job")

    def __init__(self, max_nodes: int = DETAIL_NODES, jobs=None):
        self.max_nodes = max_nodes
        self.job_names = list(jobs.names) if jobs is not None else []
        self.job_of_flow = jobs.job_of_flow() if jobs is not None else None
        self.job_color = job_colors(self.job_names)
        # with jobs the fill is the job's and the ring says what the flow does: patches change the ring
        self.state_column = "line_color" if self.job_names else "color"
        self.nodes = ColumnDataSource({c: [] for c in self.COLUMNS})
        self.edges = ColumnDataSource({"xs": [], "ys": [], "color": []})
        self.cells = ColumnDataSource({c: [] for c in ("x", "y", "fill", "line", "width", "dash", "label")})
        fig = figure(
            title="partitions: none yet", height=2 * HEIGHT, sizing_mode="stretch_width", tools="pan,wheel_zoom,reset",
            match_aspect=True, toolbar_location="above",
        )  # fmt: skip
        fig.axis.visible = fig.grid.visible = False
        fig.title.text_font_size = "10pt"
        cells = fig.rect(
            "x", "y", 0.92, 0.92, source=self.cells, fill_color="fill", fill_alpha=0.12, line_color="line",
            line_width="width", line_dash=field("dash"),
        )  # fmt: skip
        cells.level = "underlay"
        fig.multi_line("xs", "ys", source=self.edges, line_color="color", line_width=1.5, line_alpha=0.8)
        points = fig.scatter(
            "x", "y", source=self.nodes, marker="marker", fill_color="color", size="size", line_color="line_color",
            line_width="line_width",
        )  # fmt: skip
        fig.add_tools(HoverTool(renderers=[points, cells], tooltips=[("", "@label")]))
        if self.job_names:
            self.legend = _legend(fig, self._job_legend(fig))
            self.legend.title = "fill: job; ring: what it does"
            self.legend.title_text_font_size = "8pt"
        self.figure = fig
        self.pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width")
        self.key = None
        self.flow_rows: dict[int, int] = {}  # flow -> its row in the nodes (detailed drawing)
        self.shared: list[int] = []  # partitions (ids) holding flows of several jobs, as drawn
        self.cache: dict = {}
        self.sent = 0

    def _job_legend(self, fig) -> list:
        """Legend entries drawn by glyphs of one point at NaN, which the plot leaves out (a legend draws nothing for a
        renderer with no data): a job's fill, the shared cell, the rings."""
        empty = {"x": [np.nan], "y": [np.nan]}
        items = []
        for name, color in self.job_color.items():
            dot = fig.scatter(
                "x", "y", source=ColumnDataSource(empty), marker="circle", size=10, fill_color=color, line_color="black"
            )
            items.append(LegendItem(label=f"job {name}", renderers=[dot]))
        shared = fig.rect(
            "x", "y", 1, 1, source=ColumnDataSource(empty), fill_color=SHARED_COLOR, fill_alpha=0.12,
            line_color=SHARED_COLOR, line_width=3, line_dash="dashed",
        )  # fmt: skip
        items.append(LegendItem(label="partition shared by jobs", renderers=[shared]))
        for state in (PACKET, FASTFORWARD, MEMO):
            ring = fig.scatter(
                "x", "y", source=ColumnDataSource(empty), marker="circle", size=10, fill_color="white",
                line_color=STATE_COLORS[state], line_width=3,
            )  # fmt: skip
            items.append(LegendItem(label=f"ring: {state}", renderers=[ring]))
        return items

    def jobs_of(self, flows) -> list[int]:
        """The jobs (indices) of ``flows``, sorted; empty without jobs."""
        if self.job_of_flow is None:
            return []
        return sorted({int(j) for j in self.job_of_flow[list(flows)]})

    def update(self, run) -> None:
        ctrl = run.controller
        if ctrl is None:
            return
        parts = run.partitions()
        at = run.now_ps
        if parts:
            states = run.last_busy[2]
        elif run.done and run.last_busy is not None:  # finished: the last partitions seen
            at, parts, states = run.last_busy
        else:
            states = {}
        key = tuple((p, tuple(fs)) for p, fs in sorted(parts.items()))
        n_flows = sum(len(fs) for fs in parts.values())
        title = f"partitions: {len(parts)} at t = {at / 1e6:.0f} µs, {n_flows} flows" if parts else "partitions: none"
        if run.done and parts:
            title = f"last partitions ({len(parts)}) at t = {at / 1e6:.0f} µs, {n_flows} flows"
        if key == self.key and self.flow_rows:
            column = self.nodes.data[self.state_column]
            changes = [
                (row, STATE_COLORS[states.get(f, PACKET)])
                for f, row in self.flow_rows.items()
                if column[row] != STATE_COLORS[states.get(f, PACKET)]
            ]
            if changes:
                self.nodes.patch({self.state_column: changes})
                self.sent += len(changes)
        elif key != self.key:
            self.key = key
            self._redraw(ctrl, parts, states)
        if parts and self.job_names:
            title += f", {len(self.shared)} shared by several jobs" if self.shared else ", none shared by jobs"
        if self.figure.title.text != title:
            self.figure.title.text = title

    def _redraw(self, ctrl, parts: dict, states: dict) -> None:
        nodes = {c: [] for c in self.nodes.column_names}
        edges = {"xs": [], "ys": [], "color": []}
        cells = {c: [] for c in self.cells.column_names}
        self.flow_rows = {}
        self.shared = []
        by_job = bool(self.job_names)

        def ports_of(f):
            return sorted(ctrl.ff.paths[f])

        ordered = sorted(parts.items())
        n_ports = sum(len(set().union(*(ports_of(f) for f in fs))) for _, fs in ordered)
        aggregated = sum(len(fs) for _, fs in ordered) + n_ports > self.max_nodes

        def node(x, y, kind, state, label, size, fill=None, job=""):
            """A node: without jobs filled by what it does; with jobs filled by ``fill`` and ringed by its state."""
            ringed = by_job and kind != "port"
            values = {
                "x": float(x), "y": float(y), "marker": "square" if kind == "port" else "circle",
                "color": fill if ringed else STATE_COLORS[state],
                "line_color": STATE_COLORS[state] if ringed else "black", "line_width": 2.5 if ringed else 1.0,
                "size": size + 3 if ringed else size, "label": label, "kind": kind, "job": job,
            }  # fmt: skip
            for c, v in values.items():
                nodes[c].append(v)
            return len(nodes["x"]) - 1

        for (part, flows), centre in zip(ordered, grid_centres(len(ordered)), strict=True):
            jobs = self.jobs_of(flows)
            names = ", ".join(self.job_names[j] for j in jobs)
            shared = len(jobs) > 1
            if shared:
                self.shared.append(part)
            fill = SHARED_COLOR if shared else self.job_color.get(self.job_names[jobs[0]]) if jobs else None
            where = f" (jobs {names}: shared)" if shared else f" (job {names})" if jobs else ""
            if by_job:
                for c, v in zip(
                    cells, (*map(float, centre), fill, fill, 3.0 if shared else 1.0, "dashed" if shared else "solid",
                            f"partition {part}: {len(flows)} flows" + where),
                    strict=True,
                ):  # fmt: skip
                    cells[c].append(v)
            if aggregated:
                counts = {s: sum(states.get(f, PACKET) == s for f in flows) for s in (PACKET, FASTFORWARD, MEMO)}
                state = max(counts, key=counts.get)
                label = f"partition {part}{where}: {len(flows)} flows, " + ", ".join(
                    f"{v} {k}" for k, v in counts.items() if v
                )
                node(*centre, "partition", state, label, 6 + 3 * np.sqrt(len(flows)), fill, names)
                continue
            pos = cell_layout(self.cache, tuple(flows), ports_of)
            color = EDGE_COLORS[part % len(EDGE_COLORS)]
            seen_ports = set()
            for f in flows:
                fx, fy = centre + pos[("flow", f)]
                job = self.job_names[self.job_of_flow[f]] if by_job else ""
                label = f"flow {f} (job {job}, partition {part})" if by_job else f"flow {f} (partition {part})"
                job_color = self.job_color.get(job)
                self.flow_rows[f] = node(fx, fy, "flow", states.get(f, PACKET), label, 12, job_color, job)
                for p in ports_of(f):
                    px, py = centre + pos[("port", p)]
                    if p not in seen_ports:
                        seen_ports.add(p)
                        node(px, py, "port", "port", f"port {p}", 10)
                    edges["xs"].append([fx, px])
                    edges["ys"].append([fy, py])
                    edges["color"].append(job_color if by_job else color)
        self.edges.data = edges
        self.nodes.data = nodes
        self.cells.data = cells
        self.sent += len(nodes["x"]) + len(edges["xs"]) + len(cells["x"])


class ExplorerView:
    """The Wormhole explorer's live views: the partition graph, the sending rates of the largest flows with skipped
    windows shaded, and the memo DB's lookups, hit rate, size and the events executed against skipped."""

    def __init__(self, scenario, theta: float = 0.05, max_lines: int = 12):
        self.scenario = scenario
        self.feed = SeriesFeed(scenario, theta=theta, max_lines=max_lines, lesson=False)
        self.memo_feed = MemoFeed()
        self.skips = SkipFeed()
        self.seen = 0
        self.jobs = scenario.flows.meta.get("jobs")  # several jobs: a workload.jobs.JobLayout, else None
        self.graph = PartitionGraphView(jobs=self.jobs)
        self.x_range = DataRange1d(start=0)
        feed = self.feed
        lines = {f"f{f}": _flow_label(scenario, int(f)) for f in feed.flows}
        title, colors, groups = f"sending rate of the {len(lines)} largest flows", None, None
        if feed.job_names:  # a colour per job, one legend entry per job: the largest flows of each job in turn
            names = [feed.job_names[j] for j in feed.flow_jobs]
            colors = {c: job_colors(feed.job_names)[n] for c, n in zip(lines, names, strict=True)}
            groups = {
                f"job {n} ({names.count(n)} flows)": [c for c, m in zip(lines, names, strict=True) if m == n]
                for n in feed.job_names
                if n in names
            }
            lines = {c: f"{label}, job {n}" for (c, label), n in zip(lines.items(), names, strict=True)}
            title = f"sending rate of {len(lines)} large flows, coloured by job"
        self.rate = LinePlot(
            title,
            _axis_label("flow_rate"),
            lines,
            self.x_range,
            DataRange1d(start=0),
            extra=("band_lo", "band_hi"),
            colors=colors,
            groups=groups,
        )  # fmt: skip  (the legend says what the shading is)
        self.strips = StripLayer(self.rate.figure)
        self.rate.legend.items.extend([*self.strips.items, self.strips.audit_item])
        self.memo_source = ColumnDataSource({c: np.zeros(0) for c in MemoFeed.COLUMNS})
        self.memo_figures = self._memo_figures()
        self.memo_sent = 0
        self.rate_pane = pn.pane.Bokeh(self.rate.figure, sizing_mode="stretch_width")
        memo_panes = [pn.pane.Bokeh(f, sizing_mode="stretch_width") for f in self.memo_figures]
        self.memo_grid = pn.GridBox(*memo_panes, ncols=2, sizing_mode="stretch_width")

    @property
    def sent(self) -> int:
        return self.graph.sent + self.rate.sent + self.strips.sent + self.memo_sent

    def _memo_figures(self) -> list:
        x, src = self.x_range, self.memo_source
        specs = [
            ("memo lookups, hits and misses", "count", (("lookups", LINE_COLORS[0]), ("hits", MEMO_COLOR),
                                                         ("misses", PACKET_COLOR)), None),
            ("memo hit rate", "hits / lookups", (("hit_rate", MEMO_COLOR),), Range1d(0, 1.05)),
            ("memo DB size", "KB", (("db_kb", LINE_COLORS[0]),), None),
            ("events executed and skipped (estimate)", "events", (("executed", PACKET_COLOR),
                                                                  ("skipped", SKIP_COLOR)), None),
        ]  # fmt: skip
        figures = []
        for title, ylabel, lines, y_range in specs:
            fig = _figure(title, ylabel, x, y_range, height=200)
            items = []
            for column, color in lines:
                line = fig.line("time", column, source=src, color=color)
                line.glyph.line_width = 1.5
                items.append(LegendItem(label=column.replace("_", " "), renderers=[line]))
            _legend(fig, items)
            figures.append(fig)
        return figures

    def update(self, run) -> None:
        self.feed.add(run.chunks[self.seen :])
        self.seen = len(run.chunks)
        self.rate.push(self.feed.tables["rate"].take())
        self.strips.push(*self.skips.take(run.controller.ff.skips))
        if run.done:
            self.strips.show_audit(run.audit_windows())
        self.memo_feed.add(run.memo_log)
        update = self.memo_feed.table.take()
        if update.reset:
            self.memo_source.data = update.rows
        elif len(update):
            self.memo_source.stream(update.rows)
        self.memo_sent += len(update)
        self.graph.update(run)
