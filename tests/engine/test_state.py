"""Bounded resources: tables grow on demand to the same results, and a hard limit is a clear error."""

import numpy as np
import pytest

from wormhole_lab.engine import state
from wormhole_lab.simulation import Simulation


def test_growing_from_tiny_tables_gives_identical_results(incast, monkeypatch):
    reference = Simulation(incast(8, 200_000, buffer_bytes=600_000)).run()
    monkeypatch.setattr(state, "INITIAL_PACKETS", 32)
    monkeypatch.setattr(state, "INITIAL_SPARE_EVENTS", 20)
    monkeypatch.setattr(state, "INITIAL_PFC_ROWS", 20)
    grown = Simulation(incast(8, 200_000, buffer_bytes=600_000)).run()
    assert grown.attrs["pfc_frames"] > 20  # the PFC log had to grow too
    np.testing.assert_array_equal(grown["fct"].values, reference["fct"].values)
    np.testing.assert_array_equal(grown["pfc_time"].values, reference["pfc_time"].values)


def test_packet_pool_limit_is_a_clear_error(incast, monkeypatch):
    monkeypatch.setattr(state, "INITIAL_PACKETS", 32)
    monkeypatch.setattr(state, "MAX_PACKETS", 64)
    with pytest.raises(state.ResourceLimitError, match="more than 64 packets in flight"):
        Simulation(incast(8, 200_000)).run()


def test_a_scenario_too_large_for_the_memory_cap_fails_before_the_run(incast):
    from wormhole_lab.errors import InputError

    with pytest.raises(InputError, match=r"need about .* GiB of engine tables before the run"):
        Simulation(incast(8, 1000, memory_cap_bytes=100_000)).run()


def test_growth_past_the_memory_cap_is_a_clear_error(incast, monkeypatch):
    from dataclasses import replace

    from wormhole_lab.simulation import prepare
    from wormhole_lab.telemetry import Telemetry

    monkeypatch.setattr(state, "INITIAL_PACKETS", 64)
    scenario = replace(incast(8, 200_000), telemetry=Telemetry.off())
    cap = prepare(scenario).state.nbytes() + 8 * 1024  # room to start, not to double the packet pool
    with pytest.raises(state.ResourceLimitError, match="over the .* GiB cap"):
        Simulation(replace(scenario, config=scenario.config.with_(memory_cap_bytes=cap))).run()


def test_telemetry_kept_in_memory_counts_against_the_cap_and_says_how_to_shrink_it(incast, tmp_path):
    """A run whose in-memory series would pass a small cap stops before keeping the chunk that passes it."""
    from dataclasses import replace

    from wormhole_lab.simulation import prepare
    from wormhole_lab.telemetry import Telemetry

    scenario = replace(incast(8, 400_000), telemetry=Telemetry(chunk_samples=20))
    engine = prepare(scenario).state.nbytes()
    small = replace(scenario, config=scenario.config.with_(memory_cap_bytes=engine + 200_000))
    with pytest.raises(state.ResourceLimitError, match="telemetry kept in memory") as error:
        Simulation(small).run()
    assert "stream the series to a file" in str(error.value) and "interval_ps" in str(error.value)
    streamed = Simulation(small).run(out=tmp_path / "series.nc")  # on disk, the same cap is no problem
    assert int(streamed["completed"].sum()) == 8 and streamed.sizes["time"] > 20


def test_the_sending_state_is_asked_of_sending_flows_only(incast):
    """``slots_of`` gives the slots of started flows; a flow not started (or dropped by its NIC) holds none, and reading
    the pool at -1 would give another flow's state: it is an error that names the flow."""
    from wormhole_lab.engine.runner import advance
    from wormhole_lab.simulation import prepare

    s = prepare(incast(n=4, size=50_000)).state
    with pytest.raises(RuntimeError, match="flow 0 has no sending state: it is not started"):
        state.slots_of(s.fl, np.arange(4))
    advance(s, 1_000_000)  # 1 us: all four started, none finished
    assert sorted(state.slots_of(s.fl, np.arange(4)).tolist()) == [0, 1, 2, 3]
    while advance(s, s.now_ps + 10**9) != "all_done":
        pass
    with pytest.raises(RuntimeError, match="it is finished and holds no slot"):
        state.slots_of(s.fl, np.arange(4))
