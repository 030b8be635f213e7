"""Workloads run on the engine: the analytic ring all-reduce time, and dependencies honoured on a real run."""

import numpy as np
import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import rail_optimized
from wormhole_lab.topology.routing import Routes
from wormhole_lab.workload.collectives import ring_allreduce
from wormhole_lab.workload.flows import FlowBuilder
from wormhole_lab.workload.llm import gpt_job


def test_uncongested_ring_allreduce_takes_the_analytic_time():
    n, size = 4, 8_000_000
    topo = rail_optimized(n, 8)
    ranks = [s * 8 for s in range(n)]  # GPU 0 of each server: one rail
    builder = FlowBuilder()
    ring_allreduce(builder, ranks, size)
    flows = builder.build()
    ds = Simulation(Scenario(topo, flows, preset("dcqcn"), telemetry=Telemetry.off())).run()
    packets = -(-(size // n) // 1000)
    # in a ring every NIC sends its chunk while ACKing the one it receives: per packet a 1048 B frame and
    # a 60 B ACK leave the NIC, 83 ns + 4 ns on the reference's truncating 1 ns clock at 100 Gb/s
    per_packet_ps = (83 + 4) * 1000
    step_latency_ps = Routes(topo).pair_base_rtt_ns(ranks[0], ranks[1]) * 1000  # last packet out + its ACK back
    analytic = 2 * (n - 1) * (packets * per_packet_ps + step_latency_ps)
    assert ds.attrs["iteration_time_ps"] == pytest.approx(analytic, rel=0.01)
    assert len(flows) == 2 * (n - 1) * n


def test_no_flow_starts_before_its_dependencies_finish_on_a_real_run():
    topo, flows = gpt_job("GPT-7B", 32, micro_batches=2)
    small = flows.__class__(**{**flows.__dict__, "size": np.maximum(flows.size // 500, 1000)})
    ds = Simulation(Scenario(topo, small, preset("hp"), telemetry=Telemetry.off())).run()
    assert (ds["completed"] == 1).all()
    end = ds["start"].values + ds["fct"].values
    start = ds["start"].values
    for f in range(len(small)):
        deps = small.deps(f)
        if len(deps):
            assert start[f] >= end[deps].max() + small.gap_ps[f]
    assert ds.attrs["iteration_time_ps"] >= end.max() - start.min()
    assert {"pp", "dp"} <= {p for p in ds["phase"].values.tolist() if p}
    assert ds.attrs["dp_comm_time_ps"] > 0 and ds.attrs["pp_comm_time_ps"] > 0
