"""Interference scenarios: training jobs side by side on one fabric, and a job beside background traffic.

Both use a k-ary fat tree (k=8: 128 hosts, 4 per edge switch, 100 Gb/s everywhere, as the reference's
fat-tree benchmarks), where a job's data-parallel peers sit under other edge switches, so jobs meet on the
aggregation and core links. On the rail-optimised cluster of the model presets, TP8 jobs on separate servers
share no port at all (every flow stays on its rail switch): their slowdown is 1 by construction.

Jobs are shrunk by ``scale`` (flow bytes and compute times, ``workload.jobs.Training``) so they run interactively;
the alone runs that give each job's slowdown use Wormhole mode (``Scenario.alone_mode``).
"""

from dataclasses import replace

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.scenarios.training import job_telemetry
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import fat_tree
from wormhole_lab.workload.jobs import PLACEMENTS, Background, Job, Training, jobs_flows

__all__ = ["PLACEMENTS", "job_with_background", "two_jobs"]


def _scenario(topo, jobs, cca: str, name: str) -> Scenario:
    flows = jobs_flows(topo, jobs)
    return Scenario(topo, flows, preset(cca), name=name, telemetry=job_telemetry(len(flows)))


def two_jobs(
    placement: str = "interleaved",
    model: str = "GPT-7B",
    gpus: int = 64,
    cca: str = "hp",
    scale: float = 0.01,
    iterations: int = 2,
    start_us: int = 200,
    seed: int = 1,
    k: int = 8,
) -> Scenario:
    """Jobs ``a`` and ``b``, each ``model`` on ``gpus`` GPUs, ``iterations`` iterations, placed by the same policy
    (``packed``, ``interleaved`` or ``random`` with ``seed`` and ``seed + 1``); ``b`` starts ``start_us`` later."""
    if placement not in PLACEMENTS:
        raise InputError("placement", f"unknown placement {placement!r}", f"use one of {', '.join(PLACEMENTS)}")
    job = Job("a", Training(model, gpus, scale=scale), placement, iterations=iterations, seed=seed)
    jobs = [job, replace(job, name="b", start_ps=int(start_us) * 1_000_000, seed=seed + 1)]
    name = f"two {model} jobs on {gpus} GPUs x{scale:g}, {placement}, {cca}"
    return _scenario(fat_tree(k), jobs, cca, name)


def job_with_background(
    load: float = 0.3,
    model: str = "GPT-13B",
    gpus: int = 128,
    cdf: str = "WebSearch",
    cca: str = "hp",
    scale: float = 0.01,
    duration_us: int = 2000,
    seed: int = 1,
    k: int = 8,
) -> Scenario:
    """``model`` on ``gpus`` GPUs beside Poisson traffic at ``load`` of the host links (sizes from ``cdf``, for
    ``duration_us`` from the start) among every host of the cluster, the job's too."""
    jobs = [
        Job("job", Training(model, gpus, scale=scale)),
        Job("background", Background(cdf, load, int(duration_us) * 1_000_000, seed), shares_gpus=True),
    ]
    name = f"{model} on {gpus} GPUs x{scale:g} beside {cdf} at {load:.0%} load, {cca}"
    return _scenario(fat_tree(k), jobs, cca, name)
