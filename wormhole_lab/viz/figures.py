"""The paper's figures, ready to use: measure with ``compare_modes`` / ``scaling_table`` / ``sensitivity_table``,
draw with ``speedup_vs_scale``, ``fct_error_vs_scale``, ``theta_l_sensitivity``, ``rate_timeline_figure``,
``error_vs_speedup``, write with ``viz.export(fig, "fig.pdf")``.

Tables are plain dicts of equal-length lists (or anything ``pandas.DataFrame(...)`` accepts turned into one
with ``.to_dict("list")``), so measurements can be saved, merged and redrawn without rerunning.
"""

from dataclasses import replace

import holoviews as hv
import numpy as np

from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.viz.components import PS_PER_US, _both, timeline
from wormhole_lab.viz.live import LiveRun
from wormhole_lab.viz.style import LINE_COLORS
from wormhole_lab.wormhole.settings import WormholeConfig
from wormhole_lab.wormhole.steady import SteadyConfig

__all__ = [
    "compare_modes",
    "error_vs_speedup",
    "fct_error_vs_scale",
    "rate_timeline_figure",
    "scaling_table",
    "sensitivity_table",
    "speedup_vs_scale",
    "theta_l_sensitivity",
]


def compare_modes(scenario, packet=None, mode: str = "wormhole") -> dict:
    """Run ``scenario`` in packet mode and in ``mode`` ("wormhole" or "flow"; telemetry off) and return speedups
    and FCT errors.

    ``packet``: a packet-mode result to reuse. Keys: speedup_events, speedup_wall, fct_error_mean,
    fct_error_p99 (fractions), skips, memo_hit_rate (0 in flow mode), and both Datasets under ``packet`` and
    the mode's name."""
    quiet = replace(scenario, telemetry=Telemetry.off())
    if packet is None:
        packet = Simulation(quiet, mode="packet").run()
    fast = Simulation(quiet, mode=mode).run()
    err = np.abs(fast["fct"].values / packet["fct"].values - 1)
    return {
        "speedup_events": packet.attrs["events_executed"] / max(fast.attrs["events_executed"], 1),
        "speedup_wall": packet.attrs["wall_seconds"] / max(fast.attrs["wall_seconds"], 1e-9),
        "fct_error_mean": float(err.mean()),
        "fct_error_p99": float(np.percentile(err, 99)),
        "skips": int(fast.attrs.get("skips", 0)),
        "memo_hit_rate": float(fast.attrs.get("memo_hit_rate", 0.0)),
        "packet": packet,
        mode: fast,
    }


def scaling_table(make_scenario, scales) -> dict:
    """``make_scenario(scale)`` for each scale, compared in both modes: a table for the two scale figures."""
    rows = {"scale": [], "speedup_events": [], "speedup_wall": [], "fct_error_mean": [], "fct_error_p99": []}
    for s in scales:
        result = compare_modes(make_scenario(s))
        rows["scale"].append(s)
        for k in list(rows)[1:]:
            rows[k].append(result[k])
    return rows


def sensitivity_table(scenario, thetas, windows) -> dict:
    """The scenario in Wormhole mode for every (theta, l) pair against one packet-mode run."""
    rows = {"theta": [], "l": [], "speedup_events": [], "fct_error_mean": []}
    packet = None
    for window in windows:
        for theta in thetas:
            steady = SteadyConfig(theta=theta, window=window)
            result = compare_modes(replace(scenario, wormhole=WormholeConfig(steady=steady)), packet)
            packet = result["packet"]
            rows["theta"].append(theta)
            rows["l"].append(window)
            rows["speedup_events"].append(result["speedup_events"])
            rows["fct_error_mean"].append(result["fct_error_mean"])
    return rows


def _lines(table: dict, x: str, y: str, xdim, ydim, group: str | None = None, scale_y: float = 1.0) -> hv.Overlay:
    xs = np.asarray(table[x], dtype=float)
    ys = np.asarray(table[y], dtype=float) * scale_y
    groups = [None] if group is None else sorted(set(table[group]))
    layers = []
    for k, g in enumerate(groups):
        mask = np.ones(len(xs), bool) if g is None else np.asarray(table[group]) == g
        order = np.argsort(xs[mask])
        label = "" if g is None else f"{group} = {g}"
        color = LINE_COLORS[k % len(LINE_COLORS)]
        pts = (xs[mask][order], ys[mask][order])
        layers.append(_both(hv.Curve(pts, xdim, ydim, label=label), color=color, line_width=1.5))
        layers.append(_both(hv.Scatter(pts, xdim, ydim, label=label), color=color))
    return hv.Overlay(layers)


def speedup_vs_scale(table: dict, scale_label: str = "GPUs", which: str = "speedup_events") -> hv.Overlay:
    """Speedup of Wormhole over packet mode (events or wall time) against scale; log y."""
    what = "events" if which == "speedup_events" else "wall time"
    ydim = hv.Dimension(which, label=f"speedup ({what})", unit="×")
    fig = _lines(table, "scale", which, hv.Dimension("scale", label=scale_label, unit="count"), ydim)
    return _both(fig, title="Wormhole speedup vs scale", logy=True)


def fct_error_vs_scale(table: dict, scale_label: str = "GPUs") -> hv.Overlay:
    """Mean and p99 per-flow FCT error (percent) of Wormhole mode against packet mode, by scale."""
    xdim = hv.Dimension("scale", label=scale_label, unit="count")
    ydim = hv.Dimension("error", label="FCT error", unit="%")
    mean = _lines(table, "scale", "fct_error_mean", xdim, ydim, scale_y=100)
    p99 = _lines(table, "scale", "fct_error_p99", xdim, ydim, scale_y=100)
    mean = mean.map(lambda e: e.relabel("mean"), [hv.Curve, hv.Scatter])
    p99 = p99.map(lambda e: _both(e.relabel("p99"), color=LINE_COLORS[1]), [hv.Curve, hv.Scatter])
    return _both(mean * p99, title="FCT error vs scale")


def theta_l_sensitivity(table: dict) -> hv.Layout:
    """Mean FCT error and speedup against theta, one line per window length l."""
    theta = hv.Dimension("theta", label="θ (steady threshold)")
    err = _lines(
        table,
        "theta",
        "fct_error_mean",
        theta,
        hv.Dimension("error", label="mean FCT error", unit="%"),
        group="l",
        scale_y=100,
    )
    spd = _lines(
        table, "theta", "speedup_events", theta, hv.Dimension("speedup", label="speedup (events)", unit="×"), group="l"
    )
    return hv.Layout([_both(err, title="accuracy vs θ"), _both(spd, title="speedup vs θ")]).cols(2)


def rate_timeline_figure(run: LiveRun, flows=None, annotate: bool = True) -> hv.Overlay:
    """Like the paper's Figure 1: per-flow sending rate over time, fast-forwarded windows shaded and labelled
    "skipped", memo-hit transients labelled "memo"."""
    fig = timeline(run, "flow_rate", title="sending rate per flow")
    if flows is not None:
        keep = {f"flow {f}" for f in flows}
        fig = fig.map(lambda nd: nd.select(flow=list(keep)) if isinstance(nd, hv.NdOverlay) else nd, hv.NdOverlay)
    if not annotate:
        return fig
    series = run.series
    top = float(np.nanmax(series["flow_rate"].values)) * 1e-9 * 1.02 if series is not None else 1.0
    labels = []
    for w in run.skip_windows():
        mid = (w.start_ps + w.end_ps) / 2 / PS_PER_US
        labels.append((mid, top, "memo" if w.memo else "skipped", "#D55E00" if w.memo else "#0072B2"))
    texts = hv.Overlay(
        [_both(hv.Text(x, y, s, fontsize=7, valign="bottom"), color=c) for x, y, s, c in labels]
        or [hv.Text(0, top, "", fontsize=7)]
    )
    return _both(fig * texts, title="sending rate per flow", xlabel="time (µs)", ylabel="sending rate (Gb/s)")


EXACT_FLOOR = 1e-5  # where a run with no FCT error is drawn on the log axis (0.001 %)


def error_vs_speedup(table: dict) -> hv.Overlay:
    """The paper's comparison of simulators (its Fig. 2c and Fig. 10): mean per-flow FCT error against packet
    mode (percent, log y) over the wall-time speedup (log x), one labelled point per row, one colour per workload.

    ``table``: equal-length lists ``workload``, ``label`` (the mode, e.g. "flow-level"), ``speedup_wall`` and
    ``fct_error_mean`` (fractions; packet mode itself is the origin of both axes, not a point). A run with no
    error (Wormhole mode can be exact) is drawn on the log scale at ``EXACT_FLOOR`` and labelled "exact"."""
    errors = np.asarray(table["fct_error_mean"], dtype=float)
    if (errors < 0).any() or not np.isfinite(errors).all():
        raise InputError(
            "error_vs_speedup(table['fct_error_mean'])",
            f"errors must be finite and not negative, got {errors.tolist()}",
            "give mean absolute FCT errors as fractions, e.g. 0.003",
        )
    exact = errors == 0
    errors = np.where(exact, EXACT_FLOOR, errors)
    xdim = hv.Dimension("speedup_wall", label="speedup over packet mode (wall time)", unit="×")
    ydim = hv.Dimension("error", label="mean FCT error", unit="%")
    layers = []
    for k, workload in enumerate(dict.fromkeys(table["workload"])):
        rows = [i for i, w in enumerate(table["workload"]) if w == workload]
        names = [f" {table['label'][i]}" + (" (exact)" if exact[i] else "") for i in rows]
        pts = [(float(table["speedup_wall"][i]), 100 * errors[i], name) for i, name in zip(rows, names, strict=True)]
        color = LINE_COLORS[k % len(LINE_COLORS)]
        layers.append(_both(hv.Scatter([p[:2] for p in pts], xdim, ydim, label=workload), color=color))
        labels = hv.Labels(pts, [xdim, ydim], "label")
        labels = labels.opts(text_color=color, text_font_size="7pt", text_align="left", backend="bokeh")
        layers.append(labels.opts(color=color, size=6, horizontalalignment="left", backend="matplotlib"))
    # padding leaves room for the labels right of the fastest points
    return _both(hv.Overlay(layers), title="accuracy vs speed", logx=True, logy=True, padding=(0.2, 0.1))
