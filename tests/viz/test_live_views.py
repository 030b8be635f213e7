"""The live views: built redraw by redraw they end with the data of a view given the finished run at once, each
redraw sends only new rows (or, after a thinning, a bounded replacement), and the notebook views draw in a fresh
kernel."""

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ColumnsPatchedEvent, ColumnsStreamedEvent

from wormhole_lab.scenarios.interference import two_jobs
from wormhole_lab.scenarios.teaching import incast, repeated_incast
from wormhole_lab.viz.live import FASTFORWARD, LiveRun
from wormhole_lab.viz.live_views import ExplorerView, LessonView
from wormhole_lab.viz.style import JOB_COLORS, SHARED_COLOR, STATE_COLORS


class Page:
    """What a Bokeh server would send for a view: its models in a Document, every change recorded as
    (source name, "stream" | "patch" | "replace", rows)."""

    def __init__(self):
        self.doc = Document()
        self.events = []
        self.doc.on_change(self._record)

    def show(self, layout) -> None:
        self.doc.add_root(layout.get_root(self.doc))

    def _record(self, event) -> None:
        if isinstance(event, ColumnsStreamedEvent):
            self.events.append((event.model.name, "stream", len(next(iter(event.data.values())))))
        elif isinstance(event, ColumnsPatchedEvent):
            self.events.append((event.model.name, "patch", sum(len(v) for v in event.patches.values())))
        elif isinstance(event, ColumnDataChangedEvent):
            self.events.append((event.model.name, "replace", len(next(iter(event.model.data.values()), []))))


def named_sources(view) -> None:
    for name, plot in view.plots.items():
        plot.source.name = plot.source.name or name


def step(run, view, chunks_per_redraw: int, page: Page | None = None) -> None:
    while run.step(max_chunks=chunks_per_redraw):
        view.update(run)
        if page is not None and view.plots and not page.doc.roots:
            named_sources(view)
            page.show(view.layout)
    view.update(run)


def test_a_view_updated_redraw_by_redraw_ends_with_the_data_of_one_given_the_finished_run():
    scenario = incast(n=3, cca="dctcp", size=2_000_000)
    run = LiveRun(scenario, mode="wormhole", history=False)
    live = LessonView(scenario, "wormhole", max_points=200)
    step(run, live, chunks_per_redraw=3)
    after = LessonView(scenario, "wormhole", max_points=200)
    after.update(run)  # every chunk at once
    assert live.feed.samples == after.feed.samples > 400  # thinned at least once
    for name, plot in live.plots.items():
        for column, values in plot.source.data.items():
            np.testing.assert_array_equal(np.asarray(values), np.asarray(after.plots[name].source.data[column]), name)
    for kind in ("fastforward", "memo"):
        np.testing.assert_array_equal(live.strips.final[kind].data["x0"], after.strips.final[kind].data["x0"])
    assert len(live.strips.final["fastforward"].data["x0"]) > 0


def test_each_redraw_streams_only_new_rows_and_a_thinning_replaces_at_most_the_bound():
    scenario = incast(n=3, cca="hp", size=2_000_000)
    run = LiveRun(scenario, history=False)
    view, page = LessonView(scenario, "packet", max_points=100), Page()
    step(run, view, chunks_per_redraw=2, page=page)
    rate = [(kind, rows) for name, kind, rows in page.events if name == "rate"]
    streamed = sum(rows for kind, rows in rate if kind == "stream")
    replaced = [rows for kind, rows in rate if kind == "replace"]
    assert len(rate) > 5 and streamed > 0 and replaced, rate
    assert max(replaced) <= 100 and not any(kind == "patch" for kind, _ in rate)
    # what went to the page: new rows once each, plus the thinnings' bounded replacements, under the samples
    assert len(view.plots["rate"].source.data["time"]) <= 100 < view.feed.samples
    assert streamed + sum(replaced) < view.feed.samples


def test_the_partition_graph_patches_colours_and_redraws_only_when_partitions_change():
    scenario = repeated_incast(n=2, rounds=3)
    run = LiveRun(scenario, mode="wormhole", history=False)
    view, page = ExplorerView(scenario), Page()
    view.graph.nodes.name = "nodes"
    page.show(view.graph.pane)
    redraws = 0
    while run.step(max_chunks=1):
        before = view.graph.key
        view.update(run)
        redraws += view.graph.key != before
    nodes = [(kind, rows) for name, kind, rows in page.events if name == "nodes"]
    patches = [rows for kind, rows in nodes if kind == "patch"]
    replaced = [rows for kind, rows in nodes if kind == "replace"]
    assert patches and len(replaced) == redraws > 0, nodes
    assert max(replaced) <= 400 and max(patches) <= max(replaced)
    assert not any(kind == "stream" for kind, _ in nodes)


def test_two_jobs_colour_flows_partitions_and_rate_lines_by_job():
    scenario = replace(two_jobs("interleaved", gpus=32, scale=0.002, iterations=1, start_us=0), alone_mode="off")
    job_of_flow = scenario.flows.meta["jobs"].job_of_flow()
    run = LiveRun(scenario, mode="wormhole", history=False)
    view, page = ExplorerView(scenario), Page()
    view.graph.nodes.name = "nodes"
    page.show(view.graph.pane)
    patched = set()
    page.doc.on_change(lambda e: patched.update(e.patches) if isinstance(e, ColumnsPatchedEvent) else None)
    color = {"a": JOB_COLORS[0], "b": JOB_COLORS[1]}
    seen, shared = set(), 0
    while run.step(max_chunks=1):
        view.update(run)
        d = view.graph.nodes.data
        for row, kind in enumerate(d["kind"]):
            if kind != "flow":
                continue
            f = int(d["label"][row].split()[1])
            job = "ab"[job_of_flow[f]]
            assert d["job"][row] == job and d["color"][row] == color[job], (row, d["label"][row])
            assert d["line_color"][row] in STATE_COLORS.values() and d["line_width"][row] == 2.5
            seen.add(job)
        cells = view.graph.cells.data
        assert len(cells["x"]) == len(view.graph.key)  # a cell per partition
        for fill, dash, label in zip(cells["fill"], cells["dash"], cells["label"], strict=True):
            several = "shared" in label
            assert (fill == SHARED_COLOR) == several and (dash == "dashed") == several, label
            assert several or fill == color[label.split("job ")[1].rstrip(")")]
        shared = max(shared, len(view.graph.shared))
    assert seen == {"a", "b"} and shared > 0  # both jobs drawn, and partitions where they meet
    view.update(run)  # finished: the last partitions seen
    at, parts, states = run.last_busy  # the finished graph: one of its flows starts being fast-forwarded
    f, row = next(iter(view.graph.flow_rows.items()))
    run.last_busy = (at, parts, {**states, f: FASTFORWARD})
    view.graph.update(run)
    assert patched == {"line_color"}  # what the flows do changes their ring only, their fill stays their job's
    d = view.graph.nodes.data
    assert d["line_color"][row] == STATE_COLORS[FASTFORWARD] and d["color"][row] == color["ab"[job_of_flow[f]]]
    lines = {r.glyph.y: r.glyph.line_color for r in view.rate.figure.renderers if getattr(r.glyph, "y", "")[:1] == "f"}
    assert len(lines) == 12 and {c for c in lines.values()} == set(color.values())
    assert all(c == color["ab"[job_of_flow[int(y[1:])]]] for y, c in lines.items())
    labels = [item.label["value"] for item in view.rate.legend.items]
    assert labels[:2] == ["job a (6 flows)", "job b (6 flows)"]  # each job's largest in turn


@pytest.mark.parametrize("widget", ["lesson_widget", "explorer_widget"])
def test_the_notebook_views_draw_rich_output_in_a_kernel_that_never_loaded_an_extension(widget, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    setup = (
        "from wormhole_lab.viz.teach_app import CCALesson\nw = lesson_widget(CCALesson(n=2, flow_mb=0.3))"
        if widget == "lesson_widget"
        else "from wormhole_lab.viz.explore_app import Exploration, TOYS\n"
        "w = explorer_widget(Exploration(workload=TOYS[1], n=2))"
    )
    code = (
        f"from wormhole_lab.viz.notebook import {widget}\n{setup}\nw.start()\n"
        "import json\nprint(json.dumps({'message': w.message.value, 'mime': sorted(w.output.outputs[0]['data'])}))"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    where = {"metadata": {"path": str(tmp_path)}}
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources=where).execute()
    out = json.loads(next(o["text"] for o in nb.cells[0].outputs if o.get("name") == "stdout").strip().splitlines()[-1])
    assert out["message"].startswith("done"), out
    assert "application/vnd.holoviews_exec.v0+json" in out["mime"] and "text/html" in out["mime"], out["mime"]


def test_the_kernel_used_above_has_no_extension_preloaded():
    """The notebook test's kernel starts from nothing: HoloViews has no backend loaded until the view loads it."""
    code = "import holoviews as hv; print(hv.Store.current_backend, list(hv.Store.renderers))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "[]" in out
