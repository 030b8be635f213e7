"""The in-kernel steady test: DCQCN's at-line-rate and cycle verdicts, on hand-made samples and on runs."""

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.rate_window import _cycle_span, _mark_cycle, _push_rate, _steady_span
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.settings import WormholeConfig

LINE = 100 * 10**9
WINDOW, SHORT = 60, 6
US = 10**6


def knobs(line_window=SHORT, cycles=0):
    ci = np.zeros(L.CI_N, dtype=np.int64)
    ci[L.CI_STEADY_WINDOW], ci[L.CI_STEADY_LINE], ci[L.CI_STEADY_CYCLES] = WINDOW, line_window, cycles
    ci[L.CI_STEADY_INTERVAL], ci[L.CI_PAYLOAD] = US, 1000
    cf = np.zeros(L.CF_N)
    cf[L.CF_THETA] = 0.05
    return ci, cf


def pushed(rates, window=WINDOW):
    """A flow's row, its slot's wide row and ring after the samples ``rates`` (oldest first) came in, as the
    sampler writes them."""
    fl = np.zeros((1, L.FL_N), dtype=np.int64)
    fw = np.zeros((1, L.FW_N), dtype=np.int64)
    ring = np.zeros((1, window))
    for rate in rates:
        pos = fw[0, L.FW_RING_POS]
        _push_rate(fl, fw, ring, 0, 0, pos, window, rate)
        fw[0, L.FW_RING_POS] = (pos + 1) % window
        fw[0, L.FW_RING_N] = min(fw[0, L.FW_RING_N] + 1, window)
    return fl, fw, ring


def span(rates, target=LINE, cnp_pending=0, line_window=SHORT, cycles=0):
    """_steady_span of one flow whose newest samples are ``rates`` (oldest first) in a ring of WINDOW."""
    fl, fw, ring = pushed(rates)
    fw[0, L.FW_MAX_RATE], fw[0, L.FW_TARGET], fw[0, L.FW_DEC_CNP] = LINE, target, cnp_pending
    ci, cf = knobs(line_window, cycles)
    return _steady_span(fl, fw, ci, cf, ring, 0, 0, min(len(rates), WINDOW))


@pytest.mark.parametrize("window", [7, 50])
def test_the_windows_sums_and_extremes_kept_as_samples_come_are_those_of_the_window(window):
    """Odd and even windows, rates that repeat (an extreme leaving while its equal stays) and that move: after
    every sample, the kept half sums, lowest and highest are the window's own, read from the ring."""
    rng = np.random.default_rng(window)
    rates = rng.choice([40, 41, 42, 90], size=400) * 10**9 + rng.integers(0, 3, size=400) * 10**8
    half = window // 2
    for n in range(window, len(rates) + 1, 13):
        _, fw, _ = pushed(rates[:n], window)
        last = rates[n - window : n]
        assert fw[0, L.FW_RING_OLDER] == last[:half].sum() and fw[0, L.FW_RING_NEWER] == last[window - half :].sum()
        assert fw[0, L.FW_RING_LO] == last.min() and fw[0, L.FW_RING_HI] == last.max()


def test_a_dcqcn_flow_pinned_at_line_rate_is_steady_after_the_short_window():
    assert span([LINE] * SHORT) == SHORT
    assert span([LINE] * (SHORT - 1)) == 0  # too few samples yet
    assert span([LINE] * SHORT, line_window=0) == 0  # the other CCAs wait for the whole window


@pytest.mark.parametrize(
    "rates, target, pending",
    [
        ([LINE] * (SHORT - 1) + [LINE // 2], LINE // 2, 0),  # just cut
        ([LINE // 2] + [LINE] * (SHORT - 1), LINE, 0),  # a cut inside the window, recovered since
        ([LINE] * SHORT, LINE, 1),  # a CNP came; the decrease check has not run yet
        ([LINE * 9 // 10] * SHORT, LINE, 0),  # recovering towards the target: the next RP tick raises it
    ],
)
def test_a_dcqcn_flow_that_is_cutting_or_recovering_is_not_steady_on_the_short_window(rates, target, pending):
    assert span(rates, target, pending) == 0


def test_below_line_rate_a_climbing_dcqcn_flow_is_steady_only_without_the_cycle_test():
    """In hyper increase the rate climbs 0.2 Gb/s per RP period (0.5 % at 43 Gb/s): the window's spread and
    trend tests pass it, and a lone flow left behind by an incast was skipped at a frozen rate (2.6 % late)."""
    climbing = [43e9 + 2e8 * (i // 30) for i in range(WINDOW)]
    assert span(climbing, line_window=SHORT) == WINDOW
    assert span(climbing, line_window=SHORT, cycles=3) == 0
    assert span([LINE] * SHORT, cycles=3) == SHORT  # at line rate the short verdict still holds


def cycled(periods, acked, now_after=100, skip_start=0, sent=0, cycles=3):
    """_cycle_span and FF_GOODPUT of a flow whose cycles (cut to cut) lasted ``periods`` us and acknowledged
    ``acked`` bytes each (and its bytes in flight grew by ``sent`` each), ``now_after`` us into the cycle in
    progress, its partition last skipped at ``skip_start`` us."""
    fl = np.zeros((1, L.FL_N), dtype=np.int64)
    fw = np.zeros((1, L.FW_N), dtype=np.int64)
    ff = np.zeros((1, L.FF_N))
    t, una = 1000 * US, 10**6
    for k, (period, nbytes) in enumerate(zip([0, *periods], [0, *acked], strict=True)):
        t, una = t + period * US, una + nbytes
        fw[0, L.FW_SND_UNA], fw[0, L.FW_SND_NXT] = una, una + k * sent
        fw[0, L.FW_CYC_ROSE] = 1
        _mark_cycle(fl, fw, 0, 0, t, 1.0, 2.0)  # a cut after a rise
    parts = np.zeros((2, L.PA_N), dtype=np.int64)
    parts[0, L.PA_SKIP_START] = skip_start * US
    ci, cf = knobs(cycles=cycles)
    return _cycle_span(fl, ff, fw, ci, cf, parts, 0, 0, t + now_after * US), ff[0, L.FF_GOODPUT]


def test_a_dcqcn_flow_that_repeats_its_cycle_is_steady_at_the_goodput_of_whole_cycles():
    n, goodput = cycled([1600, 1700, 1650], [8_000_000, 8_600_000, 8_200_000])
    assert n == 4950 + 100 + 1
    assert goodput == pytest.approx(24_800_000 / (4950 * US))
    assert cycled([1600, 1700, 1650], [8_000_000] * 3, cycles=2)[0] == 3350 + 100 + 1  # the last two only


@pytest.mark.parametrize(
    "periods, acked, kw",
    [
        ([1600, 1700], [8_000_000] * 2, {}),  # too few cycles yet
        ([1600, 1700, 1650], [8_000_000, 8_600_000, 7_600_000], {}),  # goodputs 9 % apart: shares still move
        ([1400, 1700, 1650], [7_000_000, 8_500_000, 8_250_000], {}),  # lengths 19 % apart: still settling
        ([1600, 1700, 1650], [8_000_000] * 3, {"now_after": 1800}),  # the cycle in progress has run too long
        ([1600, 1700, 1650], [8_000_000] * 3, {"skip_start": 2000}),  # the cycles began before the last skip
        ([1600, 1700, 1650], [8_000_000] * 3, {"sent": 2_000_000}),  # bytes in flight grew over the cycles
        ([1600, 1700, 1650], [8_000_000] * 3, {"cycles": 0}),  # off (the other CCAs)
    ],
)
def test_a_dcqcn_flow_whose_cycles_do_not_repeat_is_not_steady(periods, acked, kw):
    assert cycled(periods, acked, **kw)[0] == 0


def test_a_burst_of_cuts_starts_one_cycle():
    fl = np.zeros((1, L.FL_N), dtype=np.int64)
    fw = np.zeros((1, L.FW_N), dtype=np.int64)
    fw[0, L.FW_CYC_ROSE] = 1
    for t, (rate, previous) in enumerate([(5, 6), (4, 5), (3, 4), (4, 3), (4, 4), (3, 4)]):
        _mark_cycle(fl, fw, 0, 0, t, rate, previous)
    assert fw[0, L.FW_CYC_N] == 2
    assert fw[0, L.FW_CYC_MARKS] == 0 and fw[0, L.FW_CYC_MARKS + 3] == 5


def run(flows, n_hosts, mode):
    scenario = Scenario(star(n_hosts), flows, preset("dcqcn"), telemetry=Telemetry.off())
    return Simulation(scenario, mode=mode).run()


def test_a_sub_millisecond_dcqcn_flow_at_line_rate_is_fast_forwarded():
    """2 MB at 100 Gb/s lasts 170 us: the two-RP-period window (600 us) never saw it steady."""
    flows = make_flows([0], [1], [2_000_000], 0)
    packet, wormhole = run(flows, 2, "packet"), run(flows, 2, "wormhole")
    assert wormhole.attrs["skips"] == 1
    assert float(wormhole["time_fastforward_fraction"][0]) > 0.5
    assert abs(wormhole["fct"].item() / packet["fct"].item() - 1) < 0.01


def test_a_dcqcn_incast_is_not_skipped_while_it_cuts_its_rates():
    """Two 4 MB flows into one host cut their rates from the first CNPs on (about 50 us in) and never get back
    to line rate while both run: the flow that completes first is never skipped."""
    flows = make_flows([1, 2], [0, 0], [4_000_000, 4_000_000], 0)
    packet, wormhole = run(flows, 3, "packet"), run(flows, 3, "wormhole")
    first = int(np.argmin(packet["fct"].values))
    assert float(wormhole["time_fastforward_fraction"][first]) == 0
    np.testing.assert_allclose(wormhole["fct"].values, packet["fct"].values, rtol=0.01)


@pytest.mark.parametrize("n, size", [(2, 150_000_000), (4, 50_000_000)])
def test_a_settled_dcqcn_incast_is_fast_forwarded_at_its_cycle_goodput(n, size):
    """Once its cuts come every 1.6-1.9 ms with the same goodput per flow (from about 5 ms in), the incast is
    skipped over whole cycles at their goodput, and every flow ends within 1 % of packet mode."""
    flows = make_flows(list(range(1, n + 1)), [0] * n, [size] * n, 0)
    packet, wormhole = run(flows, n + 1, "packet"), run(flows, n + 1, "wormhole")
    assert wormhole.attrs["skips"] > 0
    assert float(wormhole["time_fastforward_fraction"].min()) > 0.2
    np.testing.assert_allclose(wormhole["fct"].values, packet["fct"].values, rtol=0.01)


def hpcc_run(flows, n_hosts):
    # memo off: these tests count the sampler's skips, and a hit would stand for a flow's transient
    wormhole = WormholeConfig(memo=False)
    scenario = Scenario(star(n_hosts), flows, preset("hp"), telemetry=Telemetry.off(), wormhole=wormhole)
    return Simulation(scenario, mode="wormhole").run()


def test_while_every_active_flow_is_skipped_the_sampler_does_not_tick():
    """A lone HPCC flow is skipped from its first window to its tail: twice the bytes is 1.8 ms more skip, which
    at one tick per microsecond would be ~1,800 events more."""
    short = hpcc_run(make_flows([0], [1], [20_000_000], 0), 2)
    long = hpcc_run(make_flows([0], [1], [40_000_000], 0), 2)
    assert short.attrs["skips"] == long.attrs["skips"] == 1
    assert long.attrs["events_executed"] - short.attrs["events_executed"] < 100


def test_the_sampler_wakes_for_a_flow_that_starts_during_a_skip():
    """A flow that starts while the only other one is skipped (on other ports) is sampled from its start on, as
    if it ran alone: its skips and FCT are those of a run without the other flow."""
    alone = hpcc_run(make_flows([2], [3], [10_000_000], 1_000_000_000), 4)
    beside = hpcc_run(make_flows([0, 2], [1, 3], [40_000_000, 10_000_000], [0, 1_000_000_000]), 4)
    assert alone.attrs["skips"] == 1 and beside.attrs["skips"] == 2
    assert beside["fct"].values[1] == alone["fct"].item()
