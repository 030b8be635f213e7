"""The reference's generator (MRG32k3a, one stream per draw) against numbers the built reference printed.

The values below were printed by an instrumented copy of the reference (HPCC's ns-3, seed 1, run 1): the
stream index each draw took (RngSeedManager::GetNextStreamIndex) and the value drawn, in switch-mmu.cc's
ECN test (``UniformVariable(0, 1)``) and qbb-net-device.cc's PFC IP id (``UniformVariable(0, 65536)``), on
s2_incast8 and on tests/data/validation_dcqcn/fattree4_incast_pfc.
"""

import numpy as np
import pytest

from wormhole_lab.engine.config import EngineConfig
from wormhole_lab.engine.rng import new_state, pfc_ip_id_draw, uniform
from wormhole_lab.engine.rng_ns3 import (
    R_STREAM,
    first_uniform,
    ns3_state,
    ns3_uniform,
    setup_streams,
    stream_state,
)
from wormhole_lab.errors import InputError

# (stream index, value the reference drew, scale of the variable)
REFERENCE_DRAWS = [
    (62, 0.91295779424142598, 1),  # s2_incast8: first ECN draw
    (63, 0.75382575900195126, 1),
    (64, 0.59599617099557156, 1),
    (218, 0.20844368342223724, 1),  # fattree4_incast_pfc: first ECN draw
    (219, 0.87973110493832973, 1),
    (721, 14435.889447281372, 65536),  # its first PFC frame's IP id
    (1241, 0.65853409119301742, 1),
    (7142, 10646.057354564764, 65536),  # its last PFC frame
    (7145, 0.67572547741022415, 1),  # its last ECN draw
]

# (nodes, switches, links) -> stream indices taken before the first packet, printed by the same copy
REFERENCE_SETUP = [
    ((3, 1, 2), 20),
    ((4, 2, 3), 26),
    ((6, 4, 7), 38),
    ((10, 1, 9), 62),
    ((31, 1, 30), 188),
    ((36, 20, 48), 218),
    ((376, 56, 480), 2258),
]


@pytest.mark.parametrize(("stream", "value", "scale"), REFERENCE_DRAWS)
def test_first_value_of_each_stream_is_the_reference_draw(stream, value, scale):
    assert first_uniform(stream_state(1, stream)) * scale == value


def test_kernel_walks_the_streams_with_the_jump_matrix():
    """The compiled draw (first value, then one jump of 2**127) gives stream after stream, bit for bit."""
    rng = ns3_state(1, 62)
    drawn = [ns3_uniform(rng) for _ in range(7145 - 62 + 1)]
    for stream, value, scale in REFERENCE_DRAWS:
        assert drawn[stream - 62] * scale == value
    assert rng[R_STREAM] == 7146
    # and the jumps agree with the exact-integer construction of a far stream
    assert ns3_uniform(rng) == first_uniform(stream_state(1, 7146))


def test_a_wrong_stream_or_seed_gives_other_numbers():
    assert first_uniform(stream_state(1, 61)) != REFERENCE_DRAWS[0][1]
    assert first_uniform(stream_state(2, 62)) != REFERENCE_DRAWS[0][1]
    assert first_uniform(stream_state(1, 62, run=2)) != REFERENCE_DRAWS[0][1]


@pytest.mark.parametrize(("shape", "count"), REFERENCE_SETUP)
def test_setup_takes_six_streams_per_node_plus_two(shape, count):
    assert setup_streams(shape[0]) == count


def test_draw_sites_dispatch_on_the_state():
    """uniform() is the ns3 draw on an ns3 state; a PFC frame takes a stream there and nothing under xorshift."""
    rng = ns3_state(1, 62)
    assert uniform(rng) == REFERENCE_DRAWS[0][1]
    pfc_ip_id_draw(rng)
    assert rng[R_STREAM] == 64 and uniform(rng) == REFERENCE_DRAWS[2][1]
    x = new_state(1)
    before = x.copy()
    pfc_ip_id_draw(x)
    assert np.array_equal(x, before)


def test_config_names_the_generator_and_checks_the_seed():
    assert EngineConfig(cca="dcqcn").rng == "xorshift"
    assert '"rng": "ns3"' in EngineConfig(cca="dcqcn", rng="ns3").manifest_json()
    with pytest.raises(InputError, match="rng"):
        EngineConfig(cca="dcqcn", rng="mt19937")
    with pytest.raises(InputError, match="seed"):
        EngineConfig(cca="dcqcn", rng="ns3", seed=0)


def test_scenario_file_chooses_the_generator(tmp_path, data_dir):
    from wormhole_lab.scenario_io import load_scenario

    text = (data_dir.parent.parent / "data" / "scenarios" / "incast_hpcc.yaml").read_text()
    (tmp_path / "s.yaml").write_text(text + "config:\n  rng: ns3\n")
    assert load_scenario(tmp_path / "s.yaml").config.rng == "ns3"
    (tmp_path / "bad.yaml").write_text(text + "config:\n  rng: mt19937\n")
    with pytest.raises(InputError, match="rng"):
        load_scenario(tmp_path / "bad.yaml")
