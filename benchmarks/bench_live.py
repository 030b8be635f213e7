"""Live views against the run they show: wall time of a run with its live views over the same run headless.

Cases (issue 52's): the CCA lesson, HPCC 8-to-1 x 20 MB in its default (Wormhole) mode; the explorer on one GPT-7B
iteration on 64 GPUs at x0.01 (its default) and at x1; the explorer on MoE-8x7B on 64 GPUs at x0.3. "Headless" is
the same run streamed without views (``LiveRun(...).run()``: the chunks, no Dataset at the end); ``run()`` is
``Simulation(scenario, mode).run()``, which also joins the series into one Dataset (printed for reference: on MoE it
costs most of the time, in xarray's reindexing of the traced flows' series onto every flow). "Live" is what the
app's server does: a ``LiveRun`` stepped
in slices of ``app_base.SLICE_S``, the app's views (``live_views``) updated at most every ``app_base.REDRAW_S``, their
models in a Bokeh Document whose every change is encoded as the PATCH-DOC message a Bokeh server sends. The two
alternate, ``--repeat`` times each, after an untimed warm-up of both (the kernels load, the first run compiles).
Printed per case: both times (median), their ratio, the rows and bytes the redraws sent, and the most points a line
held. ``--browser`` also times the lesson in the served Panel app in headless Chromium (``/usr/bin/chromium``), from
the click on Run to the status line's "done", and the same lesson in ``lesson_widget`` in JupyterLab, beside its
headless run.

    python benchmarks/bench_live.py [--repeat 3] [--cases lesson,gpt,moe] [--browser]
"""

import argparse
import statistics
import time

import numpy as np
from bokeh.document import Document
from bokeh.protocol import Protocol

from wormhole_lab.simulation import Simulation
from wormhole_lab.viz.app_base import REDRAW_S, SLICE_S
from wormhole_lab.viz.explore_app import Exploration, explorer_summary
from wormhole_lab.viz.live import LiveRun
from wormhole_lab.viz.live_views import ExplorerView, LessonView
from wormhole_lab.viz.teach_app import CCALesson, lesson_summary

PROTOCOL = Protocol()


def lesson_case():
    lesson = CCALesson(cca="HPCC", n=8, flow_mb=20)  # the lesson, in the lesson's default mode
    scenario = lesson.build()

    def views(run):
        view = LessonView(scenario, run.mode, lesson.theta)
        return view, view.layout, lambda: lesson_summary(lesson, run, view.feed, view.skips)

    return scenario, lesson.mode, views


def explorer_case(model: str, scale: float):
    def make():
        exploration = Exploration(model=model, size_scale=scale, audit=0)
        scenario = exploration.build()

        def views(run):
            view = ExplorerView(scenario, theta=exploration.theta)
            return view, view.memo_grid, lambda: explorer_summary(run, skips=view.skips)

        return scenario, "wormhole", views

    return make


CASES = {
    "lesson": ("lesson: HPCC 8-to-1 x 20 MB", lesson_case),
    "gpt": ("explorer: GPT-7B, 64 GPUs, x0.01", explorer_case("GPT-7B", 0.01)),
    "gpt1": ("explorer: GPT-7B, 64 GPUs, x1", explorer_case("GPT-7B", 1.0)),
    "moe": ("explorer: MoE-8x7B, 64 GPUs, x0.3", explorer_case("MoE-8x7B", 0.3)),
}


def headless(scenario, mode) -> float:
    t0 = time.perf_counter()
    LiveRun(scenario, mode=mode, history=False).run()
    return time.perf_counter() - t0


def dataset_run(scenario, mode) -> float:
    t0 = time.perf_counter()
    Simulation(scenario, mode=mode).run()
    return time.perf_counter() - t0


def live(scenario, mode, make_views) -> tuple[float, int, int, int]:
    """Seconds, rows sent, bytes of PATCH-DOC messages, most points a line held."""
    t0 = time.perf_counter()
    run = LiveRun(scenario, mode=mode, history=False)
    view, layout, summary = make_views(run)
    doc = Document()
    doc.add_root(layout.get_root(doc))
    sent_bytes = [0]

    def patched(event):
        msg = PROTOCOL.create("PATCH-DOC", [event])
        sent_bytes[0] += len(msg.header_json) + len(msg.content_json) + sum(len(b.to_bytes()) for b in msg.buffers)

    doc.on_change(patched)
    extra = getattr(view, "graph", None)
    if extra is not None:  # the explorer's graph and rate plot sit outside the memo grid: one document holds all
        doc.add_root(extra.pane.get_root(doc))
        doc.add_root(view.rate_pane.get_root(doc))
    last = 0.0
    while run.step(budget_s=SLICE_S):
        if time.perf_counter() - last > REDRAW_S:
            view.update(run)
            summary()
            last = time.perf_counter()
    view.update(run)
    summary()
    seconds = time.perf_counter() - t0
    tables = list(view.feed.tables.values())
    if hasattr(view, "memo_feed"):
        tables.append(view.memo_feed.table)
    return seconds, view.sent, sent_bytes[0], max(len(t) for t in tables)


def browser_lesson() -> tuple[float, float]:
    """(seconds from the click on Run to "done" in the served teach app, headless seconds of the same run)."""
    import socket

    import panel as pn
    from playwright.sync_api import expect, sync_playwright

    from wormhole_lab.viz.teach_app import TeachApp

    knobs = {"cca": "HPCC", "n": 8, "flow_mb": 20}
    lesson = CCALesson(**knobs)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = pn.serve(
        {"app": lambda: TeachApp(CCALesson(**knobs)).view()},
        port=port, address="127.0.0.1", threaded=True, show=False, websocket_origin=[f"127.0.0.1:{port}"],
    )  # fmt: skip
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip
    try:
        time.sleep(1.0)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=flags)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/app")
            page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0")
            t0 = time.perf_counter()
            page.locator(".bk-btn-primary").first.click()
            expect(page.locator(".run-status").first).to_contain_text("done", timeout=600_000)
            seconds = time.perf_counter() - t0
            browser.close()
    finally:
        server.stop()
    return seconds, headless(lesson.build(), lesson.mode)


def jupyterlab_lesson() -> float:
    """Seconds from the click on Run to "done" of the same lesson in ``lesson_widget`` in JupyterLab, driven the way
    ``tests/viz/test_jupyterlab.py`` drives it (its set-up is imported, not copied)."""
    import sys
    import tempfile
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "viz"))
    from conftest import CHROMIUM, CHROMIUM_FLAGS
    from test_jupyterlab import Browser, run_widget, start_jupyterlab

    source = (
        "from wormhole_lab.viz.notebook import lesson_widget\n"
        "from wormhole_lab.viz.teach_app import CCALesson\n"
        "lesson_widget(CCALesson(cca='HPCC', n=8, flow_mb=20))"
    )
    with tempfile.TemporaryDirectory() as folder:
        lab = start_jupyterlab(Path(folder))
        try:
            with sync_playwright() as p:
                browser = Browser(p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS))
                seconds = run_widget(browser.page, lab, "lesson.ipynb", source)
                browser.close()
        finally:
            lab.stop()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    import bokeh
    import numba
    import panel

    print(f"numba {numba.__version__}, numpy {np.__version__}, bokeh {bokeh.__version__}, panel {panel.__version__}")
    head = f"{'case':38} {'run()':>8} {'headless':>9} {'live':>9} {'live/headless':>14} {'rows sent':>10}"
    print(head + f" {'KB sent':>9} {'max pts':>8}")
    for key in args.cases.split(","):
        label, make = CASES[key]
        scenario, mode, views = make()
        headless(scenario, mode)
        live(scenario, mode, views)  # warm-up
        full = dataset_run(scenario, mode)
        heads, lives, stats = [], [], None
        for _ in range(args.repeat):
            heads.append(headless(scenario, mode))
            seconds, *stats = live(scenario, mode, views)
            lives.append(seconds)
        h, lv = statistics.median(heads), statistics.median(lives)
        rows, sent, points = stats
        line = f"{label:38} {full:7.2f}s {h:8.2f}s {lv:8.2f}s {lv / h:13.2f}x {rows:10,} {sent / 1e3:9,.0f}"
        print(line + f" {points:8,}")
    if args.browser:
        seconds, head = browser_lesson()
        widget = jupyterlab_lesson()
        target = f"target 2 x headless + 3 s = {2 * head + 3:.1f} s"
        print(f"browser: lesson, HPCC 8-to-1 x 20 MB, headless {head:.2f} s; {target}")
        print(f"  served teach app: {seconds:.1f} s from Run to done")
        print(f"  JupyterLab lesson_widget: {widget:.1f} s from Run to done")


if __name__ == "__main__":
    main()
