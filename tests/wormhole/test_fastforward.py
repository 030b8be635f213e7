"""FastForward's index of the known starts (the interrupts a skip must stop at) is built only for runs that skip."""

import numpy as np

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import leaf_spine, star
from wormhole_lab.workload.flows import make_flows


def index_built(scenario) -> tuple[bool, int]:
    sim = Simulation(scenario, mode="wormhole")
    ds = sim.run()
    return "_known_starts" in vars(sim.controller.ff), ds.attrs["skips"]


def test_the_known_starts_are_indexed_at_the_first_skip_and_not_for_a_run_of_short_flows():
    rng = np.random.default_rng(5)
    src = rng.integers(0, 8, 60)
    short = make_flows(src, (src + rng.integers(1, 8, 60)) % 8, rng.integers(2_000, 40_000, 60), 0)
    assert index_built(Scenario(leaf_spine(4, 2, 2), short, preset("hp"), telemetry=Telemetry.off())) == (False, 0)
    long = make_flows([1], [0], [10_000_000], 0)
    built, skips = index_built(Scenario(star(2), long, preset("hp"), telemetry=Telemetry.off()))
    assert built and skips > 0
