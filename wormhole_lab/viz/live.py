"""A run that can be advanced a little at a time, recording what the views need as it goes.

``LiveRun`` wraps ``Simulation.stream()``. Each ``step()`` pulls telemetry chunks; after each chunk it
looks at the Wormhole controller (if any) and records:

- the skips, from the controller's own log (``controller.ff.log``: every fast-forward and memo hit,
  shortened in place by a skip-back); ``skip_coverage()`` checks it against the controller's per-flow
  totals (``ff.ff_time``, ``ff.memo_time``);
- a snapshot of the partitions (flows per partition id, and what each flow is doing);
- memo DB counters, DB size, events executed and events skipped so far.

Everything is plain data (lists, dicts, NumPy arrays, xarray), usable from a notebook without any GUI. The live
views (``live_views``) read only what each step added (``chunks`` from where they stopped, the skip log from its
first skip in progress, the memo counters' new rows) and the partitions as they are now; ``series``, which joins
every chunk, is for the finished run. With ``history=False`` the partitions seen after each chunk are not kept,
only the last busy ones.
"""

import sqlite3
import time
from dataclasses import dataclass

import numpy as np
import xarray as xr

from wormhole_lab.simulation import Simulation
from wormhole_lab.wormhole.skip_log import END, MEMO_UNTIL, START

__all__ = ["LiveRun", "SkipWindow", "flow_states", "skip_counts"]

PACKET, FASTFORWARD, MEMO = "packet-level", "fast-forwarded", "memo hit"


@dataclass(frozen=True)
class SkipWindow:
    """A skipped stretch of one partition: ``memo`` True for a memoized transient, False for a fast-forward."""

    part: int
    start_ps: int
    end_ps: int
    memo: bool
    flows: tuple


class LiveRun:
    """Run ``scenario`` in ``mode`` a chunk at a time: ``step()`` for live views, ``run()`` to finish."""

    def __init__(self, scenario, mode: str = "packet", history: bool = True):
        self.sim = Simulation(scenario, mode=mode)
        self.history = history
        self.scenario = scenario
        self.mode = mode
        self.chunks: list[xr.Dataset] = []
        self.done = False
        self.wall_seconds = 0.0
        self._stream = None
        self.partition_snapshots: list[tuple[int, dict]] = []  # (time, {part: sorted flows}) when they changed
        self.memo_log: dict[str, list] = {k: [0] for k in MEMO_COLUMNS}  # from t = 0, where the timeline starts
        self._series = None
        self.cache: dict = {}  # per-run memo of the views (e.g. graph layout)
        self.last_busy: tuple[int, dict, dict] | None = None  # (time, partitions, flow states) with active flows

    # --- driving -----------------------------------------------------------------------------------
    def step(self, max_chunks: int | None = None, budget_s: float | None = None) -> bool:
        """Pull up to ``max_chunks`` chunks (or until ``budget_s`` of wall time); False once the run is done."""
        if self.done:
            return False
        if self._stream is None:
            self._stream = self.sim.stream()
        t0 = time.perf_counter()
        pulled = 0
        while max_chunks is None or pulled < max_chunks:
            try:
                chunk = next(self._stream)
            except StopIteration:
                self.done = True
                self._observe(final=True)
                break
            self.chunks.append(chunk)
            self._series = None
            pulled += 1
            self._observe()
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                break
        self.wall_seconds += time.perf_counter() - t0
        return not self.done

    def run(self) -> "LiveRun":
        while self.step(max_chunks=1000):
            pass
        return self

    # --- what the views read -------------------------------------------------------------------------
    @property
    def controller(self):
        return getattr(self.sim, "controller", None)

    @property
    def flows(self) -> xr.Dataset | None:
        """The flow table Dataset once the run is done (``Simulation.flows``), else None."""
        return self.sim.flows if self.done else None

    @property
    def series(self) -> xr.Dataset | None:
        """Every telemetry chunk so far, concatenated along ``time`` (None before the first chunk)."""
        if not self.chunks:
            return None
        if self._series is None:
            self._series = xr.concat(self.chunks, dim="time", data_vars="all", coords="minimal", compat="override")
        return self._series

    @property
    def now_ps(self) -> int:
        ctrl = self.controller
        if ctrl is not None:
            return ctrl.state.now_ps
        return int(self.chunks[-1].time[-1]) if self.chunks else 0

    def skip_windows(self) -> list[SkipWindow]:
        """Every skip recorded so far, fast-forwards and memo hits, with their final extent (a memo hit that
        went on as a fast-forward gives one window of each)."""
        windows = []
        for s in self.controller.ff.log if self.controller is not None else []:
            flows = tuple(sorted(s.flows.tolist()))
            memo_end = min(s.memo_until, s.end)  # memo_until is never before the start
            if memo_end > s.start:
                windows.append(SkipWindow(int(s.part), int(s.start), int(memo_end), True, flows))
            if s.end > memo_end:
                windows.append(SkipWindow(int(s.part), int(memo_end), int(s.end), False, flows))
        return windows

    def audit_windows(self) -> list[SkipWindow]:
        """The stretches the self-audit re-simulated, read from the finished run's Dataset (none before the end)."""
        ds = self.flows
        if ds is None or "audit" not in ds.dims:
            return []
        return [
            SkipWindow(int(part), int(start), int(end), kind == "memo", ())
            for part, start, end, kind in zip(
                ds["audit_partition"].values, ds["audit_start"].values, ds["audit_end"].values,
                ds["audit_kind"].values, strict=True,
            )
        ]  # fmt: skip

    def skip_coverage(self) -> dict:
        """Per flow, skipped time in the recorded windows vs the controller's totals (ff_time + memo_time).

        ``complete`` is True when they agree for every flow, i.e. no skip was missed between two chunks."""
        ctrl = self.controller
        n = len(self.scenario.flows)
        recorded = np.zeros(n, dtype=np.int64)
        for w in self.skip_windows():
            recorded[list(w.flows)] += w.end_ps - w.start_ps
        if ctrl is None:
            return {"recorded_ps": recorded, "controller_ps": recorded.copy(), "complete": True}
        booked = ctrl.ff.ff_time + ctrl.ff.memo_time
        # skips still in progress are not booked yet
        for skip in ctrl.ff.active.values():
            booked[skip.flows] += skip.end - skip.start
        return {"recorded_ps": recorded, "controller_ps": booked, "complete": bool(np.array_equal(recorded, booked))}

    def partitions(self) -> dict[int, list[int]]:
        """The partitions now: partition id -> its active flows (sorted); kept as ``last_busy`` if there are any."""
        ctrl = self.controller
        if ctrl is None:
            return {}
        parts = {int(p): sorted(int(f) for f in fs) for p, fs in ctrl.partitions.flows.items()}
        if parts:
            self.last_busy = (self.now_ps, parts, flow_states(self, parts=parts))
        return parts

    def memo_table(self) -> dict[str, np.ndarray]:
        """The memo and event counters sampled after each chunk, as arrays (see ``MEMO_COLUMNS``)."""
        return {k: np.asarray(v) for k, v in self.memo_log.items()}

    # --- recording -----------------------------------------------------------------------------------
    def _observe(self, final: bool = False) -> None:
        ctrl = self.controller
        if ctrl is None:
            return
        now = self.now_ps
        parts = self.partitions()  # keeps the last busy ones, which a finished run's graph shows
        if self.history and (not self.partition_snapshots or self.partition_snapshots[-1][1] != parts):
            self.partition_snapshots.append((now, parts))
        memo = ctrl.memo
        row = {
            "time_ps": now,
            "lookups": memo.lookups if memo else 0,
            "hits": memo.hits if memo else 0,
            "misses": memo.misses if memo else 0,
            "db_bytes": memo_db_bytes(memo),
            "events_executed": ctrl.state.events_executed,
            "events_skipped": float(ctrl.ff.events_skipped),
        }
        if final and self.sim.flows is not None:
            a = self.sim.flows.attrs
            row["events_skipped"] = float(a.get("events_skipped_estimate", row["events_skipped"]))
        for k, v in row.items():
            self.memo_log[k].append(v)


MEMO_COLUMNS = ("time_ps", "lookups", "hits", "misses", "db_bytes", "events_executed", "events_skipped")


def memo_db_bytes(memo) -> int:
    """Bytes of the memo DB's content: pages in use x page size as the open connection sees them, which counts
    rows still in the write-ahead log once. Adding the log file's size instead counts every rewritten page again,
    so the size dropped to the bare file when closing the DB checkpointed the log; once closed, the file is it."""
    if memo is None:
        return 0
    if memo.conn is not None:
        try:
            pages = memo.conn.execute("PRAGMA page_count").fetchone()[0]
            return int(pages * memo.conn.execute("PRAGMA page_size").fetchone()[0])
        except sqlite3.Error:  # e.g. used from another thread than the run's: the files are still there
            pass
    return memo.size_bytes()


def flow_states(run: LiveRun, now_ps: int | None = None, parts: dict | None = None) -> dict[int, str]:
    """What each active flow (of ``parts``, default the partitions now) is doing at ``now_ps`` (default: the run's
    clock): packet-level, fast-forwarded or memo hit."""
    ctrl = run.controller
    parts = run.partitions() if parts is None else parts
    now = run.now_ps if now_ps is None else now_ps
    states = {f: PACKET for fs in parts.values() for f in fs}
    if ctrl is None:
        return states
    log = ctrl.ff.skips
    running = log.active_of[log.active_of >= 0]
    if not len(running):
        return states
    rows = log.rows(running)
    flows, _, sizes = log.flows_of(running)
    now_in = np.repeat((rows[:, START] <= now) & (now < rows[:, END]), sizes)
    memo = np.repeat(now < rows[:, MEMO_UNTIL], sizes)
    for f, taken, from_memo in zip(flows.tolist(), now_in.tolist(), memo.tolist(), strict=True):
        if taken and f in states:
            states[f] = MEMO if from_memo else FASTFORWARD
    return states


def skip_counts(run: LiveRun, skips=None) -> tuple[int, int]:
    """(fast-forwarded, memo-hit) windows so far: from a live view's ``SkipFeed``, else from the run's log."""
    if skips is not None:
        return skips.counts["fastforward"], skips.counts["memo"]
    windows = run.skip_windows()
    return sum(not w.memo for w in windows), sum(w.memo for w in windows)
