"""The engine's kernel options for flow-level kernels, with a cache folder keyed by this package's sources.

Numba's on-disk cache does not notice when a called function in another module changes (numba/numba#1833).
The engine keys its cache folder by a hash of the engine's sources (``engine.jit``); the loop here calls the
max-min kernel of a sibling module and the engine's event queue, so its cache lives in a subfolder of the engine's,
keyed by this package's sources: an edit to either gives a clean compile.
"""

import hashlib
from pathlib import Path

import numba

from wormhole_lab.engine.jit import CACHE_DIR

_DIR = Path(__file__).resolve().parent


def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_DIR.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


FLOW_CACHE_DIR = CACHE_DIR / f"flowlevel-{_source_hash()}"


def flow_kernel(fn):
    """``engine.jit.kernel`` (``@njit(cache=True)``, no refcount runtime, so no allocation) with the cache in
    ``FLOW_CACHE_DIR``. Numba reads ``config.CACHE_DIR`` when a function is decorated, so it is set for this
    decoration only and the engine's kernels keep their own folder."""
    engine_dir = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(FLOW_CACHE_DIR)
    try:
        return numba.njit(cache=True, nogil=True, _nrt=False)(fn)
    finally:
        numba.config.CACHE_DIR = engine_dir
