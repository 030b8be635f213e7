"""What the live views draw, computed from the chunks a run has added since the last redraw, never from all of them.

``SeriesFeed`` takes telemetry chunks (``add``) and keeps, thinned (``feed.ThinnedTable``), the lines a view shows:
the sending rates of the shown flows with the steady band of the first one, windows, queues, the CCA's state,
Jain's fairness index and the share of flows the steady detector calls steady. The steady test and the band need
the last ``(l - 1) x stride`` samples before a chunk, which the feed carries over, so a feed given the chunks one
by one ends with exactly the tables of one given the finished run's series at once. It also keeps the lesson's
numbers as running values (fairness now, when the detector first fired, the convergence time).

``SkipFeed`` follows the Wormhole controller's skip log from the first skip still in progress on, and
``MemoFeed`` the memo counters ``LiveRun`` samples after each chunk. Pure NumPy; the views are in
``live_views``.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from wormhole_lab.viz.analysis import steady_params
from wormhole_lab.viz.feed import MAX_POINTS, ThinnedTable
from wormhole_lab.wormhole.skip_log import END, MEMO_UNTIL, PART, START

__all__ = ["CCA_STATE", "QUANTITIES", "MemoFeed", "SeriesFeed", "SkipFeed", "flag_steady", "shown_flows"]

PS_PER_US = 1e6
# variable: (label, unit or None, scale from the Dataset's unit); the live views' and the static components' axes
QUANTITIES = {
    "flow_rate": ("sending rate", "Gb/s", 1e-9),
    "flow_window": ("window", "KB", 1e-3),
    "flow_inflight": ("in flight", "KB", 1e-3),
    "flow_acked": ("acknowledged", "MB", 1e-6),
    "port_tx_rate": ("port throughput", "Gb/s", 1e-9),
    "port_queue": ("queue", "KB", 1e-3),
    "dcqcn_alpha": ("DCQCN α", None, 1.0),
    "dcqcn_target_rate": ("DCQCN target rate", "Gb/s", 1e-9),
    "dctcp_alpha": ("DCTCP α", None, 1.0),
    "hpcc_u": ("HPCC U (normalised inflight)", None, 1.0),
    "timely_rtt": ("TIMELY RTT", "µs", 1e6),
    "timely_gradient": ("TIMELY RTT gradient (normalised)", None, 1.0),
}
CCA_STATE = {
    "dcqcn": ["dcqcn_alpha", "dcqcn_target_rate"],
    "dctcp": ["dctcp_alpha"],
    "hpcc": ["hpcc_u"],
    "timely": ["timely_rtt", "timely_gradient"],
}
QUEUE_LINES = 4  # the busiest queues drawn


def flag_steady(rate: np.ndarray, stride: int, window: int, theta: float, first: int = 0) -> np.ndarray:
    """``analysis.steady_flags`` for the rows of ``rate`` from ``first`` on, vectorised: bool[row - first, flow].

    ``rate[row]`` is sample ``row`` of the run when ``first`` rows of history precede the new ones."""
    rate = np.asarray(rate, dtype=float)
    span = (window - 1) * stride
    n_new = len(rate) - first
    flags = np.zeros((max(n_new, 0), rate.shape[1]), dtype=bool)
    if len(rate) <= span or n_new <= 0:
        return flags
    windows = sliding_window_view(rate, span + 1, axis=0)[:, :, ::stride]  # [row - span, flow, sample]
    start = max(first, span)
    w = windows[start - span :]
    half = window // 2
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi = w.min(axis=2), w.max(axis=2)
        older, newer = w[:, :, :half].sum(axis=2), w[:, :, window - half :].sum(axis=2)
        mean = (older + newer) / (2 * half)
        drift = np.abs(newer - older) / half
        ok = (mean > 0) & ((hi - lo) / mean < theta) & (drift / mean < theta / 10)
    flags[start - first :] = ok & ~np.isnan(w).any(axis=2)
    return flags


def shown_flows(flow_ids: np.ndarray, sizes: np.ndarray, max_lines: int, groups=None) -> np.ndarray:
    """The flows a view draws: all when they fit, else the ``max_lines`` largest (ties: lowest id), in id order.
    With ``groups`` (each flow's job), the largest of each group in turn, so that every job has its lines (two equal
    jobs would otherwise tie, and the lowest ids are all the first job's)."""
    flow_ids, sizes = np.asarray(flow_ids), np.asarray(sizes)
    if len(flow_ids) <= max_lines:
        return flow_ids
    if groups is None:
        order = np.lexsort((flow_ids, -sizes))[:max_lines]
        return np.sort(flow_ids[order])
    groups = np.asarray(groups)
    order = np.lexsort((flow_ids, -sizes, groups))  # by group, then largest first
    g = groups[order]
    first = np.searchsorted(g, g)  # each group's first position in ``order``
    rank = np.arange(len(order)) - first  # a flow's place within its group
    turns = np.lexsort((g, rank))[:max_lines]  # every group's largest, then every group's second, ...
    return np.sort(flow_ids[order[turns]])


class SeriesFeed:
    """The lesson's and the explorer's lines, from telemetry chunks. ``tables[name]``: a ThinnedTable per plot
    (``rate``, and for the ``lesson`` also ``window``, ``queue``, each CCA state variable and ``fairness``); columns
    ``time`` (µs) and one per line, named ``f<id>`` / ``p<id>``. Without ``lesson`` (the explorer) only the rates
    of the shown flows and the band are kept, and the steady detector does not run."""

    def __init__(
        self, scenario, theta: float = 0.05, max_lines: int = 12, max_points: int = MAX_POINTS, lesson: bool = True
    ):  # fmt: skip
        self.lesson = lesson
        cfg = scenario.config
        self.cca = cfg.cca
        self.stride, self.window, self.theta = steady_params(cfg, theta)
        self.span = (self.window - 1) * self.stride
        self.max_lines, self.max_points = max_lines, max_points
        self.window_variable = "flow_window" if cfg.has_win else "flow_inflight"
        self.timely_min_rtt_s = cfg.timely_min_rtt_ps / 1e12
        self.last_start_ps = int(np.max(scenario.flows.start_ps)) if len(scenario.flows) else 0
        self.tables: dict[str, ThinnedTable] = {}
        self.samples = 0
        self._last_rtt = None  # TIMELY's last RTT row, for the gradient
        # running numbers for the lesson's summary
        self.fair_now: tuple[float, float, int] | None = None  # (time µs, index, active flows) of the last busy row
        self.detector_first_us: float | None = None
        self.steady_samples = 0
        self.converged_ps: int | None = None
        # what the run's telemetry will trace (its chunks' ``port`` and ``flow``), known before the run: the views
        # are built once, before they are shown, and only fed afterwards
        self.ports, traced = scenario.telemetry.select(scenario.topology, len(scenario.flows), 0)
        layout = scenario.flows.meta.get("jobs")  # several jobs (workload.jobs.JobLayout), else None
        self.job_names = list(layout.names) if layout is not None else []
        job_of_flow = layout.job_of_flow() if layout is not None else None
        groups = job_of_flow[traced] if job_of_flow is not None else None
        self.flows = shown_flows(traced, scenario.flows.size[traced], self.max_lines, groups)  # the shown ones
        #: the job (index in ``job_names``) of each shown flow; empty with one workload
        self.flow_jobs = job_of_flow[self.flows] if job_of_flow is not None else np.zeros(0, dtype=np.int64)
        self._shown = np.flatnonzero(np.isin(traced, self.flows))  # their columns in a chunk
        lines = [f"f{f}" for f in self.flows]
        new = lambda cols: ThinnedTable(["time", *cols], self.max_points)  # noqa: E731
        self.tables["rate"] = new([*lines, "band_lo", "band_hi"])
        # the steady test's history: every traced flow's rate for the detector, else the band's flow alone
        self._band_column = self._shown[0] if self.lesson else 0
        self._tail = np.zeros((0, len(traced) if self.lesson else 1))  # the last ``span`` rate rows
        if not self.lesson:
            return
        self.tables["window"] = new(lines)
        self.tables["queue"] = new([f"p{p}" for p in self.ports])
        for name in CCA_STATE.get(self.cca, []):
            self.tables[name] = new(lines)
        self.tables["fairness"] = new(["fairness", "steady"])
        self.queue_max = np.zeros(len(self.ports))

    def add(self, chunks) -> None:
        """Take the chunks added since the last call (in order)."""
        chunks = list(chunks)
        if not chunks:
            return
        take = lambda name: np.concatenate([c[name].values for c in chunks]).astype(float)  # noqa: E731
        time_ps = np.concatenate([c["time"].values for c in chunks])
        t_us = time_ps / PS_PER_US
        rate = take("flow_rate")
        self._add_rate(t_us, time_ps, rate)
        self.samples += len(t_us)
        if not self.lesson:
            return
        scale = QUANTITIES[self.window_variable][2]
        self.tables["window"].append(np.column_stack([t_us, take(self.window_variable)[:, self._shown] * scale]))
        queue = take("port_queue")
        self.queue_max = np.maximum(self.queue_max, np.nan_to_num(queue, nan=0).max(axis=0))
        self.tables["queue"].append(np.column_stack([t_us, queue * QUANTITIES["port_queue"][2]]))
        for name in CCA_STATE.get(self.cca, []):
            if name == "timely_gradient":
                values = self._gradient(take("timely_rtt"))
            else:
                values = take(name) * QUANTITIES[name][2]
            self.tables[name].append(np.column_stack([t_us, values[:, self._shown]]))

    def _gradient(self, rtt: np.ndarray) -> np.ndarray:
        """TIMELY's RTT difference between successive samples over its minimum RTT (NaN at the first sample)."""
        before = np.full((1, rtt.shape[1]), np.nan) if self._last_rtt is None else self._last_rtt
        self._last_rtt = rtt[-1:].copy()
        return np.diff(np.vstack([before, rtt]), axis=0) / self.timely_min_rtt_s

    def _add_rate(self, t_us, time_ps, rate) -> None:
        history = np.vstack([self._tail, rate if self.lesson else rate[:, self._shown[:1]]])
        first = len(self._tail)
        self._tail = history[len(history) - min(self.span, len(history)) :]
        band = self._band(history, first)
        shown = rate[:, self._shown] * QUANTITIES["flow_rate"][2]
        lo, hi = band * (1 - self.theta / 2), band * (1 + self.theta / 2)
        self.tables["rate"].append(np.column_stack([t_us, shown, lo, hi]))
        if self.lesson:
            self._detect(t_us, time_ps, rate, flag_steady(history, self.stride, self.window, self.theta, first))

    def _detect(self, t_us, time_ps, rate, flags) -> None:
        """Jain's index and the share of active flows steady at each new sample, and the running numbers."""
        active = np.isfinite(rate)
        n_active = active.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            positive = np.where(active & (rate > 0), rate, 0.0)
            fair = positive.sum(axis=1) ** 2 / ((positive > 0).sum(axis=1) * (positive**2).sum(axis=1))
            steady = np.where(n_active > 0, (flags & active).sum(axis=1) / np.maximum(n_active, 1), np.nan)
        self.tables["fairness"].append(np.column_stack([t_us, fair, steady]))
        self._summarise(t_us, time_ps, fair, flags, active, n_active)

    def _band(self, history: np.ndarray, first: int) -> np.ndarray:
        """The window mean of the first shown flow's rate (Gb/s) at each new sample: NaN until a full window."""
        column = history[:, self._band_column] * QUANTITIES["flow_rate"][2]
        mean = np.full(len(history) - first, np.nan)
        if len(column) > self.span:
            windows = sliding_window_view(column, self.span + 1)[:, :: self.stride]
            start = max(first, self.span)
            mean[start - first :] = windows[start - self.span :].mean(axis=1)  # NaN where a sample is missing
        return mean

    def _summarise(self, t_us, time_ps, fair, flags, active, n_active) -> None:
        busy = np.flatnonzero(n_active >= min(2, active.shape[1]))
        if len(busy):
            i = busy[-1]
            self.fair_now = (float(t_us[i]), float(fair[i]), int(n_active[i]))
        fired = np.flatnonzero(flags.any(axis=1))
        if self.detector_first_us is None and len(fired):
            self.detector_first_us = float(t_us[fired[0]])
        self.steady_samples += len(fired)
        if self.converged_ps is None:
            all_steady = active.any(axis=1) & ((flags | ~active).all(axis=1)) & (time_ps >= self.last_start_ps)
            done = np.flatnonzero(all_steady)
            if len(done):
                self.converged_ps = int(time_ps[done[0]] - self.last_start_ps)

    def busiest_ports(self, n: int = QUEUE_LINES) -> np.ndarray:
        """Positions (in ``ports``) of the ``n`` ports with the largest queue so far that had any queue at all."""
        if self.queue_max is None:
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(-self.queue_max, kind="stable")[:n]
        return np.sort(order[self.queue_max[order] > 0])


class SkipFeed:
    """The skip windows of a Wormhole run as two tables of strips (``x0``, ``x1`` in µs, ``part``): fast-forwarded
    and memo-hit. Rows before the first skip in progress are final and handed over once (``take``); the ones in
    progress may still be cut short by a skip-back, so they come again each time as ``provisional``. ``counts``:
    the windows of each kind so far."""

    def __init__(self):
        self.final = 0  # skip-log rows handed over for good
        self._final_counts = {"fastforward": 0, "memo": 0}
        self.counts = dict(self._final_counts)  # windows so far, final and in progress

    def take(self, skip_log) -> tuple[dict, dict]:
        """(final rows new since the last call, provisional rows), each ``{"fastforward": cols, "memo": cols}``."""
        n = len(skip_log)
        running = skip_log.active_of[skip_log.active_of >= 0]
        settled_to = int(running.min()) if len(running) else n
        settled_to = max(settled_to, self.final)
        new = self._windows(skip_log.rows(np.arange(self.final, settled_to)))
        provisional = self._windows(skip_log.rows(np.arange(settled_to, n)))
        self.final = settled_to
        for kind in self.counts:
            self._final_counts[kind] += len(new[kind]["x0"])
            self.counts[kind] = self._final_counts[kind] + len(provisional[kind]["x0"])
        return new, provisional

    @staticmethod
    def _windows(rows: np.ndarray) -> dict:
        """Each skip as a memo-hit strip up to its memo end and a fast-forward strip after it (either may be
        empty)."""
        start, end, part = rows[:, START], rows[:, END], rows[:, PART]
        memo_end = np.minimum(rows[:, MEMO_UNTIL], end)
        out = {}
        for kind, lo, hi in (("memo", start, memo_end), ("fastforward", np.maximum(memo_end, start), end)):
            keep = hi > lo
            out[kind] = {"x0": lo[keep] / PS_PER_US, "x1": hi[keep] / PS_PER_US, "part": part[keep].astype(float)}
        return out


class MemoFeed:
    """The memo counters ``LiveRun`` samples after each chunk, thinned: time (µs), lookups, hits, misses, hit rate,
    DB size (KB), events executed and skipped."""

    COLUMNS = ("time", "lookups", "hits", "misses", "hit_rate", "db_kb", "executed", "skipped")

    def __init__(self, max_points: int = MAX_POINTS):
        self.table = ThinnedTable(self.COLUMNS, max_points)
        self.seen = 0

    def add(self, memo_log: dict) -> None:
        """Take the rows of ``LiveRun.memo_log`` added since the last call."""
        n = len(memo_log["time_ps"])
        if n == self.seen:
            return
        col = lambda k: np.asarray(memo_log[k][self.seen : n], dtype=float)  # noqa: E731
        lookups, hits = col("lookups"), col("hits")
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(lookups > 0, hits / np.maximum(lookups, 1), np.nan)
        block = [col("time_ps") / PS_PER_US, lookups, hits, col("misses"), rate, col("db_bytes") / 1e3]
        block += [col("events_executed"), col("events_skipped")]
        self.table.append(np.column_stack(block))
        self.seen = n
