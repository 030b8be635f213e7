"""Training scenarios: model presets and SimAI files, shrunk by a size scale to run interactively (the explorer's).

``model_scenario("GPT-7B", 64, "hp", 0.01)`` is one iteration of a Table 1 preset (``workload.jobs.Training``)
with flow bytes and every compute time (the optimizer step too) multiplied by the scale, so the iteration keeps
its shape (the ratio of communication to compute) at a hundredth of the work. ``simai_scenario(path, ...)``
places a SimAI/AICB file on a rail-optimised cluster of its GPUs. ``simai_files(folder)`` lists the workload files
in a folder.
"""

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.workload.flows import check_scale, scaled_sizes
from wormhole_lab.workload.jobs import DEFAULT_GPUS_PER_SERVER, Training
from wormhole_lab.workload.models import TABLE1

__all__ = ["GPU_COUNTS", "MODELS", "default_workload_folder", "model_scenario", "simai_files", "simai_scenario"]

MODELS = tuple(TABLE1)
GPU_COUNTS = (64, 128, 256, 512, 1024)
#: training jobs span milliseconds: a sample every 5 us, a chunk (one redraw) every 100 us of simulated time;
#: rates of at most TRACED_FLOWS flows, spread over the job (the timeline draws a dozen of them)
JOB_TELEMETRY = Telemetry(interval_ps=5_000_000, ports=None, chunk_samples=20)
TRACED_FLOWS = 256


def job_telemetry(n_flows: int) -> Telemetry:
    """JOB_TELEMETRY tracing at most TRACED_FLOWS flows, spread evenly over the table."""
    traced = np.unique(np.linspace(0, n_flows - 1, min(n_flows, TRACED_FLOWS)).astype(np.int64))
    return replace(JOB_TELEMETRY, flows=traced.tolist())


def model_scenario(model: str = "GPT-7B", gpus: int = 64, cca: str = "hp", size_scale: float = 0.01) -> Scenario:
    """One training iteration of ``model`` on ``gpus`` GPUs, flow bytes and compute times times ``size_scale``
    (flows at least 1000 bytes). A GPU count the preset's TP x PP does not divide is an InputError."""
    scale = check_scale(size_scale, "size_scale")
    if gpus not in GPU_COUNTS:
        raise InputError("gpus", f"{gpus!r} GPUs is not offered", f"use one of {', '.join(map(str, GPU_COUNTS))}")
    flows = Training(model, gpus, scale=scale).local_flows(gpus, DEFAULT_GPUS_PER_SERVER)
    topo = rail_optimized(gpus // DEFAULT_GPUS_PER_SERVER, DEFAULT_GPUS_PER_SERVER)
    return Scenario(
        topo,
        flows,
        preset(cca),
        name=f"{model} on {gpus} GPUs x{scale:g}, {cca}",
        telemetry=job_telemetry(len(flows)),
    )


def simai_scenario(path, cca: str = "hp", size_scale: float = 0.001) -> Scenario:
    """A SimAI/AICB workload file on a rail-optimised cluster of its GPUs, flow sizes scaled by ``size_scale``
    (at least 1000 bytes each) so that it runs interactively. Parse errors are InputErrors naming the line."""
    from wormhole_lab.workload.simai import read_simai, simai_flows

    scale = check_scale(size_scale, "size_scale")
    w = read_simai(path)
    gpus = int(getattr(w, "all_gpus", 0) or 8)
    topo = rail_optimized(max(1, -(-gpus // 8)), min(8, gpus))
    flows = simai_flows(w, topo)
    if len(flows) == 0:
        raise InputError(
            str(path),
            "this workload makes no network flows (all of its traffic is tensor-parallel, "
            "which SimAI keeps inside a server)",
            "pick a workload with DP, PP or EP groups",
        )
    flows = scaled_sizes(flows, scale)
    return Scenario(topo, flows, preset(cca), name=f"{Path(path).name} x{scale:g}", telemetry=job_telemetry(len(flows)))


def default_workload_folder() -> str:
    """``$WORMHOLE_LAB_WORKLOADS``, else ``../shared/workloads/simai`` if it exists, else empty."""
    folder = os.environ.get("WORMHOLE_LAB_WORKLOADS", "")
    if folder:
        return folder
    shared = Path("..", "shared", "workloads", "simai")
    return str(shared.resolve()) if shared.is_dir() else ""


def simai_files(folder) -> dict[str, str]:
    """File name -> path of the ``.txt`` files in ``folder`` that start like a SimAI workload (a run type and
    ``key: value`` pairs on line 1), sorted by name; {} for a missing folder."""
    from wormhole_lab.workload.simai import RUN_TYPES

    found = {}
    if not folder or not Path(folder).is_dir():
        return found
    for path in sorted(Path(folder).glob("*.txt")):
        try:
            with path.open(encoding="utf-8", errors="replace") as f:
                first = f.readline().split()
        except OSError:
            continue
        if first and first[0] in RUN_TYPES:
            found[path.name] = str(path)
    return found
