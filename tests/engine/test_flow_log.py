"""The kernel's flow log: every start and completion in order, and returns only when the layer above must act."""

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.runner import advance
from wormhole_lab.simulation import Scenario, prepare
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

N_FLOWS = 6


def short_flows_state(eager, log_rows: int | None = None, stagger_ps: int = 3_000_000):
    """Six staggered 20 kB flows into one host: too short for any steady window. ``eager``: per flow or all."""
    hosts = np.arange(1, N_FLOWS + 1)
    flows = make_flows(hosts, np.zeros(N_FLOWS, dtype=int), np.full(N_FLOWS, 20_000), (hosts - 1) * stagger_ps)
    state = prepare(Scenario(star(N_FLOWS + 1), flows, preset("hp"), telemetry=Telemetry.off())).state
    state.attach_partitions(1_000_000, 50, 0.05, np.broadcast_to(eager, N_FLOWS))
    if log_rows is not None:
        state.flow_log = np.zeros((log_rows, L.FLOG_N), dtype=np.int64)
    return state


def run_collecting(state, quiet: bool = False):
    """Run to the end, taking the log at every return as the layer above would; returns (stops, log rows). With
    ``quiet`` each flow is placed alone in a partition, in member lists the flow log reads, and a flow down to its
    last 4 kB cannot be looked up (``CI_QUIET_TAIL``)."""
    if quiet:
        state.pm_flow, state.pm_part = np.full((N_FLOWS, 1), -1, dtype=np.int32), np.full((N_FLOWS, 1), -1)
        state.ci[L.CI_QUIET_TAIL] = 4000
    stops, rows = [], []
    while True:
        stop = advance(state, 10**12)
        stops.append(stop)
        taken = state.flow_log[: state.g[L.G_FLOW_LOG_N]]
        rows += taken.tolist()
        if quiet:
            for f in taken[taken[:, L.FLOG_STARTED] == 1, L.FLOG_FLOW]:
                state.fl[f, L.FL_PART] = f
                state.pm_part[f, L.PMP_HEAD] = f
                state.parts[f, L.PA_SPENT] = 0
        state.g[L.G_FLOW_LOG_N] = 0
        state.g[L.G_LOG_STARTS] = 0
        if stop not in ("flow_event", "steady"):
            return stops, np.array(rows)


def check_log(state, rows):
    fl = state.fl
    assert len(rows) == 2 * N_FLOWS
    assert np.all(np.diff(rows[:, L.FLOG_TIME]) >= 0)
    for f in range(N_FLOWS):
        (start,) = rows[(rows[:, L.FLOG_FLOW] == f) & (rows[:, L.FLOG_STARTED] == 1), L.FLOG_TIME]
        (end,) = rows[(rows[:, L.FLOG_FLOW] == f) & (rows[:, L.FLOG_STARTED] == 0), L.FLOG_TIME]
        assert start == fl[f, L.FL_STARTED_AT] and end == fl[f, L.FL_FINISH]


def test_without_a_reason_to_stop_the_kernel_logs_every_flow_event_and_runs_through():
    state = short_flows_state(eager=False)
    stops, rows = run_collecting(state)
    assert stops == ["all_done"]
    check_log(state, rows)


def test_eager_runs_return_at_every_flow_event():
    state = short_flows_state(eager=True)
    stops, rows = run_collecting(state)
    assert stops == ["flow_event"] * (2 * N_FLOWS) + ["all_done"]
    check_log(state, rows)


def test_only_the_events_of_eager_flows_make_the_kernel_return():
    state = short_flows_state(eager=np.isin(np.arange(N_FLOWS), [1, 4]))
    stops, rows = run_collecting(state)
    assert stops == ["flow_event"] * 4 + ["all_done"]
    check_log(state, rows)


def test_flows_that_start_at_the_same_instant_come_back_in_one_return():
    state = short_flows_state(eager=True, stagger_ps=0)
    advance(state, 10**12)
    assert state.g[L.G_FLOW_LOG_N] == N_FLOWS and state.flow_log[:N_FLOWS, L.FLOG_STARTED].all()


@pytest.mark.parametrize("rows", [1, 4, 5])
def test_a_full_log_makes_the_kernel_return_before_it_would_overflow(rows):
    state = short_flows_state(eager=False, log_rows=rows)
    stops, logged = run_collecting(state)
    assert stops.count("flow_event") == 2 * N_FLOWS // rows
    check_log(state, logged)


def test_a_started_flow_waits_in_the_unplaced_bucket_which_is_never_a_candidate():
    state = short_flows_state(eager=False)
    advance(state, 1_000_000)  # flow 0 has started
    unplaced = state.parts.shape[0] - 1
    assert state.fl[0, L.FL_PART] == unplaced
    assert state.parts[unplaced, L.PA_CHANGED_AT] == np.iinfo(np.int64).max


def test_a_completion_marks_its_partition_as_possibly_split_at_the_first_completion_only():
    state = short_flows_state(eager=False)
    advance(state, 4_000_000)  # flows 0 and 1 have started
    state.fl[[0, 1], L.FL_PART] = 0  # as the layer above would place them, without taking the log
    stops, _ = run_collecting(state)
    assert stops == ["all_done"]
    assert state.parts[0, L.PA_LEFT_AT] == state.fl[0, L.FL_FINISH] < state.fl[1, L.FL_FINISH]


def test_an_eager_completion_that_leaves_only_spent_members_is_logged_without_a_return():
    state = short_flows_state(eager=True)
    stops, rows = run_collecting(state, quiet=True)
    assert stops == ["flow_event"] * N_FLOWS + ["all_done"]  # the starts only
    check_log(state, rows)


def test_a_quiet_completion_returns_while_a_start_waits_in_the_log():
    """Only flow 0 is eager; flow 1 starts while it runs: its partition is not known yet, so flow 0's completion
    may leave one the layer above looks up."""
    state = short_flows_state(eager=np.arange(N_FLOWS) == 0, stagger_ps=1_000_000)
    stops, rows = run_collecting(state, quiet=True)
    check_log(state, rows)
    assert state.fl[1, L.FL_STARTED_AT] < state.fl[0, L.FL_FINISH]
    assert stops == ["flow_event"] * 2 + ["all_done"]


def test_once_a_qp_went_back_every_eager_completion_returns():
    state = short_flows_state(eager=True)
    state.g[L.G_WENT_BACK] = 1
    stops, rows = run_collecting(state, quiet=True)
    assert stops == ["flow_event"] * (2 * N_FLOWS) + ["all_done"]
    check_log(state, rows)
