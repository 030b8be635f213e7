"""The apps' logic without a browser: a run completes and fills the views; bad input becomes a message."""

from wormhole_lab.viz.explore_app import Exploration, ExploreApp
from wormhole_lab.viz.teach_app import CCALesson, TeachApp


def test_lesson_runs_in_a_notebook_and_changes_with_a_knob():
    a = CCALesson(cca="HPCC", n=2, flow_mb=0.3).run()
    b = CCALesson(cca="HPCC", n=3, flow_mb=0.3).run()
    assert a.flows.sizes["flow"] == 2 and b.flows.sizes["flow"] == 3
    assert CCALesson(cca="DCTCP", ai_mbps=300).build().config.dctcp_rate_ai_bps == 300_000_000


def test_teach_app_runs_without_a_server_and_summarises():
    app = TeachApp(CCALesson(cca="DCTCP", n=2, flow_mb=0.3))
    app.view()
    run = app.start()
    assert run.done and "Run 1 done" in app.status.object
    assert "DCTCP θ bound" in app.summary.object and "Jain's fairness index" in app.summary.object
    assert app.plots.object is not None and not app.alert.visible


def test_teach_app_reports_an_impossible_combination():
    app = TeachApp(CCALesson(cca="DCQCN", kmin_kb=900, kmax_kb=100))
    assert app.start() is None
    assert app.alert.visible and "Kmin" in app.alert.object and "fix" in app.alert.object


def test_explorer_runs_compares_and_reports_a_broken_workload(tmp_path):
    app = ExploreApp(Exploration(n=2, memo_path=str(tmp_path / "memo.sqlite")))
    app.view()
    run = app.start()
    assert run.done and "hit rate" in app.summary.object
    result = app.compare_with_packet()
    assert result["fct_error_mean"] < 0.05 and "Compared with packet mode" in app.status.object
    bad = tmp_path / "broken.txt"
    bad.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8\nnot a row count\n")
    app.exploration.param.update(workload="SimAI file", simai_path=str(bad))
    assert app.start() is None
    assert app.alert.visible and "broken.txt:2" in app.alert.object


def test_ipywidgets_controls_drive_the_same_objects(tmp_path):
    from wormhole_lab.viz.notebook import explorer_widget, lesson_widget

    w = lesson_widget()
    w.controls["cca"].value = "DCQCN"
    w.controls["n"].value = 2
    w.controls["flow_mb"].value = 0.2
    assert w.lesson.cca == "DCQCN" and w.lesson.n == 2
    w.button.click()
    assert w.run is not None and w.run.done and w.run.flows.sizes["flow"] == 2 and "done" in w.message.value
    w.controls["link_gbps"].value = 10
    w.controls["cca"].value = "HPCC"
    w.button.click()
    assert "INT cannot encode" in w.message.value
    e = explorer_widget()
    e.controls["memo_path"].value = str(tmp_path / "memo.sqlite")
    e.controls["n"].value = 2
    e.button.click()
    assert e.run.done and e.run.skip_windows()
