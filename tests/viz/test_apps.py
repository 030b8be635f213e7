"""The apps' logic without a browser: a run completes and fills the views; bad input becomes a message."""

from pathlib import Path

import holoviews as hv
import numpy as np

from wormhole_lab.job_results import job_summary
from wormhole_lab.viz.explore_app import BACKGROUND, MODEL, SIMAI, TOYS, TWO_JOBS, Exploration, ExploreApp
from wormhole_lab.viz.teach_app import CCALesson, TeachApp

SIMAI_HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\n"


def test_lesson_runs_in_a_notebook_and_changes_with_a_knob():
    a = CCALesson(cca="HPCC", n=2, flow_mb=0.3).run()
    b = CCALesson(cca="HPCC", n=3, flow_mb=0.3).run()
    assert a.flows.sizes["flow"] == 2 and b.flows.sizes["flow"] == 3
    assert CCALesson(cca="DCTCP", ai_mbps=300).build().config.dctcp_rate_ai_bps == 300_000_000


def test_teach_app_runs_without_a_server_and_summarises():
    app = TeachApp(CCALesson(cca="DCTCP", n=2, flow_mb=0.3))
    app.view()
    assert app.plots.note.visible and "appear when the run starts" in app.plots.note.object
    assert not app.plots.box.visible  # no empty axes before a run
    run = app.start()
    assert run.done and "Run 1 done" in app.status.object and "You waited" in app.status.object
    summary = app.summary.objects[0].object
    assert "DCTCP θ bound" in summary and "Jain's fairness index" in summary and "not reached yet" not in summary
    assert app.plots.box.visible and not app.plots.note.visible and not app.alert.visible
    view = app.views[0]
    assert {"rate", "window", "queue", "dctcp_alpha", "fairness", "steady"} <= set(view.plots)
    assert len(view.plots["rate"].source.data["time"]) == view.feed.samples > 0  # short run: nothing thinned


def test_the_default_lesson_fast_forwards_and_a_run_that_skips_nothing_says_why():
    app = TeachApp()
    run = app.start()
    skipped = sum(not w.memo for w in run.skip_windows())
    assert run.mode == "wormhole" and skipped > 0
    assert f"{skipped} fast-forwards" in app.summary.objects[0].object
    assert len(app.views[0].strips.final["fastforward"].data["x0"]) == skipped
    hpcc = TeachApp(CCALesson(cca="HPCC", n=4, flow_mb=1))
    hpcc.start()
    text = hpcc.summary.objects[0].object
    assert "0 fast-forwards" in text and "Nothing was fast-forwarded" in text and "DCTCP θ bound" not in text
    packet = TeachApp(CCALesson(mode="packet", flow_mb=0.3))
    packet.start()
    assert packet.views[0].strips is None  # no skip layers, no such legend entries, in packet mode
    assert not any("fast-forwarded" in str(i.label) for i in packet.views[0].plots["rate"].legend.items)


def test_two_ccas_run_side_by_side_on_one_time_axis():
    app = TeachApp(CCALesson(cca="DCTCP", compare="HPCC", n=2, flow_mb=0.3))
    app.start()
    runs = app.driver.runs
    assert [r.scenario.config.cca for r in runs] == ["dctcp", "hpcc"] and all(r.done for r in runs)
    np.testing.assert_array_equal(runs[0].scenario.flows.size, runs[1].scenario.flows.size)
    left, right = app.views
    assert left.plots["rate"].figure.x_range is right.plots["rate"].figure.x_range
    assert left.plots["rate"].figure.title.text.startswith("DCTCP:") and "hpcc_u" in right.plots
    assert [t.object.split("\n")[0] for t in app.summary.objects] == ["**DCTCP**", "**HPCC**"]


def test_teach_app_reports_an_impossible_combination():
    app = TeachApp(CCALesson(cca="DCQCN", kmin_kb=900, kmax_kb=100))
    assert app.start() is None
    assert app.alert.visible and "Kmin" in app.alert.object and "fix" in app.alert.object


def test_explorer_runs_compares_and_reports_a_broken_workload(tmp_path):
    app = ExploreApp(Exploration(workload=TOYS[0], n=2, memo_path=str(tmp_path / "memo.sqlite")))
    app.view()
    assert app.compare.panel.objects == [app.compare.box] and not app.compare.box.visible  # no empty frame
    run = app.start()
    assert run.done and "hit rate" in app.summary.object and "**Audit:**" in app.summary.object
    result = app.compare_with_packet()
    assert result["fct_error_mean"] < 0.05 and "Compared with packet mode" in app.status.object
    assert "**Measured against packet mode**" in app.summary.object and "fewer events" in app.summary.object
    assert app.compare.box.visible and isinstance(app.compare.content.object, hv.Bars)
    bad = tmp_path / "broken.txt"
    bad.write_text(SIMAI_HEADER + "not a row count\n")
    app.exploration.param.update(workload=SIMAI, simai_file=str(bad))
    assert app.start() is None
    assert app.alert.visible and "broken.txt:2" in app.alert.object


def test_explorer_runs_a_model_preset_by_default(tmp_path):
    memo = tmp_path / "memo.sqlite"
    app = ExploreApp(Exploration(memo_path=str(memo)))
    app.view()
    assert app.exploration.workload == MODEL and app.groups["model"].visible and not app.groups["simai"].visible
    slots = (app.graph, app.timeline, app.memo)
    assert all(s.note.visible and not s.box.visible for s in slots)
    run = app.start()
    assert run.done and "GPT-7B on 64 GPUs" in app.status.object and not app.alert.visible
    assert all(s.box.visible and not s.note.visible for s in slots)
    assert len(run.scenario.flows) == 512 and run.flows.attrs["memo_hits"] > 0
    views = app.views
    graph = views.graph
    assert len(graph.nodes.data["x"]) > 0 and graph.figure.title.text.startswith("last partitions")
    assert set(graph.nodes.data["marker"]) == {"circle", "square"}  # flows circles, ports squares
    rates = [c for c in views.rate.source.data if c.startswith("f")]
    assert len(rates) == 12 and all(np.isfinite(views.rate.source.data[c]).any() for c in rates)
    memo_rows = views.memo_source.data
    assert memo_rows["time"][0] == 0 and memo_rows["hits"][-1] == run.flows.attrs["memo_hits"]
    # the DB size never drops at the end: it is the DB's content, which closing the DB leaves as it was
    size = run.memo_table()["db_bytes"]
    assert size[-1] == size.max() > 0 and size[-1] == memo.stat().st_size
    rerun = app.start()
    assert rerun.memo_table()["db_bytes"][1] >= size[-1]  # kept for the session: the next run starts with it


def test_explorer_runs_two_jobs_colours_them_and_lists_their_slowdowns(tmp_path):
    e = Exploration(workload=TWO_JOBS, job_scale=0.001, memo_path=str(tmp_path / "memo.sqlite"))
    app, statuses = ExploreApp(e), []
    app.view()
    assert app.groups["jobs"].visible and app.groups["two"].visible and not app.groups["background"].visible
    assert not app.groups["model"].visible
    app.status.param.watch(lambda event: statuses.append(event.new), "object")
    run = app.start()
    assert run.done and not app.alert.visible and "interleaved" in run.scenario.name
    assert run.scenario.flows.meta["jobs"].names == ["a", "b"] and len(run.scenario.flows) == 256
    # between the last flow's end and the run's, the page says the alone runs are going on
    assert any("now running each job alone on the same GPUs (wormhole mode)" in s for s in statuses), statuses
    assert "done" in app.status.object
    rows = job_summary(run.flows)
    assert [(r["job"], r["kind"], r["iterations"]) for r in rows] == [("a", "training", 1), ("b", "training", 1)]
    for r, job in zip(rows, "ab", strict=True):
        alone = float(run.flows["job_alone_iteration_time"].sel(job=job)[0])
        assert r["alone_ps"] == alone and r["slowdown"] == float(run.flows["job_slowdown"].sel(job=job)) > 0.9
    summary = app.summary.object
    assert "| job | iterations | mean iteration time | alone | slowdown |" in summary
    assert summary.count("\n| a |") == summary.count("\n| b |") == 1 and "in wormhole mode (they took" in summary
    graph = app.views.graph  # the last partitions: flows in their job's colour
    assert {n for n, k in zip(graph.nodes.data["job"], graph.nodes.data["kind"], strict=True) if k == "flow"}
    assert [i.label["value"] for i in graph.legend.items[:2]] == ["job a", "job b"]
    e.param.update(workload=BACKGROUND, load=0.5)
    assert app.groups["background"].visible and not app.groups["two"].visible
    scenario = e.build()
    assert scenario.flows.meta["jobs"].names == ["job", "background"] and "50% load" in scenario.name


def test_explorer_lists_a_workload_folder_and_takes_uploads(tmp_path):
    (tmp_path / "b_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "a_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "LICENSE.txt").write_text("Apache License\n")
    app = ExploreApp(Exploration(simai_folder=str(tmp_path)))
    assert app.exploration.simai_file == str(tmp_path / "a_job.txt")
    assert list(app.exploration.param.simai_file.names) == ["a_job.txt", "b_job.txt"]
    app.upload.param.update(filename="mine.txt", value=(SIMAI_HEADER + "not a row count\n").encode())
    e = app.exploration
    assert e.workload == SIMAI and Path(e.simai_file).name == "mine.txt"
    assert list(e.param.simai_file.names) == ["a_job.txt", "b_job.txt", "mine.txt (uploaded)"]
    assert app.groups["simai"].visible and not app.groups["model"].visible
    assert app.start() is None and "mine.txt:2" in app.alert.object


def test_ipywidgets_controls_drive_the_same_objects(tmp_path):
    from wormhole_lab.viz.notebook import explorer_widget, lesson_widget

    w = lesson_widget()
    w.controls["cca"].value = "DCQCN"
    w.controls["n"].value = 2
    w.controls["flow_mb"].value = 0.2
    assert w.lesson.cca == "DCQCN" and w.lesson.n == 2
    w.button.click()
    assert w.run is not None and w.run.done and w.run.flows.sizes["flow"] == 2 and "done" in w.message.value
    assert len(w.output.outputs) == 1  # the views, shown once and updated in place
    w.controls["link_gbps"].value = 10
    w.controls["cca"].value = "HPCC"
    w.button.click()
    assert "INT cannot encode" in w.message.value
    e = explorer_widget()
    e.controls["memo_path"].value = str(tmp_path / "memo.sqlite")
    e.controls["n"].value = 2
    e.button.click()
    assert e.run.done and e.run.skip_windows() and e.button.description == "Run (Wormhole mode)"


def test_the_explorer_widget_says_like_the_page_that_each_job_runs_alone(tmp_path):
    from wormhole_lab.viz.notebook import explorer_widget

    e = Exploration(workload=TWO_JOBS, job_scale=0.001, memo_path=str(tmp_path / "memo.sqlite"))
    widget, messages = explorer_widget(e), []
    widget.message.observe(lambda change: messages.append(change["new"]), names="value")
    run = widget.start()
    assert run.done and run.finish_seconds > 0
    # between the last flow's end and the run's, the app's text (not only "running: … µs")
    alone = [m for m in messages if "now running each job alone on the same GPUs (wormhole mode)" in m]
    assert alone and alone[0].startswith("every flow completed by "), messages
    assert messages[-1].startswith("done"), messages


def test_a_first_run_says_in_the_page_and_the_widget_that_it_compiles(monkeypatch):
    from wormhole_lab import compile_notice
    from wormhole_lab.viz.notebook import lesson_widget

    cold = []
    asked = lambda mode="packet", cache_dir=None: cold.append(mode) or True  # noqa: E731
    monkeypatch.setattr(compile_notice, "needs_compile", asked)
    app, statuses = TeachApp(CCALesson(mode="packet", flow_mb=0.3)), []
    app.status.param.watch(lambda event: statuses.append(event.new), "object")
    app.start()
    assert statuses[0].startswith("First run on this machine: compiling the simulation engine for this machine")
    assert cold[0] == "packet-dctcp"  # the lesson's CCA: each has its own event loop
    widget, messages = lesson_widget(CCALesson(mode="packet", flow_mb=0.3)), []
    widget.message.observe(lambda change: messages.append(change["new"]), names="value")
    widget.start()
    assert any(m.startswith("First run on this machine: compiling") for m in messages)
    assert messages[-1].startswith("done")
