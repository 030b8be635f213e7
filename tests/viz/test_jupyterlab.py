"""The notebooks and the ipywidgets views in a real JupyterLab, driven by headless Chromium, with no internet.

JupyterLab serves a temporary copy of notebooks/ on 127.0.0.1 (``start_jupyterlab`` below) with
``WORMHOLE_LAB_SCALE=smoke``. Every request the page makes to another host is refused and recorded, so a plot
that needs a CDN fails here. For each notebook: Run All Cells (the lab command), wait until every code cell ran
and the kernel is idle, then assert that no cell shows an error, that every HoloViews/Bokeh output drew a canvas
with pixels on it, and that the browser console has no errors. The ipywidgets views are checked the same way
from a one-cell notebook in a kernel that never loaded the plotting extension itself: press the widget's Run
button and wait for its "done" line. Screenshots go to the ``artifacts`` folder.

Runtime measured here (2026-12-07, 2 cores shared with other jobs), Numba's cache warm: opening a notebook ~5 s,
then 01 11 s, 02 25 s, 03 22 s, 04 29 s, 05 13 s in all (06, added later: 38 s in all, both cores busy with other
jobs); the views 40 s each while they fail (30 s of it the canvas wait); about 3.5 minutes for the module with
JupyterLab's start, before 06. With a cold cache (``WORMHOLE_LAB_CACHE_DIR``
empty) the first notebook compiles the engine: 01 and 02 took 176 s together.
"""

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest

# --- JupyterLab on 127.0.0.1 in a folder of its own, with every call out of it turned off ---------------------
# Its config, runtime, settings and workspace folders live under ``root/.jupyter-test``, so nothing of the user's
# Jupyter setup is read or written. The settings turn off what would reach the internet or get in the way:
# JupyterLab's news and update check (server side: ``news_url=None``, ``NeverCheckForUpdate``), the PyPI extension
# manager (``readonly``), and the notebook's windowing, so every output is laid out and drawn even when scrolled
# out of view. ``expose_app_in_browser`` gives the test ``window.jupyterapp`` to run lab commands.

#: user settings written before JupyterLab starts (plugin id -> settings)
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


@dataclass
class JupyterLab:
    url: str  #: base URL, e.g. http://127.0.0.1:8888
    token: str
    root: Path
    process: subprocess.Popen
    log: Path

    def lab_url(self, path: str) -> str:
        """URL that opens ``path`` (relative to the root folder) in JupyterLab, with a fresh workspace."""
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        package, name = plugin.split(":")
        path = settings_dir / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_jupyterlab(root: Path, env: dict[str, str] | None = None, timeout: float = 90) -> JupyterLab:
    """Start ``python -m jupyter lab`` serving ``root`` on 127.0.0.1 and wait until its API answers."""
    state = root / ".jupyter-test"
    folders = {name: state / name for name in ("config", "runtime", "settings", "workspaces", "ipython")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    _write_settings(folders["settings"])
    port, token = _free_port(), secrets.token_hex(16)
    environment = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(folders["config"]),
        "JUPYTER_RUNTIME_DIR": str(folders["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(folders["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(folders["workspaces"]),
        "IPYTHONDIR": str(folders["ipython"]),
        **(env or {}),
    }
    command = [
        sys.executable, "-m", "jupyter", "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--LabApp.expose_app_in_browser=True",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI and containers run as root; JupyterLab refuses that without it
    log = state / "jupyterlab.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=root, env=environment, stdout=out, stderr=subprocess.STDOUT)
    lab = JupyterLab(f"http://127.0.0.1:{port}", token, root, process, log)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={token}", timeout=2) as response:
                if response.status == 200:
                    return lab
        except OSError:
            time.sleep(0.3)
    lab.stop()
    raise RuntimeError(f"JupyterLab did not answer on {lab.url} within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


# --- the test ------------------------------------------------------------------------------------------------

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
HV_EXEC = "application/vnd.holoviews_exec.v0+json"
LOCAL_HOSTS = {"127.0.0.1"}
RUN_TIMEOUT_S = 300  # per notebook; notebook 04 takes ~40 s at smoke scale, plus a cold Numba compile

# the notebook's state, from window.jupyterapp (LabApp.expose_app_in_browser)
NOTEBOOK_STATE = """() => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext || !w.context) return null;
  const session = w.sessionContext.session;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  cells.forEach((c, i) => c.model.outputs.toJSON().forEach(o => {
    if (o.output_type === 'error') errors.push({cell: i, ename: o.ename, evalue: o.evalue});
  }));
  return {
    path: w.context.path,
    ready: w.context.isReady && w.sessionContext.isReady,
    kernel: session && session.kernel ? session.kernel.status : null,
    code: cells.length,
    executed: cells.filter(c => c.model.executionCount !== null).length,
    running: cells.filter(c => c.model.executionState === 'running' || c.promptNode.textContent.includes('*')).length,
    errors,
  };
}"""

# [cell index, output index] of every HoloViews/Bokeh plot output: its mimebundle carries HoloViews' exec MIME type
# and a text/plain repr (the extension's own exec output, Panel's invisible browser-info model, has no text/plain)
HV_OUTPUTS = """(mime) => {
  const w = window.jupyterapp.shell.currentWidget;
  const found = [];
  w.content.widgets.forEach((c, i) => {
    if (c.model.type !== 'code') return;
    c.model.outputs.toJSON().forEach((o, k) => {
      if (o.data && mime in o.data && 'text/plain' in o.data) found.push([i, k]);
    });
  });
  return found;
}"""

# pixel statistics of every canvas under a node, through Bokeh's shadow roots: size, opaque pixels, and pixels
# that differ from the top-left one (a blank canvas has none)
CANVAS_STATS = """(node) => {
  const canvases = [];
  const walk = (n) => {
    if (n.tagName === 'CANVAS') canvases.push(n);
    if (n.shadowRoot) for (const child of n.shadowRoot.children) walk(child);
    for (const child of n.children) walk(child);
  };
  walk(node);
  return canvases.map(c => {
    const w = c.width, h = c.height;
    if (!w || !h) return {w, h, opaque: 0, differ: 0};
    const copy = document.createElement('canvas');
    copy.width = w; copy.height = h;
    const ctx = copy.getContext('2d');
    ctx.drawImage(c, 0, 0);
    const d = ctx.getImageData(0, 0, w, h).data;
    let opaque = 0, differ = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0) opaque++;
      if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2] || d[i + 3] !== d[3]) differ++;
    }
    return {w, h, opaque, differ};
  });
}"""

OUTPUT_NODE = "([i, k]) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.widgets[k].node"
CELL_OUTPUT_NODE = "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.node"


def drawn(stats: list[dict]) -> bool:
    """At least one canvas with pixels on it that are not all the same."""
    return any(s["opaque"] > 0 and s["differ"] > 0 for s in stats)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a temporary copy of notebooks/ at smoke scale."""
    pytest.importorskip("jupyterlab", reason="pip install jupyterlab (in the test extras)")
    root = tmp_path_factory.mktemp("jupyterlab")
    shutil.copytree(NOTEBOOKS, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shared = NOTEBOOKS.parents[1] / "shared"  # notebook 05 reads ../shared/workloads/simai from the repository root
    if shared.is_dir() and not (root.parent / "shared").exists():
        (root.parent / "shared").symlink_to(shared)
    server = start_jupyterlab(root, env={"WORMHOLE_LAB_SCALE": "smoke"})
    yield server
    server.stop()


class Browser:
    """One Chromium page that refuses and records every request not to 127.0.0.1, and records console errors."""

    def __init__(self, browser):
        # tall enough that a notebook's biggest output (a CCA's six plots, ~1300 px) fits in one screenshot
        self.context = browser.new_context(viewport={"width": 1400, "height": 2000})
        self.foreign: list[str] = []
        self.console_errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console_errors.append(f"page error: {exc}"))
        self.page.on("websocket", self._websocket)

    def _route(self, route):
        url = route.request.url
        if urlparse(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()

    def _websocket(self, ws):
        if urlparse(ws.url).hostname not in LOCAL_HOSTS:
            self.foreign.append(ws.url)

    def _console(self, message):
        if message.type == "error":
            self.console_errors.append(f"{message.text} ({message.location.get('url', '')})")

    def close(self):
        try:  # end the notebook's kernel: each holds the engine and HoloViews, and the next test starts its own
            self.page.evaluate("() => window.jupyterapp && window.jupyterapp.serviceManager.sessions.shutdownAll()")
        except Exception:  # noqa: BLE001  (the page may be gone; the server's end stops its kernels anyway)
            pass
        self.context.close()


@pytest.fixture
def chromium(browser):
    b = Browser(browser)
    yield b
    b.close()


def open_notebook(page, lab, path: str) -> None:
    page.goto(lab.lab_url(path))
    page.wait_for_function(
        """(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                      return w && w.context && w.context.path === path && w.context.isReady
                             && w.sessionContext.isReady && w.sessionContext.session
                             && w.sessionContext.session.kernel
                             && w.sessionContext.session.kernel.status === 'idle'; }""",
        arg=path,
        timeout=120_000,
    )


def wait_until_run(page, timeout_s: float) -> dict:
    """Poll until every code cell ran (or one failed) and the kernel stayed idle for 1 s; return the state."""
    deadline, idle_since = time.time() + timeout_s, None
    state = None
    while time.time() < deadline:
        state = page.evaluate(NOTEBOOK_STATE)
        finished = state["executed"] == state["code"] or state["errors"]
        if state["kernel"] == "idle" and state["running"] == 0 and finished:
            idle_since = idle_since or time.time()
            if time.time() - idle_since > 1.0:
                return state
        else:
            idle_since = None
        time.sleep(0.5)
    raise AssertionError(f"the notebook did not finish in {timeout_s:.0f} s: {state}")


def wait_drawn(page, nodes: list, timeout_s: float = 30) -> list[list[dict]]:
    """Canvas statistics of each node, polled until every node has a drawn canvas (or the time is up)."""
    deadline = time.time() + timeout_s
    while True:
        stats = [page.evaluate(CANVAS_STATS, node) for node in nodes]
        if all(drawn(s) for s in stats) or time.time() > deadline:
            return stats
        for node, s in zip(nodes, stats, strict=True):
            if not drawn(s):
                node.scroll_into_view_if_needed()
        time.sleep(0.5)


def assert_clean(chromium) -> None:
    assert not chromium.foreign, f"requests to other hosts (refused): {sorted(set(chromium.foreign))}"
    assert not chromium.console_errors, "browser console errors:\n" + "\n".join(chromium.console_errors)


@pytest.mark.browser
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_and_draws_in_jupyterlab(path, lab, chromium, artifacts):
    page = chromium.page
    name = f"notebooks/{path.name}"
    t0 = time.perf_counter()
    open_notebook(page, lab, name)
    t_open = time.perf_counter() - t0
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    state = wait_until_run(page, RUN_TIMEOUT_S)
    t_run = time.perf_counter() - t0 - t_open
    assert not state["errors"], f"{path.name}: cells failed: {state['errors']}"
    assert state["executed"] == state["code"], f"{path.name}: not every cell ran: {state}"

    where = page.evaluate(HV_OUTPUTS, HV_EXEC)
    nodes = [page.evaluate_handle(OUTPUT_NODE, ik).as_element() for ik in where]
    stats = wait_drawn(page, nodes)
    for n, (ik, node) in enumerate(zip(where, nodes, strict=True)):
        node.scroll_into_view_if_needed()
        node.screenshot(path=artifacts / f"jupyterlab_{path.stem}_plot{n}_cell{ik[0]}.png")
    page.screenshot(path=artifacts / f"jupyterlab_{path.stem}.png")
    blank = [(ik, s) for ik, s in zip(where, stats, strict=True) if not drawn(s)]
    assert not blank, f"{path.name}: HoloViews outputs with no drawn canvas ([cell, output], canvases): {blank}"
    assert_clean(chromium)
    print(
        f"{path.name}: opened in {t_open:.1f} s, ran in {t_run:.1f} s, {len(where)} HoloViews outputs drawn, "
        f"{time.perf_counter() - t0:.1f} s in all"
    )


def test_notebook_extension_inlines_everything_once():
    """No output of the extension or of a plot links a CDN, and a second call publishes nothing (no browser)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "from wormhole_lab.viz.offline import notebook_extension\nnotebook_extension()",
        "notebook_extension()",
        "import holoviews as hv\nimport panel as pn\npn.Column(pn.pane.Markdown('**a**'), hv.Curve([1, 3, 2]))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    first, second, plot = (c.outputs for c in nb.cells)
    text = json.dumps([first, plot])
    for cdn in ("cdn.holoviz.org", "cdn.bokeh.org", "unpkg.com"):
        assert f"https://{cdn}/" not in text, f"an output links {cdn}"
    assert len(json.dumps(first)) > 1_000_000, "the JS bundles are not inlined"  # bokeh + Panel: ~6 MB
    assert second == [], "a second call published the extension again"
    assert any(HV_EXEC in o.get("data", {}) for o in plot)


def _scratch_notebook(root: Path, name: str, source: str) -> str:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "scratch", "metadata": {}, "outputs": [],
                   "source": source}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    (root / name).write_text(json.dumps(nb))
    return name


# the latest time (µs) in any ColumnDataSource of the page's Bokeh documents
LAST_TIME = """() => {
  let last = 0;
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    const data = m.data;
    if (!data || typeof data !== "object") continue;
    const t = data instanceof Map ? data.get("time") : data["time"];
    if (t) for (const v of t) if (Number.isFinite(v) && v > last) last = v;
  }
  return last;
}"""


def run_widget(page, lab, name: str, source: str, timeout_s: float = RUN_TIMEOUT_S, screenshot=None) -> float:
    """Open a one-cell notebook ``name`` holding ``source`` (which shows a widget), run it, press the widget's Run
    button and wait for its "done" line; returns the seconds from the click to "done". Also used by
    ``docs/figures/make_jupyterlab_screenshot.py`` and ``benchmarks/bench_live.py --jupyterlab``."""
    _scratch_notebook(lab.root, name, source)
    open_notebook(page, lab, name)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    state = wait_until_run(page, 120)
    assert not state["errors"], f"{name}: the cell failed: {state['errors']}"
    widget = page.locator(".jp-OutputArea-output .jupyter-widgets").first
    widget.get_by_role("button", name=re.compile(r"^Run")).click()
    t0 = time.perf_counter()
    try:
        widget.get_by_text(re.compile(r"^\s*done")).first.wait_for(timeout=timeout_s * 1000)
    finally:
        if screenshot is not None:
            page.screenshot(path=screenshot)
    return time.perf_counter() - t0


@pytest.mark.browser
@pytest.mark.parametrize("view", ["lesson_widget", "explorer_widget"])
def test_ipywidgets_view_runs_and_draws_in_jupyterlab(view, lab, chromium, artifacts):
    """The view's own Run button, in a kernel that never called hv.extension or notebook_extension itself."""
    page = chromium.page
    source = f"from wormhole_lab.viz.notebook import {view}\nw = {view}()\nw"
    t_run = run_widget(page, lab, f"scratch_{view}.ipynb", source, screenshot=artifacts / f"jupyterlab_{view}.png")
    node = page.evaluate_handle(CELL_OUTPUT_NODE, 0).as_element()
    stats = wait_drawn(page, [node])[0]
    node.screenshot(path=artifacts / f"jupyterlab_{view}_output.png")
    assert drawn(stats), f"{view}: no canvas with pixels in the widget's output: {stats}"
    assert_clean(chromium)
    # the last redraw reached the page: its plots hold samples up to the end the "done" line gives
    simulated = float(re.search(r"([\d.]+) µs simulated", page.locator(".jupyter-widgets").first.inner_text())[1])
    page.wait_for_function(f"() => ({LAST_TIME})() >= {0.9 * simulated}", timeout=10_000)
    print(f"{view}: ran and drew in {t_run:.1f} s")
