"""Flow-level mode's Python side: check the engine's prepared arrays, build the loop's tables, run the loop
(growing its event queue when asked), and leave the results in the engine's flow table, where ``results`` reads them.
"""

import time

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel
from wormhole_lab.engine.runner import STOP_NAMES
from wormhole_lab.engine.state import EngineState
from wormhole_lab.engine.warmup import tiny_state
from wormhole_lab.errors import InputError
from wormhole_lab.flowlevel import loop
from wormhole_lab.flowlevel.model import flow_terms, port_capacity

TELEMETRY_NOTE = (
    "none: flow mode has no queues, no packets and no CCA state, so it records no port or flow series "
    "(each flow's start and completion are in the flow table)"
)


def check_state(state: EngineState) -> None:
    """The arrays the flow-level kernels index, checked before any of them runs (Numba does not bounds-check)."""
    fl, pt, ports = state.fl, state.pt, state.path_ports
    n, n_ports = fl.shape[0], pt.shape[0]

    def fail(where: str, problem: str) -> None:
        raise InputError(
            f"flow mode: {where}",
            problem,
            "build the state with simulation.prepare(scenario), which routes every flow of a valid scenario",
        )

    if np.any((ports < 0) | (ports >= n_ports)):
        fail("EngineState.path_ports", f"a port id outside 0..{n_ports - 1}")
    for begin, length, what in ((L.FL_PATH_BEGIN, L.FL_PATH_LEN, "data"), (L.FL_APATH_BEGIN, L.FL_APATH_LEN, "ACK")):
        bad = np.flatnonzero((fl[:, length] < 1) | (fl[:, begin] < 0) | (fl[:, begin] + fl[:, length] > len(ports)))
        if bad.size:
            fail(f"flow {bad[0]}", f"its {what} path lies outside path_ports or is empty")
    if np.any(pt[:, L.PT_RATE] <= 0) or np.any(pt[:, L.PT_DELAY] < 0):
        fail("EngineState.pt", "a port with a rate <= 0 or a negative delay")
    bad = np.flatnonzero(fl[:, L.FL_SIZE] <= 0)
    if bad.size:
        fail(f"flow {bad[0]}", f"size {fl[bad[0], L.FL_SIZE]} B is not positive")
    if state.ci[L.CI_PAYLOAD] <= 0 or state.ci[L.CI_TIME_QUANTUM] <= 0:
        fail("EngineState.ci", "the payload size and time quantum must be positive")
    off, children = state.child_offset, state.children
    if len(off) != n + 1 or off[0] != 0 or off[-1] != len(children) or np.any(np.diff(off) < 0):
        fail("EngineState.child_offset", "not a CSR offset array over the flows")
    if np.any((children < 0) | (children >= n)) or np.any(fl[:, L.FL_DEPS_LEFT] != np.bincount(children, minlength=n)):
        fail("EngineState.children", "dependants outside the flow table, or not matching FL_DEPS_LEFT")
    if len(state.child_gaps) not in (0, len(children)):
        fail("EngineState.child_gaps", "neither empty nor one delay per entry of children")
    if state.g[L.G_EVENTS] or state.g[L.G_DONE_COUNT] or state.g[L.G_N_ACTIVE]:
        fail("EngineState.g", "the state has run already")
    pending = wheel.pending(state.events)
    if np.any(pending[:, L.E_KIND] != L.EV_FLOW_START) or np.any((pending[:, L.E_A] < 0) | (pending[:, L.E_A] >= n)):
        fail("EngineState.events", "flow mode starts from a fresh state whose only events are flow starts")


class FlowLevel:
    """Flow-level mode on a freshly prepared engine state: ``advance(t)`` runs it, ``finish()`` records what each
    flow delivered, ``attrs()`` what the run did. ``incremental=False`` recomputes every active flow at every
    instant with the plain water-filling (slower; the tests compare it with the incremental default)."""

    def __init__(self, state: EngineState, incremental: bool = True):
        check_state(state)
        self.state, self.incremental = state, bool(incremental)
        fl, n, n_ports = state.fl, state.fl.shape[0], state.pt.shape[0]
        begin, length = fl[:, L.FL_PATH_BEGIN], fl[:, L.FL_PATH_LEN]
        flow_off = np.concatenate([[0], np.cumsum(length)]).astype(np.int64)
        # the data path of each flow, copied flow by flow: the kernels walk it as one CSR table
        hop = np.arange(flow_off[-1]) - np.repeat(flow_off[:-1], length)
        flow_ports = state.path_ports[np.repeat(begin, length) + hop]
        owner = np.repeat(np.arange(n), length)
        if len(np.unique(owner * n_ports + flow_ports)) != len(owner):
            raise InputError("flow mode: EngineState.path_ports", "a flow crosses a port twice", "route shortest paths")
        port_off = np.concatenate([[0], np.cumsum(np.bincount(flow_ports, minlength=n_ports))]).astype(np.int64)
        cap = np.zeros(n_ports)
        hpcc = state.ci[L.CI_CC] == L.CC_HPCC
        eta = float(state.cf[L.CF_U_TARGET]) if hpcc else 1.0  # HPCC fills a link to its target utilisation
        port_capacity(state.pt, state.ci, eta, cap)
        wire, latency, delivery = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        flow_terms(fl, state.pt, state.path_ports, state.ci, cap, eta, wire, latency, delivery)
        # the starts scheduled by prepare() leave the event queue for a list the loop merges with it
        starts = wheel.pending(state.events)
        state.events = wheel.new_events(state.g, state.events.shape[0] - wheel.TABLE_ROWS)
        state.g[L.G_UNLINKED] = 0
        i64, entries = np.int64, len(owner)
        heap = n_ports + n + entries + 1  # a fill pushes each port and outside flow once, then a port per subtraction
        # the rate state and scratch for one instant are allocated here: kernels never allocate
        self.tables = loop.FlowTables(
            flow_off=flow_off, flow_ports=flow_ports, port_off=port_off, port_flows=np.zeros(entries, i64),
            port_cnt=np.zeros(n_ports, i64), entry_pos=np.zeros(entries, i64), cap=cap, wire=wire, latency=latency,
            delivery=delivery, rate=np.zeros(n), remaining=np.zeros(n), updated_at=np.zeros(n, i64),
            neck=np.full(n, -1, i64), load=np.zeros(n_ports), neck_cnt=np.zeros(n_ports, i64),
            flow_mark=np.zeros(n, i64), port_mark=np.zeros(n_ports, i64),
            comp_flows=np.zeros(n, i64), comp_ports=np.zeros(n_ports, i64), res=np.zeros(n_ports),
            cnt=np.zeros(n_ports, i64), frozen=np.zeros(n, i64), fresh=np.zeros(n, i64), share=np.zeros(n),
            port_level=np.zeros(n_ports), port_ver=np.zeros(n_ports, i64), dirty=np.zeros(n_ports, i64),
            dirty_mark=np.zeros(n_ports, i64), outside=np.zeros(n, i64), seen=np.zeros(n, i64),
            changed=np.zeros(n_ports, i64), changed_mark=np.zeros(n_ports, i64), loose=np.zeros(n_ports, i64),
            loose_mark=np.zeros(n_ports, i64), delta=np.zeros(n_ports), prev_neck=np.zeros(n, i64),
            hkey=np.zeros(heap), hitem=np.zeros(heap, i64), hver=np.zeros(heap, i64),
            start_time=starts[:, L.E_TIME].copy(), start_seq=starts[:, L.E_SEQ].copy(),
            start_flow=starts[:, L.E_A].copy(), drain_time=np.zeros(n, i64), drain_seq=np.zeros(n, i64),
            drain_flow=np.zeros(n, i64), drain_pos=np.full(n, -1, i64), stats=np.zeros(loop.S_N, i64),
        )  # fmt: skip

    def advance(self, t_stop_ps: int) -> str:
        """Run instants up to ``t_stop_ps``: 'time', 'all_done' or 'idle' (no event left, flows unfinished)."""
        s = self.state
        while True:
            reason = loop.run_until(s.arrays(), self.tables, self.incremental, t_stop_ps)
            if reason != L.STOP_GROW:
                return STOP_NAMES[reason]
            s.events = wheel.grown(s.g, s.events)

    def next_event_ps(self) -> int | None:
        """When the next instant is (the earliest pending start, drain or queued event), or None."""
        ft, times = self.tables, [wheel.pending(self.state.events)[:, L.E_TIME]]
        times.append(ft.start_time[ft.stats[loop.S_NEXT_START] :])
        times.append(ft.drain_time[: ft.stats[loop.S_DRAINS]])
        both = np.concatenate(times)
        return int(both.min()) if both.size else None

    def finish(self) -> None:
        """Bytes delivered per flow (``FL_RCV_NXT``): all of a completed or drained flow, the share of its wire
        bytes drained so far for one still sending, none for one that never started. A delivery time
        (``FL_DELIVERED_AT``, set at the drain) after the run stopped is unset: the last byte has not arrived."""
        fl, now, ft = self.state.fl, self.state.now_ps, self.tables
        fl[fl[:, L.FL_DELIVERED_AT] > now, L.FL_DELIVERED_AT] = -1
        left = np.maximum(ft.remaining - ft.rate * (now - ft.updated_at), 0.0)
        sent = np.where(fl[:, L.FL_STATE] == L.FS_PENDING, 0.0, 1.0 - left / ft.wire)
        fl[:, L.FL_RCV_NXT] = np.floor(sent * fl[:, L.FL_SIZE]).astype(np.int64)

    def attrs(self) -> dict:
        stats = self.tables.stats
        return {
            "rate_recomputations": int(stats[loop.S_RECOMPUTES]),
            "flows_rerated": int(stats[loop.S_RERATED]),
            "largest_recomputed_set": int(stats[loop.S_LARGEST]),
            "filling_levels": int(stats[loop.S_LEVELS]),
            "fill_rounds": int(stats[loop.S_ROUNDS]),
            "flows_visited": int(stats[loop.S_VISITED]),
            "incremental": int(self.incremental),
            "telemetry": TELEMETRY_NOTE,
        }


def compile_flow_level() -> float:
    """Compile (or load from the cache) the flow-level kernels on a one-flow state; returns the seconds taken."""
    t0 = time.perf_counter()
    FlowLevel(tiny_state()).advance(10**9)
    return time.perf_counter() - t0
