"""Numbers the views show: Jain's fairness, the steady-state detector on telemetry, convergence time, speedup.

Pure NumPy/xarray; no plotting here.
"""

import numpy as np
import xarray as xr

from wormhole_lab.wormhole.steady import SteadyConfig, dctcp_theta_bound

__all__ = [
    "convergence_time_ps",
    "fairness_series",
    "jain_index",
    "steady_band",
    "steady_flags",
    "steady_params",
    "theta_bound",
]


def jain_index(rates) -> float:
    """Jain's fairness index of the finite, positive entries: 1 when all equal, 1/n when one takes all."""
    x = np.asarray(rates, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    if len(x) == 0:
        return float("nan")
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def fairness_series(series: xr.Dataset) -> xr.DataArray:
    """Jain's index of the active flows' sending rates at every sample (NaN with no active flow)."""
    rate = series["flow_rate"].values
    values = np.array([jain_index(row) for row in rate])
    return xr.DataArray(values, coords={"time": series["time"].values}, dims="time", attrs={"units": "1"})


def steady_params(cfg, theta: float = 0.05, telemetry_interval_ps: int = 1_000_000) -> tuple[int, int, float]:
    """(stride in telemetry samples, window l, theta) of the Wormhole steady test for engine config ``cfg``."""
    steady = SteadyConfig(theta=theta).for_cca(cfg)
    stride = max(1, steady.interval_ps // telemetry_interval_ps)
    return stride, steady.window, steady.theta


def steady_flags(rate: np.ndarray, stride: int, window: int, theta: float) -> np.ndarray:
    """The kernel's steady test (``engine.rate_window``) applied to telemetry: bool[time, flow].

    At every sample, the last ``window`` rates taken every ``stride`` samples must satisfy
    (max - min) / mean < theta, and the means of the window's two halves must differ by less than
    theta / 10 of the mean. Inactive samples (NaN) make a window unsteady. Unlike the kernel, the window
    does not restart when a partition changes, so the detector can fire a little earlier than the engine."""
    rate = np.asarray(rate, dtype=float)
    n_time, n_flow = rate.shape
    flags = np.zeros((n_time, n_flow), dtype=bool)
    span = (window - 1) * stride
    half = window // 2
    for t in range(span, n_time):
        w = rate[t - span : t + 1 : stride]
        if np.isnan(w).all():
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            lo, hi = np.min(w, axis=0), np.max(w, axis=0)
            older, newer = w[:half].sum(axis=0), w[window - half :].sum(axis=0)
            mean = (older + newer) / (2 * half)
            drift = np.abs(newer - older) / half
            ok = (mean > 0) & ((hi - lo) / mean < theta) & (drift / mean < theta / 10)
        flags[t] = ok & ~np.isnan(w).any(axis=0)
    return flags


def steady_band(rate: np.ndarray, stride: int, window: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The threshold band of one flow's rate: the window mean times (1 -/+ theta/2) at every sample.

    A window whose samples all lie inside the band passes the spread test; NaN until a full window exists."""
    rate = np.asarray(rate, dtype=float)
    span = (window - 1) * stride
    mean = np.full(len(rate), np.nan)
    for t in range(span, len(rate)):
        w = rate[t - span : t + 1 : stride]
        if not np.isnan(w).any():
            mean[t] = w.mean()
    return mean * (1 - theta / 2), mean * (1 + theta / 2)


def convergence_time_ps(series: xr.Dataset, flags: np.ndarray, start_ps: np.ndarray) -> int | None:
    """Time from the last flow start until every active flow passes the steady test (None: never).

    Only samples after the last start count, so a flow that joins late restarts the clock."""
    times = series["time"].values
    active = np.isfinite(series["flow_rate"].values)
    last_start = int(np.max(start_ps)) if len(start_ps) else 0
    for t in np.flatnonzero(times >= last_start):
        if active[t].any() and flags[t][active[t]].all():
            return int(times[t] - last_start)
    return None


def theta_bound(n_flows: int, capacity_bps: float, rtt_s: float, packet_bytes: int = 1000) -> float:
    """The paper's DCTCP bound (Eq. 11): theta must exceed this for N DCTCP flows to ever test steady."""
    return dctcp_theta_bound(n_flows, capacity_bps, rtt_s, packet_bytes)
