"""Python side of the kernel loop: call it, grow what it asks for, report why it stopped."""

import time

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.kernel import event_loop
from wormhole_lab.engine.state import EngineState
from wormhole_lab.engine.warmup import tiny_state

STOP_NAMES = {
    L.STOP_TIME: "time",
    L.STOP_ALL_DONE: "all_done",
    L.STOP_IDLE: "idle",
    L.STOP_CHUNK: "chunk",
    L.STOP_FLOW_EVENT: "flow_event",
    L.STOP_STEADY: "steady",
    L.STOP_INVARIANT: "invariant",
}


def advance(state: EngineState, t_stop_ps: int) -> str:
    """Run events up to ``t_stop_ps``; returns 'time', 'all_done', 'idle' (no event left, flows unfinished)
    or 'chunk' (a telemetry chunk is full: take it with ``state.take_chunk()`` and call again); with
    partitions attached also 'flow_event' (g[G_FLOW_EVENT] started or completed) and 'steady'."""
    loop = event_loop(state.ci)  # its CCA's, with or without partitions: compiles only what it runs
    while True:
        reason = loop(state.arrays(), t_stop_ps)
        if reason != L.STOP_GROW:
            return STOP_NAMES[reason]
        state.grow()


_compiled = set()  # the CCAs compile_engine compiled for


def compile_engine(cca: str = "dcqcn") -> float:
    """Compile (or load from the cache) the kernels of packet runs with the congestion control ``cca`` (each CCA has
    its own event loop: kernel.event_loop) on a one-flow scenario, once per process and CCA; returns the seconds
    taken (0 after the first call: its run took ~1 ms of each later one).

    Called before timed runs so that 'wall time' measures simulation, not compilation."""
    if cca in _compiled:
        return 0.0
    t0 = time.perf_counter()
    advance(tiny_state(cca), 10**9)
    _compiled.add(cca)
    return time.perf_counter() - t0
