"""The teaching scenarios: a few flows on a small cluster, and their inputs checked before anything runs."""

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.scenarios.teaching import incast, parking_lot, staggered, teaching_scenario


def test_teaching_scenarios_are_small_and_check_their_inputs():
    for make in (incast, staggered, parking_lot):
        scenario = make(n=3)
        assert 3 <= len(scenario.flows) <= 5
    lot = parking_lot(n=2)
    assert lot.topology.n_links == 2 * 2 + 4 + 2 and list(lot.flows.phase) == ["long", "long", "cross1", "cross2"]
    with pytest.raises(InputError, match="n must be"):
        incast(n=0)
    with pytest.raises(InputError, match="unknown scenario"):
        teaching_scenario("ring")
    with pytest.raises(InputError, match="INT cannot encode"):
        incast(cca="hp", link_gbps=40)
