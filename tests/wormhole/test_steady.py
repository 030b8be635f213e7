"""SteadyConfig: the per-CCA defaults of the steady test and the checks on its knobs."""

import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.errors import InputError
from wormhole_lab.wormhole.steady import SteadyConfig


@pytest.mark.parametrize("cca, cycles", [("dcqcn", 3), ("hp", 0), ("timely", 0), ("dctcp", 0)])
def test_only_dcqcn_gets_the_cycle_test(cca, cycles):
    assert SteadyConfig().for_cca(preset(cca)).cycles == cycles
    assert SteadyConfig(cycles=2).for_cca(preset("dcqcn")).cycles == 2


@pytest.mark.parametrize("cycles", [-1, 4])
def test_more_cycles_than_the_marks_hold_is_refused(cycles):
    with pytest.raises(InputError, match="SteadyConfig.cycles"):
        SteadyConfig(cycles=cycles)
