"""Both apps served on 127.0.0.1 and driven in headless Chromium: the page renders from the app's own server alone
(every request the page makes is recorded), a changed control re-runs the simulation and the plots get new data, a
model preset fills every view of the explorer, and a bad input shows a message while the server keeps serving.

Screenshots go to ``test-artifacts/`` (``WORMHOLE_TEST_ARTIFACTS`` overrides the folder)."""

from urllib.parse import urlsplit

import pytest

BOKEH_IDLE = "() => window.Bokeh !== undefined && Bokeh.documents.length > 0 && Bokeh.documents.every(d => d.is_idle)"

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

# Every ColumnDataSource that has a time column: rows and a checksum of its numbers. Changes when plots redraw
# with new data.
PLOT_DATA = """() => {
  let rows = 0, sum = 0, sources = 0;
  for (const doc of Bokeh.documents) {
    for (const m of doc.all_models) {
      const data = m.data;
      if (data === undefined || data === null || typeof data !== "object" || !("time" in data)) continue;
      sources += 1;
      const columns = data instanceof Map ? [...data.values()] : Object.values(data);
      for (const col of columns) {
        if (col === undefined || col === null || typeof col.length !== "number") continue;
        rows += col.length;
        for (let i = 0; i < col.length; i++) { const v = Number(col[i]); if (Number.isFinite(v)) sum += v; }
      }
    }
  }
  return {rows, sum, sources};
}"""


# Rows of the explorer's three views, told apart by their columns: graph nodes have a "kind", the timeline's rate
# lines a column per flow ("f<id>"), the memo panel the DB's size ("db_kb"). Only finite numbers count.
VIEW_ROWS = """() => {
  const rows = {graph: 0, rate: 0, db: 0};
  for (const doc of Bokeh.documents) {
    for (const m of doc.all_models) {
      const data = m.data;
      if (data === undefined || data === null || typeof data !== "object") continue;
      const keys = data instanceof Map ? [...data.keys()] : Object.keys(data);
      const get = k => (data instanceof Map ? data.get(k) : data[k]);
      const finite = col => col ? Array.from(col).filter(v => Number.isFinite(Number(v)) && v !== null).length : 0;
      if (get("kind")) rows.graph += get("kind").length;
      for (const k of keys) if (/^f[0-9]+$/.test(k)) rows.rate += finite(get(k));
      rows.db += finite(get("db_kb"));
    }
  }
  return rows;
}"""


def record_requests(page) -> list[str]:
    """Every URL the page requests from now on (documents, scripts, styles, fonts, images, websockets)."""
    urls = []
    page.on("request", lambda request: urls.append(request.url))
    page.on("websocket", lambda ws: urls.append(ws.url))
    return urls


def foreign(urls) -> list[str]:
    """The URLs that go anywhere but 127.0.0.1 (blob: and data: URLs are made in the page itself)."""
    return [u for u in urls if urlsplit(u).scheme not in ("blob", "data") and urlsplit(u).hostname != "127.0.0.1"]


def wait_idle(page, timeout=60_000):
    page.wait_for_function(BOKEH_IDLE, timeout=timeout)


def wait_status(page, text, timeout=90_000):
    expect(page.locator(".run-status").first).to_contain_text(text, timeout=timeout)


def plot_data(page):
    wait_idle(page)
    return page.evaluate(PLOT_DATA)


@pytest.mark.browser
def test_teach_app_runs_and_rerenders_when_a_control_changes(page, serve, artifacts):
    from wormhole_lab.viz.teach_app import CCALesson, TeachApp

    url = serve(lambda: TeachApp(CCALesson(cca="HPCC", n=2, flow_mb=0.5)).view())
    page.set_viewport_size({"width": 1400, "height": 1000})
    urls = record_requests(page)
    page.goto(url)
    wait_idle(page)
    expect(page.locator(".bk-btn-primary").first).to_contain_text("Run")
    expect(page.locator(".plot-placeholder").first).to_contain_text("appear when the run starts")
    assert plot_data(page)["sources"] == 0, "empty axes before a run"
    page.locator(".bk-btn-primary").first.click()
    wait_status(page, "Run 1 done")
    first = plot_data(page)
    assert first["sources"] > 0 and first["rows"] > 0
    expect(page.locator(".lesson-summary").first).to_contain_text("Jain's fairness index")
    page.screenshot(path=str(artifacts / "teach_run1.png"), full_page=True)

    page.locator("select").first.select_option("DCTCP")  # the first select is the CCA
    wait_idle(page)
    page.locator(".bk-btn-primary").first.click()
    wait_status(page, "Run 2 done")
    expect(page.locator(".run-status").first).to_contain_text("dctcp")
    second = plot_data(page)
    assert second["rows"] > 0 and second != first, "the plots did not get new data after the re-run"
    page.screenshot(path=str(artifacts / "teach_run2_dctcp.png"), full_page=True)
    assert len(urls) > 5 and not foreign(urls), foreign(urls)


@pytest.mark.browser
def test_teach_app_shows_an_impossible_combination_and_keeps_serving(page, serve, artifacts):
    from wormhole_lab.viz.teach_app import CCALesson, TeachApp

    url = serve(lambda: TeachApp(CCALesson(cca="HPCC", n=2, flow_mb=0.5, link_gbps=40)).view())
    page.goto(url)
    wait_idle(page)
    page.locator(".bk-btn-primary").first.click()
    expect(page.locator(".alert").first).to_contain_text("INT cannot encode a 40 Gb/s", timeout=30_000)
    page.screenshot(path=str(artifacts / "teach_bad_input.png"), full_page=True)
    page.goto(url)  # the server is still alive: a new session renders
    wait_idle(page)
    expect(page.locator(".bk-btn-primary").first).to_contain_text("Run")


@pytest.mark.browser
def test_explore_app_runs_a_model_preset_offline_and_reruns(page, serve, artifacts, tmp_path):
    from wormhole_lab.viz.explore_app import Exploration, ExploreApp

    url = serve(lambda: ExploreApp(Exploration(n=2)).view())
    page.set_viewport_size({"width": 1400, "height": 1200})
    urls = record_requests(page)
    page.goto(url)
    wait_idle(page)
    expect(page.locator(".plot-placeholder")).to_have_count(3)  # what will appear, instead of empty axes
    assert page.evaluate(VIEW_ROWS) == {"graph": 0, "rate": 0, "db": 0}
    page.get_by_role("button", name="Run in Wormhole mode").click()  # the default: GPT-7B on 64 GPUs
    wait_status(page, "Run 1 done", timeout=120_000)
    expect(page.locator(".run-status").first).to_contain_text("GPT-7B on 64 GPUs")
    expect(page.locator(".explore-summary").first).to_contain_text("hit rate")
    wait_idle(page)
    filled = f"() => {{ const r = ({VIEW_ROWS})(); return r.graph > 0 && r.rate > 0 && r.db > 0; }}"
    page.wait_for_function(filled, timeout=10_000)  # the last streamed rows may follow the status line
    rows = page.evaluate(VIEW_ROWS)
    assert rows["graph"] > 0 and rows["rate"] > 0 and rows["db"] > 0, rows
    page.screenshot(path=str(artifacts / "explore_model_preset.png"), full_page=True)
    first = plot_data(page)

    page.locator("select").first.select_option("N-to-1 incast")
    wait_idle(page)
    page.get_by_role("button", name="Run in Wormhole mode").click()
    wait_status(page, "Run 2 done")
    expect(page.locator(".run-status").first).to_contain_text("2-to-1 incast")
    second = plot_data(page)
    assert second["rows"] > 0 and second != first
    page.get_by_role("button", name="Compare with packet mode").click()
    wait_status(page, "Compared with packet mode")
    page.screenshot(path=str(artifacts / "explore_run2_compare.png"), full_page=True)

    page.locator("select").first.select_option("SimAI file")
    wait_idle(page)
    bad = tmp_path / "broken_workload.txt"
    bad.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\nnot a row count\n")
    page.locator("input[type=file]").first.set_input_files(str(bad))
    wait_idle(page)
    page.get_by_role("button", name="Run in Wormhole mode").click()
    expect(page.locator(".alert").first).to_contain_text("broken_workload.txt:2", timeout=30_000)
    page.screenshot(path=str(artifacts / "explore_bad_workload.png"), full_page=True)
    assert len(urls) > 5 and not foreign(urls), foreign(urls)
