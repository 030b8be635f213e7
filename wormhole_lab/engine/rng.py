"""A small deterministic random source whose whole state is one uint64 array element.

Keeping the state in an array (not in Numba's global generator) makes a run reproducible
across kernel calls and processes: the same seed gives the same ECN draws.

Two generators share the draw sites: this xorshift64* (``EngineConfig.rng = "xorshift"``, a state of
length 1) and the reference's MRG32k3a with one stream per draw (``"ns3"``, ``rng_ns3.py``, a longer
state). The length of the state array says which one a run uses.
"""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.rng_ns3 import ns3_uniform


def new_state(seed: int) -> np.ndarray:
    """splitmix64 of the seed, never zero (xorshift cannot leave zero)."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


@kernel
def uniform(rng):
    """A draw in [0, 1): xorshift64*, or the reference's next stream under ``rng="ns3"``."""
    if rng.shape[0] > 1:
        return ns3_uniform(rng)
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return (x * np.uint64(2685821657736338717) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def draws_like_reference(rng):
    """True under ``rng="ns3"``: then every draw the reference makes is made, even those whose value is unused."""
    return rng.shape[0] > 1


@kernel
def pfc_ip_id_draw(rng):
    """A PFC frame's IP id: the reference draws it (taking a stream index); under xorshift nothing is drawn."""
    if rng.shape[0] > 1:
        ns3_uniform(rng)
