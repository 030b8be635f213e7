"""HPCC on an incast and a lone flow: near-zero queue, utilisation near eta, shared bottleneck."""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows

ETA = 0.95
LINE = 100e9


@pytest.fixture(scope="module")
def incast_run():
    n = 8
    flows = make_flows(list(range(1, n + 1)), [0] * n, [1_000_000] * n, 0)
    ds = Simulation(Scenario(star(n + 1), flows, preset("hp", 100, hpai_mbps=50))).run()
    t_us = ds.time.values / 1e6
    converged = (t_us > 50) & (t_us < ds["fct"].min().item() / 1e6 - 5)  # after the first RTTs, before any finish
    return ds, converged, int(ds.port[ds.port_peer == 0][0])


def test_bottleneck_queue_stays_far_below_kmin(incast_run):
    ds, converged, bottleneck = incast_run
    kmin = preset("hp").kmin_bytes[100 * 10**9]
    queue = ds["port_queue"].sel(port=bottleneck).values[converged]
    assert queue.max() < 0.05 * kmin
    assert ds["hpcc_u"].attrs["units"] == "1"


def test_bottleneck_utilisation_settles_near_eta(incast_run):
    ds, converged, bottleneck = incast_run
    utilisation = ds["port_tx_rate"].sel(port=bottleneck).values[converged].mean() / LINE
    assert utilisation == pytest.approx(ETA, abs=0.02)
    assert np.nanmean(ds["hpcc_u"].values[converged]) == pytest.approx(ETA, abs=0.03)


def test_flows_share_the_bottleneck_nearly_equally(incast_run):
    ds, converged, _ = incast_run
    acked = ds["flow_acked"].values[converged]
    throughput = acked[-1] - acked[0]
    jain = throughput.sum() ** 2 / (len(throughput) * (throughput**2).sum())
    assert jain > 0.95


def test_lone_flow_runs_at_eta_times_line_rate():
    ds = Simulation(Scenario(star(2), make_flows([0], [1], [2_000_000], 0), preset("hp"))).run()
    rate = ds["flow_rate"].sel(flow=0).values
    steady = rate[20:-10]
    assert np.nanmean(steady) == pytest.approx(ETA * LINE, rel=0.02)
