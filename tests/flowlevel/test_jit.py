"""Flow-level kernels compile with the engine's options, into a cache folder keyed by their own sources."""

import numba

from wormhole_lab.engine import wheel
from wormhole_lab.engine.jit import CACHE_DIR
from wormhole_lab.flowlevel import loop, maxmin, model
from wormhole_lab.flowlevel.jit import FLOW_CACHE_DIR


def test_kernels_have_no_refcount_runtime_and_their_own_cache_folder():
    for fn in (loop.run_until, maxmin.waterfill, model.flow_terms, model.port_capacity):
        assert fn.targetoptions.get("_nrt") is False, fn
        assert fn._cache._cache_path.startswith(str(FLOW_CACHE_DIR)), fn  # a NullCache (no disk cache) has none
    assert FLOW_CACHE_DIR.parent == CACHE_DIR  # an engine edit gives both a fresh folder
    # the engine's kernels and Numba's setting are left as the engine set them
    assert numba.config.CACHE_DIR == str(CACHE_DIR)
    assert not wheel.push._cache._cache_path.startswith(str(FLOW_CACHE_DIR))
