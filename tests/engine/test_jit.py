"""Kernels compile without Numba's refcount runtime: from Numba 0.66 (LLVM 22) its incref/decref calls on
array arguments survive in the hot loop and made the engine 2.3x slower (docs/engine-performance.md)."""

import os
import subprocess
import sys

import numba
import numpy as np

from wormhole_lab.engine import arrival, kernel, qp, wheel
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.cca import dispatch
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
    """Packet runs call a run_until_packet (no flow log, no steady samples compiled in); Wormhole mode a run_until."""
    for fn in (kernel.run_until, kernel.run_until_packet, *kernel.EVENT_LOOPS.values()):
        assert fn.targetoptions.get("_nrt") is False
        assert fn.py_func.__code__ is kernel.run_until.py_func.__code__
    assert kernel.run_until_packet.py_func.__globals__["PARTITIONS"] is False and kernel.PARTITIONS is True
    for (_, partitions), fn in kernel.EVENT_LOOPS.items():
        assert fn.py_func.__globals__["PARTITIONS"] is partitions


def test_each_cca_has_its_own_event_loop_calling_only_its_code():
    """kernel.event_loop picks the loop by the run's CCA (ci[CI_CC]) and partitions; each loop's arrival handler,
    QP start and timer dispatch are that CCA's copies, whose dispatch has the CCA compiled in."""
    ci = np.zeros(L.CI_N, dtype=np.int64)
    for cc, cca in dispatch.BY_CCA.items():
        for partitions in (True, False):
            ci[L.CI_CC], ci[L.CI_STEADY_INTERVAL] = cc, 1_000 if partitions else 0
            loop = kernel.event_loop(ci)
            assert loop is kernel.EVENT_LOOPS[cc, partitions]
            assert loop.py_func.__name__ == ("run_until_" if partitions else "run_until_packet_") + cca.name
            assert getattr(kernel, loop.py_func.__name__) is loop  # found by compile_notice.loaded_kernels
            names = loop.py_func.__globals__
            assert names["start_qp"] is qp.START_BY_CCA[cc] and names["cca_timer"] is cca.on_timer
            assert names["handle_arrival"] is arrival.HANDLE_BY_CCA[cc]
            receive_ack = names["handle_arrival"].py_func.__globals__["_receive_ack"]
            assert receive_ack.py_func.__globals__["cca_ack"] is cca.on_ack
            assert qp.START_BY_CCA[cc].py_func.__globals__["cca_init"] is cca.init
        for fn in (cca.init, cca.on_ack, cca.on_timer):
            assert fn.py_func.__globals__["CCA"] == cc and dispatch.CCA == 0


_DCQCN_ONLY = """
import numba
from wormhole_lab.engine.cca import dcqcn, dctcp, dispatch, hpcc, timely
from wormhole_lab.engine.warmup import tiny_state
t = tiny_state().arrays()
dispatch.init_dcqcn.compile(tuple(numba.typeof(a) for a in (t.fl, t.ff, t.fw, t.ci, 0)))
ack = (t.g, t.events, t.pk, t.pt, t.fl, t.ff, t.fw, t.ci, t.cf, 0, 0, 0)
dispatch.on_ack_dcqcn.compile(tuple(numba.typeof(a) for a in ack))
others = [m.__name__ for m in (hpcc, timely, dctcp) if m.on_ack.signatures or m.init.signatures]
print(bool(dcqcn.on_ack.signatures and dcqcn.init.signatures), others)
"""


def test_a_cca_copy_of_the_dispatch_compiles_no_other_cca(tmp_path):
    """DCQCN's dispatch (that its event loops call) compiles DCQCN's code and no other CCA's: in a process of its own,
    with an empty cache (a kernel loaded from the cache does not compile, nor list, what it calls)."""
    env = {**os.environ, "WORMHOLE_LAB_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _DCQCN_ONLY], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["True", "[]"]
