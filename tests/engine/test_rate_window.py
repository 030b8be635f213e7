"""The in-kernel steady test: DCQCN's at-line-rate verdict, on hand-made sample rings and on runs."""

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.presets import preset
from wormhole_lab.engine.rate_window import _steady_span
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

LINE = 100 * 10**9
WINDOW, SHORT = 60, 6


def span(rates, target=LINE, cnp_pending=0, line_window=SHORT):
    """_steady_span of one flow whose newest samples are ``rates`` (oldest first) in a ring of WINDOW."""
    fl = np.zeros((1, L.FL_N), dtype=np.int64)
    fl[0, L.FL_MAX_RATE], fl[0, L.FL_TARGET], fl[0, L.FL_DEC_CNP] = LINE, target, cnp_pending
    fl[0, L.FL_RING_POS] = len(rates) % WINDOW
    ring = np.zeros((1, WINDOW))
    ring[0, : len(rates)] = rates
    ci = np.zeros(L.CI_N, dtype=np.int64)
    ci[L.CI_STEADY_WINDOW], ci[L.CI_STEADY_LINE] = WINDOW, line_window
    cf = np.zeros(L.CF_N)
    cf[L.CF_THETA] = 0.05
    return _steady_span(fl, ci, cf, ring, 0, len(rates))


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
