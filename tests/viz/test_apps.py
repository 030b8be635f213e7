"""The apps' logic without a browser: a run completes and fills the views; bad input becomes a message."""

from pathlib import Path

import holoviews as hv
import numpy as np

from wormhole_lab.viz.explore_app import MODEL, SIMAI, TOYS, Exploration, ExploreApp
from wormhole_lab.viz.jobs import model_scenario, simai_files
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
    assert run.done and "Run 1 done" in app.status.object
    assert "DCTCP θ bound" in app.summary.object and "Jain's fairness index" in app.summary.object
    assert app.plots.box.visible and not app.plots.note.visible and not app.alert.visible
    assert isinstance(app.plots.pane.object, hv.Layout)


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
    assert app.compare.box.visible and isinstance(app.compare.pane.object, hv.Bars)
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
    graph = app.graph.pane.object
    assert len(graph.nodes) > 0 and graph.opts.get().kwargs["title"].startswith("last partitions")
    curves = app.timeline.pane.object.traverse(lambda x: x, [hv.Curve])
    rates = [el for el in curves if type(el) is hv.Curve and el.vdims[0].name == "flow_rate"]  # not the band
    assert len(rates) == 12 and all(np.isfinite(c.dimension_values("flow_rate")).any() for c in rates)
    # the DB size never drops at the end: it is the DB's content, which closing the DB leaves as it was
    size = run.memo_table()["db_bytes"]
    assert size[-1] == size.max() > 0 and size[-1] == memo.stat().st_size
    rerun = app.start()
    assert rerun.memo_table()["db_bytes"][0] >= size[-1]


def test_model_presets_scale_bytes_and_compute():
    full = model_scenario("GPT-7B", 64, "hp", 1.0)
    small = model_scenario("GPT-7B", 64, "hp", 0.01)
    assert len(small.flows) == len(full.flows) == 512
    np.testing.assert_array_equal(small.flows.size, np.maximum(1000, (full.flows.size * 0.01).astype(np.int64)))
    gaps = full.flows.gap_ps > 0
    assert gaps.any()
    np.testing.assert_allclose(small.flows.gap_ps[gaps], full.flows.gap_ps[gaps] * 0.01, rtol=1e-6, atol=1)
    assert len(model_scenario("MoE-8x7B", 128).topology.hosts) == 128


def test_explorer_lists_a_workload_folder_and_takes_uploads(tmp_path):
    (tmp_path / "b_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "a_job.txt").write_text(SIMAI_HEADER + "0\n")
    (tmp_path / "LICENSE.txt").write_text("Apache License\n")
    assert list(simai_files(tmp_path)) == ["a_job.txt", "b_job.txt"] and simai_files(tmp_path / "missing") == {}
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
    assert len(w.output.outputs) == 1  # the last drawing only, set through the widget's state
    w.controls["link_gbps"].value = 10
    w.controls["cca"].value = "HPCC"
    w.button.click()
    assert "INT cannot encode" in w.message.value
    e = explorer_widget()
    e.controls["memo_path"].value = str(tmp_path / "memo.sqlite")
    e.controls["n"].value = 2
    e.button.click()
    assert e.run.done and e.run.skip_windows()
