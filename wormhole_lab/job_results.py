"""Per-job results of a run of several jobs (``workload.jobs``): iteration times, completion, slowdown against
running alone, and where the jobs met.

Added to a run's results when its flow table holds a ``JobLayout``:
- per flow: ``flow_job`` (a coordinate: the job's name; ``job`` names the job dimension) and ``iteration``
  (0-based; background traffic has one);
- dims ``job`` and ``iteration``: ``job_iteration_time`` (from the end of the previous iteration, the first one from
  the job's first start, plus its trailing compute), ``job_completion_time`` (job start to the end of its last
  iteration, with its trailing compute), ``job_mean_fct``, their values when the job runs alone
  (``job_alone_*``) and ``job_slowdown``: mean iteration time over the mean alone (for background traffic, mean
  FCT over the mean alone);
- dim ``shared_port`` (every egress port that carried data of two jobs or more): the bytes each job sent through
  it (``shared_port_bytes``, from each flow's delivered bytes and its path), the ECN marks the port gave each
  job's packets (``shared_port_job_ecn_marks``, counted by the engine per flow and hop in runs of several jobs),
  and the port's PFC pause frames. Per job: ``job_cnps`` (ECN echoes its flows received) and ``job_pfc_pauses``
  (pause frames received by the ports its data crossed): a pause stops a port's whole class, whoever's packets
  wait, so it has no per-job count.

The alone runs (``alone_mode``) are the same scenario with one job, on the same hosts, without telemetry. By
default they run in Wormhole mode ("wormhole"), one job after another, sharing one memo: a temporary one for the
alone runs (as the run's own is), or the scenario's memo file. "packet" and "flow" run them in those modes, "off"
skips them (the alone and slowdown variables are then NaN).
"""

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.errors import InputError
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.workload.jobs import JobLayout, jobs_flows

__all__ = ["ALONE_MODES", "add_job_results", "alone_runs", "job_lines", "job_summary", "job_times"]

ALONE_MODES = ("wormhole", "packet", "flow", "off")


def check_alone_mode(mode, where: str = "Scenario.alone_mode") -> str:
    if mode not in ALONE_MODES:
        raise InputError(where, f"unknown mode {mode!r} for the alone runs", f"use one of {', '.join(ALONE_MODES)}")
    return mode


def job_times(data, layout: JobLayout) -> dict[str, np.ndarray]:
    """Per job (and iteration): iteration times, completion time and mean FCT, in ps; NaN where a flow did not
    complete. ``data`` is a RunResults or a Dataset with the flow variables."""
    done = np.asarray(data["completed"]) == 1
    start = np.asarray(data["start"], dtype=np.float64)
    end = np.where(done, start + np.asarray(data["fct"]), np.nan)
    n_iter = max(p.job.iterations for p in layout.jobs)
    iteration = np.full((len(layout.jobs), n_iter), np.nan)
    completion, mean_fct = np.full(len(layout.jobs), np.nan), np.full(len(layout.jobs), np.nan)
    for j, p in enumerate(layout.jobs):
        rows = p.rows
        if p.n_flows == 0 or not done[rows].all():
            continue
        ends = end[rows].reshape(p.job.iterations, p.flows_per_iteration).max(axis=1)
        first = start[rows].min()
        mean_fct[j] = (end[rows] - start[rows]).mean()
        completion[j] = ends[-1] + p.tail_ps - p.job.start_ps
        if p.job.kind == "background":
            continue
        iteration[j, 0] = ends[0] - first + p.tail_ps
        iteration[j, 1 : p.job.iterations] = np.diff(ends)
    return {"iteration_time": iteration, "completion_time": completion, "mean_fct": mean_fct}


def alone_runs(scenario, mode: str, simulation) -> dict[str, np.ndarray] | None:
    """``job_times`` of each job run by itself on its hosts with ``simulation(scenario, mode=...)`` (the
    ``Simulation`` class, passed in by it); NaN for every job when ``mode`` is "off"; None for a single job, which
    runs alone already."""
    layout: JobLayout = scenario.flows.meta["jobs"]
    if len(layout.jobs) == 1:
        return None
    n_iter = max(p.job.iterations for p in layout.jobs)
    out = {
        "iteration_time": np.full((len(layout.jobs), n_iter), np.nan),
        "completion_time": np.full(len(layout.jobs), np.nan),
        "mean_fct": np.full(len(layout.jobs), np.nan),
    }
    if mode == "off":
        return out
    with tempfile.TemporaryDirectory(prefix="wormhole-lab-alone-") as folder:
        wormhole = scenario.wormhole
        if mode == "wormhole" and wormhole.memo is True:  # one memo for all of them: a pattern of one job is a hit
            wormhole = replace(wormhole, memo=str(Path(folder) / "alone-memo.sqlite"))  # for the next one
        for j in range(len(layout.jobs)):
            flows = jobs_flows(scenario.topology, [layout.alone(j)])
            alone = replace(scenario, flows=flows, name=f"{scenario.name}: job {layout.jobs[j].name} alone",
                            telemetry=Telemetry.off(), wormhole=wormhole, alone_mode="off")  # fmt: skip
            sim = simulation(alone, mode=mode)
            sim.run()
            times = job_times(sim.results, flows.meta["jobs"])
            out["iteration_time"][j, : times["iteration_time"].shape[1]] = times["iteration_time"][0]
            out["completion_time"][j] = times["completion_time"][0]
            out["mean_fct"][j] = times["mean_fct"][0]
    return out


def _per_port_and_job(state, layout: JobLayout) -> tuple[np.ndarray, np.ndarray]:
    """(data bytes, ECN marks)[port, job]: what each job's flows delivered through each egress port of their paths,
    and the marks their packets got there (``EngineState.path_marks``, counted per flow and hop)."""
    fl = state.fl
    job = layout.job_of_flow()
    length = fl[:, L.FL_PATH_LEN]
    flow_of_hop = np.repeat(np.arange(len(job)), length)
    hop = np.arange(len(flow_of_hop)) - np.repeat(np.cumsum(length) - length, length)
    entry = fl[flow_of_hop, L.FL_PATH_BEGIN] + hop
    at = (state.path_ports[entry], job[flow_of_hop])
    shape = (state.pt.shape[0], len(layout.jobs))
    per_port, marks = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    np.add.at(per_port, at, fl[flow_of_hop, L.FL_RCV_NXT])
    if len(state.path_marks):
        np.add.at(marks, at, state.path_marks[entry])
    return per_port, marks


def _mean(values: np.ndarray, axis=None) -> np.ndarray:
    """nanmean without the warning for an all-NaN row (it stays NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        counts = np.isfinite(values).sum(axis=axis)
        return np.where(counts > 0, np.nansum(values, axis=axis) / np.maximum(counts, 1), np.nan)


def add_job_results(results, scenario, state, alone: dict[str, np.ndarray] | None):
    """The variables of the module docstring, added to ``results`` (a RunResults); ``alone`` from ``alone_runs``
    (None: the run itself is the job alone)."""
    layout: JobLayout = scenario.flows.meta["jobs"]
    names = np.array(layout.names, dtype=object).astype(str)
    job_of_flow = layout.job_of_flow()
    results.coords["flow_job"] = ("flow", names[job_of_flow], {"long_name": "the job each flow belongs to"})
    results["iteration"] = ("flow", layout.iteration_of_flow(), {"units": "1", "long_name": "iteration (0-based)"})
    results.coords["job"] = ("job", names, {"long_name": "job name"})
    results.coords["iteration_number"] = (
        "iteration", np.arange(1, max(p.job.iterations for p in layout.jobs) + 1), {"long_name": "iteration (1-based)"}
    )  # fmt: skip
    mine = job_times(results, layout)
    alone = mine if alone is None else alone
    per_job = {
        "iteration_time": ("ps", "iteration time: from the previous iteration's end (the first: from the job's "
                           "first start) to this one's, plus trailing compute; NaN for background traffic"),
        "completion_time": ("ps", "job start to its last flow's end plus trailing compute"),
        "mean_fct": ("ps", "mean flow completion time of the job's flows"),
    }  # fmt: skip
    for key, (unit, text) in per_job.items():
        dims = ("job", "iteration") if key == "iteration_time" else ("job",)
        results[f"job_{key}"] = (dims, mine[key], {"units": unit, "long_name": text})
        results[f"job_alone_{key}"] = (dims, alone[key], {"units": unit, "long_name": f"{text}; the job run alone"})
    background = np.array([p.job.kind == "background" for p in layout.jobs])
    with np.errstate(invalid="ignore", divide="ignore"):
        slowdown = np.where(
            background,
            mine["mean_fct"] / alone["mean_fct"],
            _mean(mine["iteration_time"], axis=1) / _mean(alone["iteration_time"], axis=1),
        )
    results["job_slowdown"] = ("job", slowdown, {"units": "1", "long_name": "mean iteration time (background: mean "
                                                 "FCT) over the same run alone"})  # fmt: skip
    results["job_gpus"] = ("job", [len(p.hosts) for p in layout.jobs], {"units": "1", "long_name": "GPUs (hosts)"})
    results["job_start"] = ("job", [p.job.start_ps for p in layout.jobs], {"units": "ps", "long_name": "start"})
    results["job_flows"] = ("job", [p.n_flows for p in layout.jobs], {"units": "1", "long_name": "flows, all "
                                                                       "iterations"})  # fmt: skip
    results["job_kind"] = ("job", [p.job.kind for p in layout.jobs], {"long_name": "training or background"})
    cnps = np.bincount(job_of_flow, weights=np.asarray(results["cnps"]), minlength=len(names))
    results["job_cnps"] = ("job", cnps.astype(np.int64), {"units": "1", "long_name": "ECN echoes its flows received"})
    per_port, marks = _per_port_and_job(state, layout)
    shared = np.flatnonzero((per_port > 0).sum(axis=1) >= 2)
    pt = state.pt
    per_job = {
        "shared_port_bytes": (per_port[shared], "byte", "data bytes each job sent through the port"),
        "shared_port_job_ecn_marks": (marks[shared], "1", "ECN marks the port gave each job's packets"),
    }
    for name, (values, unit, text) in per_job.items():
        results[name] = (("shared_port", "job"), values, {"units": unit, "long_name": text})
    results.coords["shared_port"] = ("shared_port", shared, {"long_name": "engine port id"})
    port_vars = {
        "shared_port_node": (pt[shared, L.PT_NODE], "", "node the port belongs to"),
        "shared_port_peer": (pt[pt[shared, L.PT_PEER], L.PT_NODE], "", "node at the link's other end"),
        "shared_port_ecn_marks": (pt[shared, L.PT_ECN_MARKS], "1", "ECN marks at the port, all jobs"),
        "shared_port_pfc_pauses": (pt[shared, L.PT_PAUSE_FRAMES], "1", "PFC pause frames the port received"),
    }  # fmt: skip
    for name, (values, unit, text) in port_vars.items():
        results[name] = ("shared_port", values, {"units": unit, "long_name": text})
    pauses = ((per_port > 0) * pt[:, L.PT_PAUSE_FRAMES][:, None]).sum(axis=0)
    results["job_pfc_pauses"] = ("job", pauses, {"units": "1", "long_name": "PFC pause frames received by the "
                                                 "ports its data crossed"})  # fmt: skip
    results.attrs["jobs"] = len(names)
    results.attrs["alone_mode"] = scenario.alone_mode
    return results


def job_summary(ds) -> list[dict]:
    """One row per job of a finished run's results: ``job``, ``kind``, ``iterations`` (done; None for background
    traffic), ``times_ps`` (those iteration times), ``measure`` ("iteration time", or "FCT" for background traffic:
    its mean flow completion time), ``mean_ps`` and ``alone_ps`` (the same job run alone) and ``slowdown``. Empty
    for a run of one workload."""
    if ds is None or "job" not in ds.dims:
        return []
    rows = []
    for j, name in enumerate(np.asarray(ds["job"]).tolist()):
        kind = str(np.asarray(ds["job_kind"])[j])
        if kind == "background":
            times, measure = np.zeros(0), "FCT"
            mean, alone = float(np.asarray(ds["job_mean_fct"])[j]), float(np.asarray(ds["job_alone_mean_fct"])[j])
        else:
            times = np.asarray(ds["job_iteration_time"])[j]
            times, measure = times[np.isfinite(times)], "iteration time"
            mean, alone = float(_mean(times)), float(_mean(np.asarray(ds["job_alone_iteration_time"])[j]))
        rows.append({
            "job": str(name), "kind": kind, "iterations": None if kind == "background" else len(times),
            "times_ps": times.tolist(), "measure": measure, "mean_ps": mean, "alone_ps": alone,
            "slowdown": float(np.asarray(ds["job_slowdown"])[j]),
        })  # fmt: skip
    return rows


def job_lines(ds) -> list[str]:
    """One summary line per job, e.g. ``job a  iterations 2  iteration 12.31 ms 12.40 ms  alone 10.02 ms
    slowdown 1.23``."""
    lines = []
    for r in job_summary(ds):
        if r["kind"] == "background":
            text = f"background traffic  mean FCT {_us(r['mean_ps'])}  alone {_us(r['alone_ps'])}"
        else:
            text = f"iterations {r['iterations']}  iteration " + " ".join(_ms(t) for t in r["times_ps"])
            text += f"  alone {_ms(r['alone_ps'])}"
        text += f"  slowdown {r['slowdown']:.3f}" if np.isfinite(r["slowdown"]) else "  slowdown -"
        lines.append(f"job {r['job']:<11} {text}")
    alone_mode = ds.attrs.get("alone_mode", "off")
    lines.append(
        "alone            " + ("not run (alone: off)" if alone_mode == "off" else
                              f"each job run by itself on the same GPUs, in {alone_mode} mode")
    )  # fmt: skip
    return lines


def _ms(ps: float) -> str:
    return f"{ps / 1e9:.3f} ms" if np.isfinite(ps) else "-"


def _us(ps: float) -> str:
    return f"{ps / 1e6:.2f} us" if np.isfinite(ps) else "-"
