"""TIMELY on an 8-to-1 incast with the reference's parameters.

The first RTT at line rate fills 14 MB of queue; once it drains, TIMELY oscillates around its
gradient rule: the RTT swings between a few us and tens of us (below T_low much of the time, so the
reference parameters never hold the RTT inside [T_low, T_high]), never above T_high, and every flow
gets the same share.
"""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows


@pytest.fixture(scope="module")
def timely_incast():
    n = 8
    flows = make_flows(list(range(1, n + 1)), [0] * n, [20_000_000] * n, 0)
    scenario = Scenario(star(n + 1), flows, preset("timely"), telemetry=Telemetry(interval_ps=10_000_000))
    ds = Simulation(scenario).run()
    t_us = ds.time.values / 1e6
    after_drain = (t_us > 3000) & (t_us < ds["fct"].min().item() / 1e6 - 50)
    return ds, after_drain


def test_timely_incast_completes_and_shares_the_bottleneck_equally(timely_incast):
    ds, _ = timely_incast
    assert (ds["completed"] == 1).all()
    fct = ds["fct"].values
    assert fct.max() / fct.min() < 1.05


def test_timely_rtt_stays_below_t_high_and_the_link_stays_mostly_busy(timely_incast):
    ds, after_drain = timely_incast
    cfg = preset("timely")
    rtt = ds["timely_rtt"].values[after_drain]
    assert np.nanmax(rtt) < cfg.timely_t_high_ps * 1e-12
    assert np.nanmin(rtt) < cfg.timely_t_low_ps * 1e-12  # the oscillation documented above
    bottleneck = int(ds.port[ds.port_peer == 0][0])
    assert ds["port_tx_rate"].sel(port=bottleneck).values[after_drain].mean() > 0.7 * 100e9
