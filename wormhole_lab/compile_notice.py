"""Tells a first run that it compiles the engine (once, and about how long), and stays silent when it is cached.

A fresh install compiles the Numba kernels before its first run starts: about half a minute on 2 cores (15 s for flow
mode, about a minute for Wormhole mode: ``COLD_SECONDS``); without a word that looked like a hang (a progress bar at
0 %, a notebook cell at ``[*]``). Whether the kernels still need compiling is told, before compiling, from a marker
written into the engine's cache folder (``engine.jit.CACHE_DIR``, keyed by a hash of the engine's sources) after a
run's kernels have compiled or loaded. It records:

* the Numba, llvmlite, Python and wormhole_lab versions and this CPU as Numba targets it (an upgrade, another Python
  or a home folder shared with another machine each give a fresh compile);
* each kernel the run loaded, as its Numba index file (``*.nbi``) and a SHA-256 of its source file, which is what
  Numba checks too (a deleted cache, or an edited ``wormhole/`` or ``flowlevel/`` file in an editable checkout, each
  count as cold; an edit under ``engine/`` already gives a new cache folder, with no marker).

The marker names the kernels the run needs, found by running them, where globbing for ``*.nbi`` could not tell which
index files a mode needs nor whether they are current; and the index files are checked as well, so a marker cannot
outlive the cache it describes. Checking reads one small JSON file, ``stat``s the index files it names and hashes
their source files: milliseconds. A kernel Numba does not save (an unwritable cache) leaves no marker, so the notice
shows again on the next run, which compiles again.
"""

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
from numba.core.dispatcher import Dispatcher

import wormhole_lab
from wormhole_lab.engine.jit import CACHE_DIR

#: how long a cold compile takes (seconds). Measured 2026-12 on the project's 2-core python machine (numba 0.68.1,
#: Python 3.11, other jobs running), whole process, ``WORMHOLE_LAB_CACHE_DIR=$(mktemp -d) wormhole-lab run --quiet
#: --mode MODE --out TMP`` (NUMBA_CACHE_DIR does not move this cache: engine.jit sets Numba's CACHE_DIR), with
#: ``benchmarks/bench_compile.py --no-table --repeat 3 --trees BEFORE ''`` (3 rounds, alternating), after each run
#: compiles its own CCA only: packet 15.6-17.1 s (before 17.9-22.6 s), wormhole 31.6-36.3 s (before 36.7-42.9 s),
#: CPU alike. Busier hours measured 1.3-3x that before (packet 23-63 s, wormhole 40-60 s), hence the margin. Flow
#: 21 s and 15 s (10 s), measured before. Run again with the same cache folder: 2.4-2.7 s, 2-3 s for flow.
COLD_SECONDS = {"packet": 30, "wormhole": 50, "flow": 15}

_lock = threading.RLock()  # concurrent first runs (threads of a Panel app) compile once and say so once
_depth = 0  # > 0 while a compile is announced: a run started inside it (compile_wormhole's own) says nothing
_announced = set()  # modes announced in this process: said once, even where no marker could be written


def _versions() -> dict:
    import llvmlite

    return {
        "wormhole_lab": wormhole_lab.__version__,
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "python": f"{sys.implementation.cache_tag} {sys.version}",
    }


def _machine() -> list:
    """The CPU as Numba's cache keys it (triple, CPU name, features)."""
    import llvmlite.binding as ll

    try:
        from numba.core.codegen import get_host_cpu_features

        features = numba.config.CPU_FEATURES or get_host_cpu_features()
    except ImportError:  # another Numba layout: the CPU name alone
        features = ""
    return [ll.get_process_triple(), numba.config.CPU_NAME or ll.get_host_cpu_name(), features]


def _source_hash(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def kernels_key(mode: str, cca: str = "dcqcn") -> str:
    """What a marker is named after: the mode, and for packet and Wormhole runs with another CCA than DCQCN the CCA
    too (``"packet-hpcc"``): each CCA has its own event loop (engine.kernel.event_loop), compiled by its first run."""
    return mode if mode == "flow" or cca == "dcqcn" else f"{mode}-{cca}"


def marker_path(mode: str, cache_dir: Path | str | None = None) -> Path:
    """The marker of ``mode``'s kernels in ``cache_dir`` (default: the engine's cache folder)."""
    return Path(cache_dir if cache_dir is not None else CACHE_DIR) / f"compiled-{mode}.json"


def needs_compile(mode: str = "packet", cache_dir: Path | str | None = None) -> bool:
    """True when a run in ``mode`` would compile its kernels on this machine: no marker, other versions or CPU, a
    kernel's Numba index file gone, or its source changed since. Reads no kernel and compiles nothing."""
    try:
        marker = json.loads(marker_path(mode, cache_dir).read_text(encoding="utf-8"))
        kernels = marker["kernels"]
        if marker["versions"] != _versions() or marker["machine"] != _machine() or not kernels:
            return True
        hashes = {}
        for index, (source, digest) in kernels.items():
            if not os.path.exists(index):
                return True
            if source not in hashes:
                hashes[source] = _source_hash(source)
            if hashes[source] != digest:
                return True
    except (OSError, ValueError, KeyError, TypeError):
        return True
    return False


def loaded_kernels() -> list[Dispatcher]:
    """The cached kernels of wormhole_lab compiled or loaded in this process (those that ran)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if name == "wormhole_lab" or name.startswith("wormhole_lab."):
            for value in list(vars(module).values()):
                if isinstance(value, Dispatcher) and value.overloads and hasattr(value._cache, "_cache_file"):
                    found[id(value)] = value
    return list(found.values())


def record_compiled(
    mode: str = "packet", cache_dir: Path | str | None = None, kernels: Iterable[Dispatcher] | None = None
) -> bool:
    """Write ``mode``'s marker after its kernels compiled or loaded (``kernels``, default ``loaded_kernels()``).
    Writes nothing (returns False) when one has no index file: Numba did not save it, so the next run compiles."""
    entries = {}
    for kernel in loaded_kernels() if kernels is None else kernels:
        try:
            index = kernel._cache._cache_file._index_path
            source = kernel._cache._impl.locator._py_file
        except AttributeError:  # another Numba's cache layout: no marker, and a notice each run
            return False
        if not os.path.exists(index):
            return False
        entries[index] = [source, _source_hash(source)]
    if not entries:
        return False
    path = marker_path(mode, cache_dir)
    marker = {"versions": _versions(), "machine": _machine(), "kernels": entries}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(marker, indent=1), encoding="utf-8")
        os.replace(partial, path)  # a reader sees the old marker or the whole new one
    except OSError:
        return False
    return True


def _about(seconds: float) -> str:
    if seconds < 45:
        return f"about {max(5, round(seconds / 5) * 5)} s"
    if seconds < 75:
        return "about a minute"
    if seconds < 105:
        return "about a minute and a half"
    return f"about {round(seconds / 60)} minutes"


def cold_message(mode: str = "packet", seconds: float | None = None) -> str:
    """The line a cold run prints before compiling; ``seconds``: the estimate (default: ``COLD_SECONDS[mode]``; ``mode``
    may be a ``kernels_key``)."""
    what = "flow-level engine" if mode == "flow" else "simulation engine"
    seconds = COLD_SECONDS[mode.partition("-")[0]] if seconds is None else seconds
    return (
        f"wormhole-lab: compiling the {what} for this machine, once ({_about(seconds)} on 2 cores; "
        f"later runs load it from the cache in about a second)…"
    )


def page_notice(runs) -> str:
    """For an app's status line or a widget: what the first of ``runs`` (objects with ``mode`` and ``scenario``)
    whose kernels are not cached is about to do, or '' when all are cached."""
    for run in runs:
        key = kernels_key(run.mode, run.scenario.config.cca)
        if needs_compile(key):
            return "First run on this machine: " + cold_message(key, _estimate(key)).removeprefix("wormhole-lab: ")
    return ""


def _estimate(mode: str) -> float:
    """Seconds a cold ``mode`` (or ``kernels_key``) compiles for: Wormhole mode after a packet run with the same CCA
    compiles only its own kernels."""
    base, _, cca = mode.partition("-")
    if base == "wormhole" and not needs_compile(kernels_key("packet", cca or "dcqcn")):
        return COLD_SECONDS["wormhole"] - COLD_SECONDS["packet"]
    return COLD_SECONDS.get(base, COLD_SECONDS["packet"])


@contextmanager
def announce_compile_if_cold(mode: str = "packet", stream=None) -> Iterator[bool]:
    """Wrap the compile (or cache load) of ``mode``'s kernels ("packet", "wormhole" or "flow"). When they are not
    cached yet, print one line to ``stream`` (default stderr, so the notebook cell shows it) before, and how long it
    took after; when cached, print nothing. Yields whether it was cold. Nested uses are silent."""
    global _depth
    with _lock:
        if _depth or mode in _announced:
            yield False
            return
        cold = needs_compile(mode)
        out = sys.stderr if stream is None else stream
        if cold:
            print(cold_message(mode, _estimate(mode)), file=out, flush=True)
        t0 = time.perf_counter()
        _depth += 1
        try:
            yield cold
        finally:
            _depth -= 1
        if cold:
            _announced.add(mode)
            record_compiled(mode)
            print(f"wormhole-lab: compiled in {time.perf_counter() - t0:.0f} s", file=out, flush=True)
