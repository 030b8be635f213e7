"""One place that compiles engine kernels, with a cache that cannot go stale.

Numba's on-disk cache does not notice when a *called* function in another module changes
(numba/numba#1833), so the cache folder is keyed by a hash of every engine source file:
any edit to the engine gives a fresh folder and a clean compile.
"""

import hashlib
import os
import types as py_types
from pathlib import Path

import numba
from numba.core import types
from numba.core.dispatcher import Dispatcher

_ENGINE_DIR = Path(__file__).resolve().parent


def _engine_source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_ENGINE_DIR.rglob("*.py")):
        digest.update(path.relative_to(_ENGINE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_root() -> Path:
    base = os.environ.get("WORMHOLE_LAB_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "wormhole_lab" / "numba" / _engine_source_hash()


CACHE_DIR = _cache_root()
numba.config.CACHE_DIR = str(CACHE_DIR)


def kernel(fn):
    """``@njit(cache=True)`` with the engine's source-keyed cache folder, compiled without Numba's
    reference-counting runtime (NRT).

    Kernels never allocate (state.py does it, in Python), so they need no refcounts. With NRT on, every
    call of a kernel that takes an array increfs it on entry and decrefs it at each exit (atomic
    ``lock inc/dec`` through out-of-line NRT_incref/NRT_decref calls). Numba up to 0.65 (LLVM <= 20)
    pruned those pairs; from 0.66 (llvmlite 0.48, LLVM 22) they survive in the hot loop (heap push,
    admission, ...) and also stop LLVM from inlining small helpers: the engine ran about 2x slower.
    Without NRT they are never emitted, on every Numba version. A kernel that allocates fails to
    compile here rather than running slowly."""
    return _unliteral_calls(numba.njit(cache=True, nogil=True, _nrt=False)(fn))


def _unliteral_calls(dispatcher):
    """Make a kernel called from another kernel compile for its arguments' plain types, not their values.

    Numba types a constant passed to a jitted function as a literal (``Literal[int](3)``) and compiles the callee
    once per such value: ``wheel.push(..., EV_RTO, ...)`` and ``push(..., EV_SAMPLE, ...)`` were two compiles of
    ``push`` and of ``wheel.insert`` under it (11 and 12 in all), each linked into every caller again. A kernel sees
    the same int64 either way; the value-specialised copies only cost compile time (issue 53, item 5)."""
    if not isinstance(dispatcher, Dispatcher):  # NUMBA_DISABLE_JIT=1: the plain function
        return dispatcher
    typed_call = dispatcher.get_call_template

    def get_call_template(args, kws):
        return typed_call(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def inlined_kernel(fn):
    """``kernel`` whose body Numba copies into each caller (``inline="always"``): for the per-packet handlers
    (arrival.py, port.dequeue_and_transmit). LLVM does not inline them, and a call passes every array as ~9
    scalars (pointers, shape, strides): 39 ns for 12 two-dimensional arrays against 6.5 ns for one, more than
    many handlers' own work. Only where measured to pay: inlining transmit too doubled the compile time."""
    return numba.njit(cache=True, nogil=True, _nrt=False, inline="always")(fn)


def variant(fn, name: str, **constants):
    """A copy of the kernel ``fn``'s Python function named ``name`` (its own cache files) in which the module globals
    ``constants`` have other values: Numba reads globals as compile-time constants and drops the branches they rule
    out before typing, so what only those branches call is not compiled into the copy. Decorate it (``kernel``)."""
    fn = getattr(fn, "py_func", fn)
    copy = py_types.FunctionType(fn.__code__, {**fn.__globals__, **constants}, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = name
    copy.__doc__ = fn.__doc__
    return copy
