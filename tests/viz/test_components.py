"""Components render from real small runs and show what they claim (skips, memo statistics, partitions)."""

import sys
from dataclasses import replace

import holoviews as hv
import numpy as np
import pytest
from bokeh.models import Legend, Plot

from wormhole_lab.engine.presets import preset
from wormhole_lab.scenarios import fat_tree_permutation
from wormhole_lab.scenarios.teaching import (
    LIVE_TELEMETRY,
    incast,
    repeated_incast,
)
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import star
from wormhole_lab.viz import LiveRun, cca_plots, flow_states, memo_panel, partition_graph, timeline
from wormhole_lab.viz.analysis import jain_index, steady_band, steady_flags, theta_bound
from wormhole_lab.viz.components import FRAME_WIDTH, TITLE_CHARS
from wormhole_lab.viz.style import EDGE_COLORS
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.settings import WormholeConfig
from wormhole_lab.wormhole.steady import dctcp_theta_bound


@pytest.fixture(scope="module")
def memo_run(tmp_path_factory):
    """Three rounds of a 3-to-1 HPCC incast in Wormhole mode with a fresh memo DB: fast-forwards and memo hits."""
    memo = tmp_path_factory.mktemp("memo") / "memo.sqlite"
    return LiveRun(repeated_incast(n=3, rounds=3, memo=str(memo)), mode="wormhole").run()


def _elements(obj, kind):
    return [el for el in obj.traverse(lambda x: x, [kind])]


@pytest.fixture(scope="module")
def packet_run():
    """A 2-to-1 HPCC incast in packet mode: no fast-forwards, memo hits or audits can happen."""
    return LiveRun(incast(n=2, cca="hp", size=300_000)).run()


def _figures(obj) -> list:
    """The bokeh figures ``obj`` renders to, in layout order."""
    root = hv.render(obj, backend="bokeh")
    return sorted(root.select({"type": Plot}), key=lambda f: str(f.id)) if not isinstance(root, Plot) else [root]


def _legend_labels(fig) -> list[str]:
    return [item.label.value for legend in fig.select({"type": Legend}) for item in legend.items]


def test_skipped_windows_match_the_fast_forward_records(memo_run):
    windows = memo_run.skip_windows()
    attrs = memo_run.flows.attrs
    assert sum(not w.memo for w in windows) == attrs["skips"] > 0
    assert sum(w.memo for w in windows) == attrs["memo_hits"] > 0
    coverage = memo_run.skip_coverage()
    assert coverage["complete"], (coverage["recorded_ps"], coverage["controller_ps"])
    # per flow, the recorded windows add up to the run's own fast-forward + memo time shares
    fct = memo_run.flows["fct"].values
    shares = memo_run.flows["time_fastforward_fraction"].values + memo_run.flows["time_memo_fraction"].values
    np.testing.assert_allclose(coverage["recorded_ps"] / fct, shares, rtol=1e-9)
    # and the timeline draws exactly these windows, in us
    spans = _elements(timeline(memo_run, theta=0.05), hv.VSpans)
    drawn = np.array(sorted(tuple(row) for el in spans for row in el.array().tolist()))
    expected = np.array(sorted((w.start_ps / 1e6, w.end_ps / 1e6) for w in windows))
    assert drawn.shape == expected.shape == (len(windows), 2)
    np.testing.assert_allclose(drawn, expected, rtol=1e-12)
    memo_spans = [el for el in spans if el.label == "memo hit"][0]
    assert len(memo_spans) == attrs["memo_hits"]


def test_the_timeline_outlines_the_audited_stretches(tmp_path):
    scenario = repeated_incast(n=3, rounds=3, memo=str(tmp_path / "memo.sqlite"))
    run = LiveRun(replace(scenario, wormhole=replace(scenario.wormhole, audit=2)), mode="wormhole").run()
    audited = run.audit_windows()
    assert (
        len(audited)
        == run.flows.sizes["audit"]
        == run.flows.attrs["audit_fastforwards"] + run.flows.attrs["audit_memo_hits"]
        > 0
    )
    spans = [el for el in _elements(timeline(run, theta=0.05), hv.VSpans) if el.label == "audited"][0]
    expected = sorted((w.start_ps / 1e6, w.end_ps / 1e6) for w in audited)
    np.testing.assert_allclose(sorted(tuple(r) for r in spans.array().tolist()), expected, rtol=1e-12)


def test_memo_panel_hit_rate_matches_the_memo_statistics(memo_run):
    attrs = memo_run.flows.attrs
    table = memo_run.memo_table()
    assert table["lookups"][-1] == attrs["memo_lookups"] and table["hits"][-1] == attrs["memo_hits"]
    panel = memo_panel(memo_run)
    rate_curve = [el for el in _elements(panel, hv.Curve) if el.vdims[0].name == "hit_rate"][0]
    assert rate_curve.dimension_values("hit_rate")[-1] == pytest.approx(attrs["memo_hit_rate"])
    events = {el.label: el for el in _elements(panel, hv.Curve) if el.vdims[0].name == "events"}
    assert events["executed"].dimension_values("events")[-1] == attrs["events_executed"]
    assert events["skipped (estimate)"].dimension_values("events")[-1] == pytest.approx(
        attrs["events_skipped_estimate"]
    )
    assert table["db_bytes"].max() > 0
    hv.render(panel, backend="bokeh")


def test_partition_graph_follows_the_live_partitions(tmp_path):
    run = LiveRun(repeated_incast(n=3, rounds=2, memo=str(tmp_path / "m.sqlite")), mode="wormhole")
    seen_states = set()
    graphs = 0
    while run.step(max_chunks=2):
        parts = run.controller.partitions.flows
        graph = partition_graph(run)
        nodes = graph.nodes
        flows = nodes.select(kind="flow")
        assert sorted(flows.dimension_values("label")) == sorted(f"flow {f}" for fs in parts.values() for f in fs)
        states = flow_states(run)
        for label, state in zip(flows.dimension_values("label"), flows.dimension_values("state"), strict=True):
            assert state == states[int(label.split()[1])]
            seen_states.add(state)
        title = graph.opts.get().kwargs["title"].replace("\n", " ")  # bokeh's title is wrapped to fit
        assert title.startswith(f"partitions: {len(parts)}" if parts else "partitions: no")
        graphs += 1
    assert graphs > 5 and {"packet-level", "fast-forwarded"} <= seen_states
    hv.render(partition_graph(run), backend="bokeh")  # finished: shows the last partitions seen


def test_partition_graph_of_800_nodes_needs_no_scipy_and_aggregates(monkeypatch):
    """networkx's spring layout imports scipy from 500 nodes on; scipy is not a dependency."""
    monkeypatch.setitem(sys.modules, "scipy", None)  # any "import scipy" now raises ImportError
    scenario = replace(fat_tree_permutation(k=8), telemetry=LIVE_TELEMETRY, wormhole=WormholeConfig(memo=False))
    run = LiveRun(scenario, mode="wormhole")
    run.step(max_chunks=1)
    active = sorted(f for fs in run.partitions().values() for f in fs)
    assert len(active) == 128
    detail = partition_graph(run, max_nodes=10**6)
    flows = detail.nodes.select(kind="flow")
    assert len(detail.nodes) > 500 and sorted(int(x.split()[1]) for x in flows.dimension_values("label")) == active
    assert np.isfinite(detail.nodes.dimension_values("x")).all() and len(detail) > len(detail.nodes)
    hv.render(detail, backend="bokeh")
    overview = partition_graph(run)  # over DETAIL_NODES: one circle per partition, its flows counted in the label
    assert set(overview.nodes.dimension_values("kind")) == {"partition"} and len(overview) == 0
    assert len(overview.nodes) == len(run.partitions())
    counted = sum(int(label.split(": ")[1].split()[0]) for label in overview.nodes.dimension_values("label"))
    assert counted == len(active) and "a circle per partition" in overview.opts.get().kwargs["title"].replace("\n", " ")
    hv.render(overview, backend="bokeh")


@pytest.mark.parametrize(
    "cca, state", [("dcqcn", "dcqcn_alpha"), ("hp", "hpcc_u"), ("timely", "timely_rtt"), ("dctcp", "dctcp_alpha")]
)
def test_cca_plots_show_rate_window_queue_and_the_cca_state(cca, state):
    run = LiveRun(incast(n=2, cca=cca, size=300_000)).run()
    layout = cca_plots(run)
    names = {el.vdims[0].name for el in _elements(layout, hv.Curve)}
    assert {"flow_rate", "port_queue", state, "fairness", "steady"} <= names
    assert {"flow_window", "flow_inflight"} & names
    curve = [el for el in _elements(layout, hv.Curve) if el.vdims[0].name == state][0]
    assert np.isfinite(curve.dimension_values(state)).any()
    hv.render(layout, backend="bokeh")


def test_cca_plots_render_before_the_first_chunk():
    run = LiveRun(incast(n=2, cca="hp", size=300_000))
    hv.render(cca_plots(run), backend="bokeh")
    hv.render(timeline(run), backend="bokeh")


def test_steady_detector_and_band_follow_the_kernel_criterion():
    rate = np.full((200, 2), 50.0)
    rate[:, 1] += np.where(np.arange(200) % 2, 4.0, -4.0)  # +-8 %: above theta = 0.05
    rate[:20, 0] = np.nan
    flags = steady_flags(rate, stride=1, window=50, theta=0.05)
    assert not flags[:69, 0].any() and flags[69:, 0].all()
    assert not flags[:, 1].any()
    lo, hi = steady_band(rate[:, 0], 1, 50, 0.05)
    assert np.isnan(lo[68]) and lo[100] == pytest.approx(50 * 0.975) and hi[100] == pytest.approx(50 * 1.025)
    assert jain_index([1, 1, 1]) == pytest.approx(1) and jain_index([1, 0, np.nan]) == pytest.approx(1)
    assert jain_index([3, 1]) == pytest.approx(16 / 20)
    assert theta_bound(4, 100e9, 8e-6) == dctcp_theta_bound(4, 100e9, 8e-6)


# --- the static components' layout: legends beside the data, titles whole, colours and shapes that mean one thing


def test_legends_sit_beside_the_plots_not_over_the_data(memo_run, packet_run):
    figures = _figures(cca_plots(packet_run)) + _figures(memo_panel(memo_run)) + _figures(timeline(memo_run))
    with_legend = [f for f in figures if f.select({"type": Legend})]
    assert len(with_legend) >= 6
    for fig in with_legend:
        assert list(fig.select({"type": Legend})) == [r for r in fig.right if isinstance(r, Legend)], fig.title.text
        assert not [r for r in fig.center if isinstance(r, Legend)], f"legend over the data in {fig.title.text!r}"
        # the frame keeps its width and the legend adds to the plot's, instead of squeezing the data
        assert fig.frame_width == FRAME_WIDTH and fig.width is None, fig.title.text


def test_titles_are_whole_and_wrapped_to_fit(memo_run, packet_run):
    long = "repeated incast: sending rate of every flow, with skips"
    figures = _figures(timeline(memo_run, title=long)) + _figures(cca_plots(packet_run))
    titles = [f.title.text for f in figures]
    assert long.replace(" ", "") == titles[0].replace("\n", "").replace(" ", "")  # all of it, in lines
    for title in titles:
        assert all(len(line) <= TITLE_CHARS for line in title.split("\n")), title
    assert "steady detector: flows steady (θ=0.05)" in [t.replace("\n", " ") for t in titles]
    # the matplotlib export keeps one line
    assert timeline(memo_run, title=long).opts.get(backend="matplotlib").kwargs["title"] == long


def test_partition_graph_edges_avoid_the_state_colours_and_ports_are_squares(memo_run):
    reserved = {"#56B4E9", "#0072B2", "#E69F00", "#D55E00"}  # fast-forwarded, blue, memo hit, audited
    assert not reserved & {c.upper() for c in EDGE_COLORS}
    flows = make_flows([0, 2, 4], [1, 3, 5], [2_000_000] * 3, 0)  # three pairs: three partitions
    scenario = Scenario(star(6), flows, preset("dctcp"), name="pairs", telemetry=LIVE_TELEMETRY)
    run = LiveRun(replace(scenario, wormhole=WormholeConfig(memo=False)), mode="wormhole")
    run.step(max_chunks=1)
    graph = partition_graph(run)
    assert len(run.partitions()) == 3
    edge_colors = {c.upper() for c in graph.dimension_values("edge_color")}
    assert len(edge_colors) == 3 and not edge_colors & reserved
    nodes = graph.nodes
    markers = dict(zip(nodes.dimension_values("kind"), nodes.dimension_values("marker"), strict=True))
    assert markers == {"flow": "circle", "port": "square"}
    assert set(nodes.select(kind="port").dimension_values("color")) == {"#FFFFFF"}
    glyph = [r for r in _figures(graph)[0].renderers if hasattr(r, "node_renderer")][0].node_renderer
    assert glyph.glyph.marker.field in glyph.data_source.data
    drawn = dict(zip(glyph.data_source.data["kind"], glyph.data_source.data[glyph.glyph.marker.field], strict=True))
    assert drawn == {"flow": "circle", "port": "square"}


def test_memo_panel_time_axis_starts_at_zero_like_the_timeline(memo_run):
    panel = memo_panel(memo_run)
    for curve in _elements(panel, hv.Curve):
        assert curve.dimension_values("time")[0] == 0, curve.label
    counts = {el.label: el for el in _elements(panel, hv.Curve) if el.vdims[0].name == "count"}
    assert all(c.dimension_values("count")[0] == 0 for c in counts.values())
    # alone, and beside the timeline (one shared time axis, which the shaded spans used to pad below 0)
    for obj in (panel, timeline(memo_run), (timeline(memo_run, theta=0.05) + memo_panel(memo_run)).cols(2)):
        for fig in _figures(obj):
            assert fig.x_range.start == 0, fig.title.text


def test_packet_mode_timeline_lists_no_skip_layers(memo_run, packet_run):
    skip_labels = {"fast-forwarded", "memo hit", "audited"}
    for fig in _figures(timeline(packet_run, theta=0.05)) + _figures(cca_plots(packet_run)):
        assert not skip_labels & set(_legend_labels(fig)), fig.title.text
    assert not [el for el in _elements(timeline(packet_run), hv.VSpans)]
    # a Wormhole run with the memo on lists what it can have, audit only when the audit is on
    labels = set(_legend_labels(_figures(timeline(memo_run))[0]))
    assert {"fast-forwarded", "memo hit"} <= labels and "audited" not in labels


def test_the_steady_detector_has_its_own_zero_to_one_plot(packet_run):
    layout = cca_plots(packet_run)
    holders = {}
    for item in layout:
        for el in _elements(item, hv.Curve):
            holders.setdefault(el.vdims[0].name, []).append(item)
    assert len(holders["steady"]) == len(holders["fairness"]) == 1
    assert holders["steady"][0] is not holders["fairness"][0], "the steady detector shares the fairness axis"
    steady = _elements(holders["steady"][0], hv.Curve)
    assert len(steady) == 1 and steady[0].vdims[0].range == (0, 1.05)
    values = steady[0].dimension_values("steady")
    assert np.nanmin(values) >= 0 and np.nanmax(values) <= 1
    fig = [f for f in _figures(layout) if f.title.text.startswith("steady detector")][0]
    assert fig.y_range.start == 0 and fig.y_range.end == pytest.approx(1.05)
