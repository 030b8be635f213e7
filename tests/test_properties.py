"""Property-based tests of the engine: random small clusters, random flow sets, every CCA preset, both modes.

For each generated scenario, with ``check_invariants=True`` (packet conservation, buffer accounting, PFC,
monotone time, checked at every kernel stop):
  * the run completes every flow and no invariant breaks;
  * no flow beats physics: FCT >= standalone FCT x (1 - 0.05) (one-packet flows may finish up to ~5 % under
    the reference's formula, which counts a full header per packet);
  * the run is deterministic: the same scenario twice gives identical FCTs;
  * Wormhole mode never loses or invents bytes: every flow completes with ``delivered == size``.
Failing examples are kept in ``tests/.hypothesis`` and replayed first on the next run.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from wormhole_lab.engine.presets import PRESETS, preset
from wormhole_lab.simulation import MODES, Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import fat_tree, leaf_spine, star
from wormhole_lab.workload.flows import make_flows

EPSILON = 0.05
MAX_EXAMPLES = 25  # per (preset, mode): 8 presets x 2 modes x 25 = 400 scenarios, each run twice
DATABASE = DirectoryBasedExampleDatabase(str(Path(__file__).resolve().parent / ".hypothesis"))

SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=DATABASE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

topologies = st.one_of(
    st.builds(star, st.integers(2, 6)),
    st.builds(leaf_spine, st.integers(2, 3), st.integers(1, 2), st.integers(1, 3)),
    st.builds(fat_tree, st.sampled_from([2, 4])),
)


@st.composite
def traffic(draw):
    """A small topology and 1-6 flows between random hosts, with random sizes and start times."""
    topo = draw(topologies)
    hosts = topo.hosts.tolist()
    n = draw(st.integers(1, 6))
    src, dst, size, start = [], [], [], []
    for _ in range(n):
        s, d = draw(st.lists(st.sampled_from(hosts), min_size=2, max_size=2, unique=True))
        src.append(s)
        dst.append(d)
        # one-packet flows, packet boundaries, short flows and a few long enough to turn steady (Wormhole skips)
        size.append(
            draw(
                st.one_of(
                    st.integers(1, 1000),
                    st.sampled_from([1000, 1001, 2000]),
                    st.integers(1, 200_000),
                    st.integers(200_000, 3_000_000),
                    st.integers(3_000_000, 20_000_000),
                )
            )
        )
        start.append(draw(st.integers(0, 20_000)) * 1000)  # up to 20 us, on the reference's 1 ns clock
    order = np.argsort(start, kind="stable")
    return topo, make_flows(*(np.asarray(col)[order] for col in (src, dst, size, start)))


def _describe(scenario: Scenario) -> str:
    f = scenario.flows
    return f"{scenario.name}: " + ", ".join(
        f"{s}->{d} {z} B @{t // 1000} ns"
        for s, d, z, t in zip(f.src.tolist(), f.dst.tolist(), f.size.tolist(), f.start_ps.tolist(), strict=True)
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cca", PRESETS)
@SETTINGS
@given(case=traffic())
def test_engine_properties(cca, mode, case):
    topo, flows = case
    config = preset(cca).with_(stop_time_ps=100_000_000_000)  # 100 ms: far beyond any of these flows
    telemetry = Telemetry.off()
    scenario = Scenario(topo, flows, config, name=f"{topo.name} {cca}", telemetry=telemetry, check_invariants=True)
    where = _describe(scenario)
    first = Simulation(scenario, mode=mode).run()  # raises InvariantError on any broken invariant
    assert (first["completed"] == 1).all(), f"{where}: unfinished {first['unfinished_reason'].values}"
    fct, standalone = first["fct"].values, first["standalone_fct"].values
    assert np.all(fct >= standalone * (1 - EPSILON)), f"{where}: fct {fct} below standalone {standalone}"
    np.testing.assert_array_equal(first["delivered"].values, flows.size, err_msg=where)
    if mode == "wormhole":
        event(f"fast-forwarded: {first.attrs['skips'] > 0}")
    event(f"topology: {topo.name.split('(')[0]}")
    second = Simulation(scenario, mode=mode).run()
    np.testing.assert_array_equal(second["fct"].values, fct, err_msg=f"{where}: not deterministic")
