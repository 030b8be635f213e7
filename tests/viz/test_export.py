"""Export writes valid PNG, PDF and SVG of the documented size, with labels that carry units; paper figures
come from real small runs."""

import re
import struct

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.scenarios.teaching import incast, repeated_incast
from wormhole_lab.viz import LiveRun, export, timeline
from wormhole_lab.viz.figures import (
    compare_modes,
    error_vs_speedup,
    fct_error_vs_scale,
    rate_timeline_figure,
    scaling_table,
    sensitivity_table,
    speedup_vs_scale,
    theta_l_sensitivity,
)
from wormhole_lab.viz.style import WIDTHS


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    memo = tmp_path_factory.mktemp("memo") / "memo.sqlite"
    return LiveRun(repeated_incast(n=2, rounds=2, memo=str(memo)), mode="wormhole").run()


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_png_pdf_svg_have_the_documented_size_and_unit_labels(run, tmp_path):
    fig = timeline(run, theta=0.05)
    png = export(fig, tmp_path / "rates.png")
    assert png_size(png) == (round(3.33 * 300), int(3.33 * 0.62 * 300))
    pdf = export(fig, tmp_path / "rates.pdf", width="double", height=2.5)
    text = pdf.read_bytes()
    assert text.startswith(b"%PDF-") and b"%%EOF" in text[-64:]
    box = [float(v) for v in re.search(rb"/MediaBox \[\s*([\d.\s]+)\]", text).group(1).split()]
    assert box[2:] == pytest.approx([WIDTHS["double"] * 72, 2.5 * 72])
    svg = export(fig, tmp_path / "rates.svg").read_text()
    assert re.search(r'<svg[^>]*width="239\.76pt"', svg)
    assert "time (µs)" in svg and "sending rate (Gb/s)" in svg


def test_export_rejects_unknown_formats_and_widths(run, tmp_path):
    with pytest.raises(InputError, match=r"\.png, \.pdf, \.svg"):
        export(timeline(run), tmp_path / "rates.jpg")
    with pytest.raises(InputError, match="unknown width"):
        export(timeline(run), tmp_path / "rates.png", width="triple")


def test_paper_figures_from_real_runs(run, tmp_path):
    table = scaling_table(lambda n: incast(n=n, cca="hp", size=2_000_000), [1, 2])
    assert table["speedup_events"][0] > 1 and all(e < 0.05 for e in table["fct_error_mean"])
    sens = sensitivity_table(incast(n=1, cca="hp", size=2_000_000), [0.05, 0.1], [25, 50])
    assert len(sens["theta"]) == 4
    figures = {
        "speedup.pdf": speedup_vs_scale(table, "senders"),
        "fct_error.svg": fct_error_vs_scale(table, "senders"),
        "theta_l.png": theta_l_sensitivity(sens),
        "fig1.pdf": rate_timeline_figure(run),
    }
    for name, fig in figures.items():
        path = export(fig, tmp_path / name, width="double" if name == "theta_l.png" else "single")
        assert path.stat().st_size > 1000
    svg = (tmp_path / "fct_error.svg").read_text()
    assert "FCT error (%)" in svg and "senders (count)" in svg
    labels = [t for t in rate_timeline_figure(run).traverse(lambda x: x.text, ["Text"]) if t]
    assert labels.count("memo") == run.flows.attrs["memo_hits"] and labels.count("skipped") == run.flows.attrs["skips"]


def test_error_against_speedup_labels_every_mode(tmp_path):
    scenario = incast(n=2, cca="hp", size=2_000_000)
    wormhole = compare_modes(scenario)
    flow = compare_modes(scenario, packet=wormhole["packet"], mode="flow")
    assert flow["flow"].attrs["mode"] == "flow" and flow["skips"] == 0
    assert flow["speedup_wall"] > 10 and flow["speedup_events"] > 100
    assert flow["fct_error_mean"] > wormhole["fct_error_mean"]  # flow mode leaves out the incast's queue
    table = {
        "workload": ["incast"] * 2,
        "label": ["Wormhole", "flow-level"],
        "speedup_wall": [wormhole["speedup_wall"], flow["speedup_wall"]],
        "fct_error_mean": [wormhole["fct_error_mean"], flow["fct_error_mean"]],
    }
    svg = export(error_vs_speedup(table), tmp_path / "frontier.svg").read_text()
    for text in ("Wormhole", "flow-level", "mean FCT error (%)", "speedup over packet mode"):
        assert text in svg
    exact = export(error_vs_speedup({**table, "fct_error_mean": [0.0, 0.1]}), tmp_path / "exact.svg").read_text()
    assert "Wormhole (exact)" in exact  # drawn at the floor of the log axis, and said so
    with pytest.raises(InputError, match="not negative"):
        error_vs_speedup({**table, "fct_error_mean": [-0.01, 0.1]})
