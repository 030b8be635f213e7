"""Kernels compile without Numba's refcount runtime: from Numba 0.66 (LLVM 22) its incref/decref calls on
array arguments survive in the hot loop and made the engine 2.3x slower (docs/engine-performance.md)."""

import numba
import numpy as np

from wormhole_lab.engine import kernel, wheel
from wormhole_lab.engine.jit import kernel as kernel_decorator


def test_engine_kernels_are_compiled_without_the_refcount_runtime():
    for fn in (kernel.run_until, wheel.push, wheel.take):
        assert fn.targetoptions.get("_nrt") is False, fn


def test_a_kernel_taking_arrays_emits_no_refcount_calls():
    def bump(a, b, i):
        a[i] += b[i]
        return a[i]

    # the engine decorator's options without its disk cache: IR cannot be inspected on code loaded from a cache
    options = {k: v for k, v in kernel_decorator(bump).targetoptions.items() if k not in ("cache", "nopython")}
    fresh = numba.njit(**options)(bump)
    fresh(np.zeros(3, np.int64), np.ones(3, np.int64), 1)
    llvm = "".join(fresh.inspect_llvm().values())
    assert "define" in llvm and "NRT_incref" not in llvm and "NRT_decref" not in llvm
    if numba.version_info[:2] >= (0, 66):  # there the same function with the runtime on does emit them
        counted = numba.njit(bump)
        counted(np.zeros(3, np.int64), np.ones(3, np.int64), 1)
        assert "NRT_decref" in "".join(counted.inspect_llvm().values())
