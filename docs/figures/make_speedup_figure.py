"""Wormhole speedup against scale, from real runs: ``speedup_vs_scale.png`` and ``speedup_vs_scale.txt``.

For GPT-7B (Table 1's TP8-PP2 plan; TP and PP kept, DP grows with the GPU count) at each GPU count it builds
one training iteration on a rail-optimized cluster, exactly as ``benchmarks/bench_wormhole.py`` does (its
``scaled`` shrinks hidden size, FFN size and layers by ``--scale`` so packet mode finishes in minutes), and
runs it under HPCC in packet mode and in Wormhole mode with a fresh memo DB, in this one process, with
``wormhole_lab.viz.figures.compare_modes``. Before the measured runs the smallest scenario is run once in
both modes and thrown away, so Numba compilation is in no measured wall time. The figure plots speedup
(packet wall time / Wormhole wall time, and packet events / Wormhole events) against the GPU count, each
point annotated ("FCT err") with Wormhole's mean per-flow FCT error against packet mode; it is drawn with
``figures.speedup_vs_scale`` and written with ``viz.export`` (paper style, matplotlib backend).

The committed figure was made on a busy 2-core machine (other jobs running) with::

    nice -n 10 python docs/figures/make_speedup_figure.py --scale 0.3 --gpus 16,32,64,128,256

which took 5.1 minutes (packet mode at 256 GPUs alone 188 s). Wall-time speedups on a shared machine are
noisy; event counts are exact. At 16 GPUs DP is 1, so the iteration carries only pipeline activations (32
small flows) and there is nothing to fast-forward: speedup 1.0x.

usage: python docs/figures/make_speedup_figure.py [--scale S] [--gpus 16,32,64] [--model GPT-7B] [--cca hp]
       [--out docs/figures/speedup_vs_scale] [--replot]

``--replot`` redraws the figure from the numbers file (``OUT.txt``) without running anything.
"""

import argparse
import datetime
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import holoviews as hv
import numba
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))

from bench_wormhole import scaled  # noqa: E402  (the benchmark's model shrink, reused, not copied)

import wormhole_lab  # noqa: E402
from wormhole_lab.engine.presets import preset  # noqa: E402
from wormhole_lab.simulation import Scenario  # noqa: E402
from wormhole_lab.telemetry import Telemetry  # noqa: E402
from wormhole_lab.topology.builders import rail_optimized  # noqa: E402
from wormhole_lab.viz import export  # noqa: E402
from wormhole_lab.viz.figures import compare_modes, speedup_vs_scale  # noqa: E402
from wormhole_lab.viz.style import LINE_COLORS  # noqa: E402
from wormhole_lab.workload.llm import training_iteration  # noqa: E402
from wormhole_lab.workload.models import placement_for  # noqa: E402
from wormhole_lab.wormhole.settings import WormholeConfig  # noqa: E402


def scenario(model: str, gpus: int, scale: float, cca: str) -> tuple[Scenario, str]:
    placement = placement_for(model, gpus)
    flows = training_iteration(scaled(model, scale), placement)
    topo = rail_optimized(gpus // 8, 8)
    return Scenario(topo, flows, preset(cca), name=f"{model} x{scale:g} {gpus} GPUs", telemetry=Telemetry.off()), str(
        placement
    )


def measure(model: str, gpu_counts: list[int], scale: float, cca: str, folder: Path) -> list[dict]:
    rows = []
    warm, _ = scenario(model, gpu_counts[0], scale, cca)
    t0 = time.perf_counter()
    compare_modes(replace(warm, wormhole=WormholeConfig(memo=str(folder / "warmup.sqlite"))))
    print(f"warm-up (compile) {time.perf_counter() - t0:.1f} s", flush=True)
    for gpus in gpu_counts:
        sc, placement = scenario(model, gpus, scale, cca)
        memo = folder / f"memo{gpus}.sqlite"  # fresh: does not exist yet
        t0 = time.perf_counter()
        r = compare_modes(replace(sc, wormhole=WormholeConfig(memo=str(memo))))
        packet, fast = r["packet"], r["wormhole"]
        row = {
            "gpus": gpus,
            "placement": placement,
            "flows": len(sc.flows),
            "gbytes": float(sc.flows.size.sum() / 1e9),
            "packet_wall_s": float(packet.attrs["wall_seconds"]),
            "wormhole_wall_s": float(fast.attrs["wall_seconds"]),
            "packet_events": int(packet.attrs["events_executed"]),
            "wormhole_events": int(fast.attrs["events_executed"]),
            "speedup_wall": r["speedup_wall"],
            "speedup_events": r["speedup_events"],
            "fct_error_mean": r["fct_error_mean"],
            "fct_error_p99": r["fct_error_p99"],
            "iteration_error": abs(fast.attrs["iteration_time_ps"] / packet.attrs["iteration_time_ps"] - 1),
            "skips": r["skips"],
            "memo_hit_rate": r["memo_hit_rate"],
        }
        rows.append(row)
        print(
            f"{gpus:4d} GPUs ({placement}, {row['flows']} flows, {row['gbytes']:.2f} GB): packet "
            f"{row['packet_wall_s']:.1f} s, wormhole {row['wormhole_wall_s']:.1f} s; speedup "
            f"{row['speedup_wall']:.1f}x wall, {row['speedup_events']:.1f}x events; FCT error mean "
            f"{row['fct_error_mean']:.2%} p99 {row['fct_error_p99']:.2%} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    return rows


def _plain_log_ticks(plot, element) -> None:
    """matplotlib hook: no labels on the log axes' minor ticks (they would overlap the GPU counts)."""
    from matplotlib.ticker import NullFormatter

    ax = plot.handles["axis"]
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


def figure(rows: list[dict], title: str) -> hv.Overlay:
    table = {
        "scale": [int(r["gpus"]) for r in rows],
        "speedup_wall": [r["speedup_wall"] for r in rows],
        "speedup_events": [r["speedup_events"] for r in rows],
    }

    def styled(which: str, label: str, color: str, marker: str) -> hv.Overlay:
        fig = speedup_vs_scale(table, "GPUs", which=which)
        fig = fig.map(lambda e: e.relabel(label).opts(color=color, backend="matplotlib"), [hv.Curve])
        return fig.map(
            lambda e: e.relabel(label).opts(color=color, marker=marker, s=14, backend="matplotlib"), [hv.Scatter]
        )

    events = styled("speedup_events", "events", LINE_COLORS[0], "o")
    wall = styled("speedup_wall", "wall time", LINE_COLORS[1], "s")
    # annotate each GPU count with the mean FCT error, above the higher of its two points
    top = np.asarray([max(r["speedup_wall"], r["speedup_events"]) for r in rows])
    text = [f"{r['fct_error_mean']:.2%}" for r in rows]
    labels = hv.Labels((table["scale"], top * 1.5, text), ["GPUs", "speedup"], "err").opts(
        size=6, color="#444444", backend="matplotlib"
    )
    ymax = top.max() * 3.0
    ymin = min(min(table["speedup_wall"]), min(table["speedup_events"]), 1.0) / 1.6
    xs = table["scale"]
    note = hv.Text(
        max(xs) * 1.25,
        ymin * 1.15,
        "numbers: mean FCT error\nagainst packet mode",
        fontsize=6,
        halign="right",
        valign="bottom",
    ).opts(color="#444444", backend="matplotlib")
    yticks = [v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if ymin <= v <= ymax]
    return (events * wall * labels * note).opts(
        hv.opts.Overlay(
            title=title,
            logy=True,
            logx=True,
            xticks=[(g, str(g)) for g in xs],
            yticks=[(v, f"{v:g}") for v in yticks],
            hooks=[_plain_log_ticks],
            ylim=(ymin, ymax),
            xlim=(min(xs) / 1.35, max(xs) * 1.35),
            legend_position="top_left",
            ylabel="speedup over packet mode (×)",
            backend="matplotlib",
        )
    )


def draw(rows: list[dict], title: str, out: Path) -> None:
    fig = figure(rows, title)
    for suffix in (".png", ".pdf", ".svg"):
        export(fig, out.with_suffix(suffix), width="single", height=2.4)


def write_numbers(rows: list[dict], path: Path, args, seconds: float) -> None:
    cols = [
        ("gpus", "{:d}"),
        ("placement", "{}"),
        ("flows", "{:d}"),
        ("gbytes", "{:.3f}"),
        ("packet_wall_s", "{:.2f}"),
        ("wormhole_wall_s", "{:.2f}"),
        ("packet_events", "{:d}"),
        ("wormhole_events", "{:d}"),
        ("speedup_wall", "{:.2f}"),
        ("speedup_events", "{:.2f}"),
        ("fct_error_mean", "{:.4%}"),
        ("fct_error_p99", "{:.4%}"),
        ("iteration_error", "{:.4%}"),
        ("skips", "{:d}"),
        ("memo_hit_rate", "{:.1%}"),
    ]
    lines = [
        "# Wormhole mode (fresh memo DB) against packet mode: the numbers in speedup_vs_scale.png",
        f"# made {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC by "
        f"python docs/figures/make_speedup_figure.py --scale {args.scale:g} --gpus {args.gpus} "
        f"--model {args.model} --cca {args.cca}  ({seconds / 60:.1f} min in all)",
        f"# {args.model} shrunk by bench_wormhole.scaled(scale={args.scale:g}), one training iteration, "
        f"rail_optimized(gpus/8, 8), CCA {args.cca}; telemetry off",
        f"# wormhole_lab {getattr(wormhole_lab, '__version__', '?')}, numba {numba.__version__}, "
        f"numpy {np.__version__}, python {platform.python_version()}, {platform.machine()}",
        "# wall times: the engine's wall_seconds on a shared 2-core machine (noisy); events: exact counts",
        "# fct_error: |FCT_wormhole / FCT_packet - 1| per flow; iteration_error: same for the iteration time",
        "\t".join(c for c, _ in cols),
    ]
    for r in rows:
        lines.append("\t".join(fmt.format(r[c]) for c, fmt in cols))
    path.write_text("\n".join(lines) + "\n")


def read_numbers(path: Path) -> tuple[list[dict], dict]:
    """The rows (and the --scale/--model/--cca of the run) back from a numbers file, to redraw without rerunning."""
    lines = path.read_text().splitlines()
    made = next(line for line in lines if line.startswith("# made"))
    words = made.split()
    run = {k: words[words.index(f"--{k}") + 1] for k in ("scale", "model", "cca")}
    body = [line for line in lines if not line.startswith("#")]
    header, rows = body[0].split("\t"), []
    for line in body[1:]:
        row = dict(zip(header, line.split("\t"), strict=True))
        for k, v in row.items():
            if k != "placement":
                row[k] = float(v.rstrip("%")) / 100 if v.endswith("%") else float(v)
        rows.append(row)
    return rows, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.3, help="model shrink (bench_wormhole.scaled); 1 = Table 1")
    parser.add_argument("--gpus", default="16,32,64,128,256", help="comma-separated GPU counts (multiples of 16)")
    parser.add_argument("--model", default="GPT-7B")
    parser.add_argument("--cca", default="hp")
    parser.add_argument("--out", default=str(HERE / "speedup_vs_scale"), help="path without suffix")
    parser.add_argument("--replot", action="store_true", help="redraw from OUT.txt instead of running")
    args = parser.parse_args()
    gpu_counts = sorted(int(g) for g in args.gpus.split(","))
    out = Path(args.out)
    if args.replot:
        rows, run = read_numbers(out.with_suffix(".txt"))
        draw(rows, f"{run['model']} ×{run['scale']}, {run['cca'].upper()}: Wormhole vs packet", out)
        return
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        rows = measure(args.model, gpu_counts, args.scale, args.cca, Path(folder))
    seconds = time.perf_counter() - t0
    write_numbers(rows, out.with_suffix(".txt"), args, seconds)
    draw(rows, f"{args.model} ×{args.scale:g}, {args.cca.upper()}: Wormhole vs packet", out)
    print(f"wrote {out}.png/.pdf/.svg and {out}.txt ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    main()
