"""Parameter sweeps on Dask: every combination of the axes is a task; memo DBs are shared batch by batch.

``sweep(base, axes)`` varies ``base`` along ``axes`` (``{"config.rp_timer_ps": [...], "mode": [...],
"seed": [...]}``: ``config.<EngineConfig field>``, ``steady.theta`` / ``steady.window``, ``mode``) and returns one
``xarray.Dataset`` with a dimension per axis. Cases run on a ``dask.distributed`` cluster: a LocalCluster on
this machine by default, or the one at ``scheduler``. With ``memo``, each batch of cases starts from a
snapshot of the shared memo DB and sends back its new entries, which are merged into it (the first entry
for a key is kept; others are counted as conflicts), so later batches start warmer. With ``results``, each
finished case is stored under its fingerprint and a rerun of the same sweep only computes the missing ones.
A failing case is reported with its error and does not sink the sweep.
"""

import hashlib
import itertools
import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import xarray as xr

from wormhole_lab.errors import InputError
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.wormhole import memo_admin

METRICS = {
    "iteration_time": ("ps", "first start to last completion plus trailing compute"),
    "fct_mean": ("ps", "mean flow completion time"),
    "fct_p99": ("ps", "99th percentile flow completion time"),
    "completed": ("1", "flows completed"),
    "events": ("1", "events executed"),
    "events_skipped": ("1", "events skipped by fast-forwarding (estimate; 0 in packet mode)"),
    "wall_seconds": ("s", "wall time of the simulation"),
    "memo_hit_rate": ("1", "memo hits / lookups in this case (NaN with the memo off or no lookup)"),
    "job_slowdown_max": ("1", "several jobs: the largest slowdown of a job against running alone (else NaN)"),
}


def case_scenario(base: Scenario, case: dict) -> tuple[Scenario, str]:
    """The scenario and mode of one combination of axis values."""
    scenario, mode = base, "packet"
    for axis, value in case.items():
        if axis == "mode":
            mode = value
        elif axis.startswith("config."):
            scenario = replace(scenario, config=scenario.config.with_(**{axis[7:]: value}))
        elif axis in ("steady.theta", "steady.window"):
            steady = replace(scenario.wormhole.steady, **{axis[7:]: value})
            scenario = replace(scenario, wormhole=replace(scenario.wormhole, steady=steady))
        else:
            raise InputError(
                f"axes.{axis}",
                "unknown sweep axis",
                "use mode, config.<EngineConfig field>, steady.theta or steady.window",
            )
    return scenario, mode


def case_fingerprint(base: Scenario, case: dict) -> str:
    """Identifies a case across runs: the base scenario's name, configuration and flows, and the axis values."""
    digest = hashlib.sha256()
    digest.update(base.name.encode())
    digest.update(base.config.manifest_json().encode())
    digest.update(np.ascontiguousarray(base.flows.size).tobytes())
    digest.update(json.dumps(case, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:24]


def run_case(base: Scenario, case: dict, memo_snapshot: str | None) -> dict:
    """One case (runs on a Dask worker): its metrics, or its error."""
    try:
        scenario, mode = case_scenario(base, case)
        if memo_snapshot is not None:
            scenario = replace(scenario, wormhole=replace(scenario.wormhole, memo=memo_snapshot))
        ds = Simulation(scenario, mode=mode).run()
        done = ds["completed"].values == 1
        fct = ds["fct"].values[done]
        lookups = ds.attrs.get("memo_lookups", 0)
        return {
            "iteration_time": ds.attrs["iteration_time_ps"],
            "fct_mean": float(fct.mean()) if done.any() else np.nan,
            "fct_p99": float(np.percentile(fct, 99)) if done.any() else np.nan,
            "completed": int(done.sum()),
            "events": ds.attrs["events_executed"],
            "events_skipped": ds.attrs.get("events_skipped_estimate", 0),
            "wall_seconds": ds.attrs["wall_seconds"],
            "memo_hit_rate": ds.attrs["memo_hits"] / lookups if lookups else np.nan,
            "job_slowdown_max": float(ds["job_slowdown"].max()) if "job_slowdown" in ds else np.nan,
            "error": "",
        }
    except Exception as exc:  # a failing case is reported, it does not sink the sweep
        return {"error": f"{type(exc).__name__}: {exc}"}


def sweep(
    base: Scenario,
    axes: dict,
    client=None,
    scheduler: str | None = None,
    memo: str | None = None,
    results: str | None = None,
    batch_size: int | None = None,
    progress=None,
) -> xr.Dataset:
    """Run every combination of ``axes`` (see the module docstring); ``progress(done, failed, running)``."""
    from dask.distributed import Client, LocalCluster

    if not axes or any(not isinstance(v, list | tuple) or not v for v in axes.values()):
        raise InputError("axes", "every axis needs a non-empty list of values", "e.g. {'mode': ['packet', 'wormhole']}")
    names = list(axes)
    cases = [dict(zip(names, values, strict=True)) for values in itertools.product(*axes.values())]
    for case in cases:
        case_scenario(base, case)  # unknown axes fail here, before any task runs
    store = Path(results) if results else None
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
    own_cluster = client is None
    if own_cluster:
        client = (
            Client(scheduler)
            if scheduler
            else Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None))
        )
    try:
        outcomes, batch_hit_rates = _run_batches(client, base, cases, memo, store, batch_size, progress)
    finally:
        if own_cluster:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()
    return _dataset(axes, cases, outcomes, batch_hit_rates)


def _run_batches(client, base, cases, memo, store, batch_size, progress):
    workers = max(1, len(client.scheduler_info()["workers"]))
    size = batch_size or workers
    outcomes: list[dict | None] = [None] * len(cases)
    for i, case in enumerate(cases):
        saved = store / f"{case_fingerprint(base, case)}.json" if store else None
        if saved is not None and saved.is_file():
            outcomes[i] = json.loads(saved.read_text())
    todo = [i for i, o in enumerate(outcomes) if o is None]
    hit_rates = []
    base_future = client.scatter(
        base, broadcast=True, hash=False
    )  # a fresh key: an earlier sweep may be releasing its copy
    with tempfile.TemporaryDirectory() as scratch:
        for start in range(0, len(todo), size):
            batch = todo[start : start + size]
            snapshots = []
            for i in batch:
                snapshot = None
                if memo is not None:
                    snapshot = str(Path(scratch) / f"case{i}.sqlite")
                    if Path(memo).is_file():
                        shutil.copyfile(memo, snapshot)
                snapshots.append(snapshot)
            futures = [
                client.submit(run_case, base_future, cases[i], s, pure=False)
                for i, s in zip(batch, snapshots, strict=True)
            ]
            for i, future in zip(batch, futures, strict=True):
                outcomes[i] = future.result()
                if store is not None and not outcomes[i]["error"]:
                    (store / f"{case_fingerprint(base, cases[i])}.json").write_text(json.dumps(outcomes[i]))
                if progress is not None:
                    done = sum(o is not None for o in outcomes)
                    failed = sum(bool(o and o["error"]) for o in outcomes)
                    progress(done, failed, len(cases) - done)
            rates = [outcomes[i].get("memo_hit_rate", np.nan) for i in batch]
            hit_rates.append(float(np.nanmean(rates)) if not all(np.isnan(rates)) else np.nan)
            if memo is not None:
                memo_admin.merge(memo, [s for s in snapshots if Path(s).is_file()])
    return outcomes, hit_rates


def _dataset(axes: dict, cases: list[dict], outcomes: list[dict], hit_rates: list[float]) -> xr.Dataset:
    shape = tuple(len(v) for v in axes.values())
    data_vars = {}
    for name, (unit, text) in METRICS.items():
        values = np.array([o.get(name, np.nan) for o in outcomes], dtype=float).reshape(shape)
        data_vars[name] = (tuple(axes), values, {"units": unit, "long_name": text})
    errors = np.array([o.get("error", "") for o in outcomes], dtype=object).reshape(shape).astype(str)
    data_vars["error"] = (tuple(axes), errors, {"long_name": "why the case failed (empty when it ran)"})
    data_vars["batch_memo_hit_rate"] = (
        "batch",
        np.asarray(hit_rates, dtype=float),
        {"units": "1", "long_name": "mean memo hit rate of each batch"},
    )
    coords = {axis: list(values) for axis, values in axes.items()}
    return xr.Dataset(
        data_vars,
        coords=coords,
        attrs={"cases": len(cases), "failed": int(sum(bool(o.get("error")) for o in outcomes))},
    )


__all__ = ["METRICS", "case_fingerprint", "case_scenario", "run_case", "sweep"]
