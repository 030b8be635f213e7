"""Kernels compile without Numba's refcount runtime: from Numba 0.66 (LLVM 22) its incref/decref calls on
array arguments survive in the hot loop and made the engine 2.3x slower (docs/engine-performance.md)."""

import numba
import numpy as np

from wormhole_lab.engine import kernel, wheel
from wormhole_lab.engine.jit import _unliteral_calls, variant
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


def _uncached(fn):
    """``jit.kernel``'s call typing on a kernel without its disk cache: a cached callee would load, not compile."""
    return _unliteral_calls(numba.njit(nogil=True, _nrt=False)(fn))


def test_a_kernel_called_with_constants_compiles_once_per_type_not_per_value():
    """Numba would compile ``store`` once per constant ``kind`` (``Literal[int](1)``, ``Literal[int](2)``), and each
    copy again into every caller: wheel.push had 11 signatures, wheel.insert 12 (issue 53, item 5)."""

    @_uncached
    def store(a, kind, value):
        a[kind] = value
        return a[kind] * 2

    @_uncached
    def caller(a):
        return store(a, 1, 5) + store(a, 2, 7)

    a = np.zeros(3, np.int64)
    assert caller(a) == 24 and a.tolist() == [0, 5, 7]
    assert len(store.signatures) == 1
    assert not any(isinstance(t, numba.core.types.Literal) for t in store.signatures[0])


SWITCH = True


def _switched(a):
    if SWITCH:
        return _only_when_switched(a)
    return a[0]


def test_a_variant_drops_the_branches_its_constants_rule_out():
    """``variant`` (run_until_packet): the callee of a branch ruled out by a compiled-in global is not compiled."""
    global _only_when_switched
    _only_when_switched = numba.njit(lambda a: a[0] + 1)
    off = numba.njit(variant(_switched, "_switched_off", SWITCH=False))
    assert off(np.ones(2)) == 1.0 and not _only_when_switched.signatures
    assert numba.njit(_switched)(np.ones(2)) == 2.0 and _only_when_switched.signatures


def test_runs_without_partitions_use_the_packet_event_loop():
    """Packet runs call run_until_packet (no flow log, no steady samples compiled in); run_until is Wormhole mode's."""
    for fn in (kernel.run_until, kernel.run_until_packet):
        assert fn.targetoptions.get("_nrt") is False
    assert kernel.run_until_packet.py_func.__code__ is kernel.run_until.py_func.__code__
    assert kernel.run_until_packet.py_func.__globals__["PARTITIONS"] is False and kernel.PARTITIONS is True
