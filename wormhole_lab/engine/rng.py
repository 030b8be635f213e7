"""A small deterministic random source whose whole state is one uint64 array element.

Keeping the state in an array (not in Numba's global generator) makes a run reproducible
across kernel calls and processes: the same seed gives the same ECN draws.
"""

import numpy as np

from wormhole_lab.engine.jit import kernel


def new_state(seed: int) -> np.ndarray:
    """splitmix64 of the seed, never zero (xorshift cannot leave zero)."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


@kernel
def uniform(rng):
    """xorshift64* draw in [0, 1)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return (x * np.uint64(2685821657736338717) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
