"""Ctrl-C and SIGTERM during a run: recorded when they arrive, acted on where stopping is safe.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be, which can be inside a
library (h5py, Numba's cache loader, SQLite) that swallows it or is left half-way; SIGTERM (``kill``, a
batch scheduler, a container stop) kills the process at once, leaving an HDF5 file open mid-write
and unreadable. Within ``deferred_signals()`` both only set a flag, and the run loop calls ``check()``
each time the engine returns, which raises ``KeyboardInterrupt`` or ``Terminated`` (a
``KeyboardInterrupt``) from there: ``finally`` blocks close the netCDF/zarr store and mark it
incomplete, and the memo DB is closed. A second signal while one is pending raises at once.

``sigterm_as_interrupt()`` is the blunt form for work outside the engine loop (the CLI wraps every
command in it): SIGTERM raises ``Terminated`` at once, as Ctrl-C does; a ``deferred_signals()`` block
inside it takes over until it ends.

Handlers are installed only from the main thread and only where the signal has Python's default
handling (or this module's): an application that handles (or ignores) a signal itself keeps its own
handler. The previous handlers are put back when the block ends. Like Ctrl-C, the signal takes effect
when the engine returns to Python (at the next stop: a telemetry chunk, a progress step, a flow
event, and at least every millisecond of simulated time, ``simulation.SAFE_POINT_PS``), not inside a compiled
kernel.
"""

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["PendingSignal", "Terminated", "deferred_signals", "sigterm_as_interrupt"]


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived during a run (raised only inside ``deferred_signals()``)."""


class PendingSignal:
    """The signal recorded inside ``deferred_signals()``, if any."""

    def __init__(self):
        self.signum: int | None = None

    def record(self, signum, frame):
        if self.signum is not None:
            raise self._exception(signum)  # asked twice: stop now
        self.signum = signum

    def check(self) -> None:
        """Raise ``Terminated`` (SIGTERM) or ``KeyboardInterrupt`` (SIGINT) if one arrived."""
        if self.signum is not None:
            raise self._exception(self.signum)

    @staticmethod
    def _exception(signum) -> KeyboardInterrupt:
        kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        return kind(f"received {signal.Signals(signum).name}")


def _raise_terminated(signum, frame):
    raise Terminated(f"received {signal.Signals(signum).name}")


@contextlib.contextmanager
def _handling(signum: int, handler, replaceable: tuple) -> Iterator[bool]:
    """Install ``handler`` for ``signum`` if the current one is in ``replaceable``; yields whether it did."""
    previous = signal.getsignal(signum)
    if threading.current_thread() is not threading.main_thread() or previous not in replaceable:
        yield False  # handlers can only be set from the main thread; someone else decides for this signal
        return
    signal.signal(signum, handler)
    try:
        yield True
    finally:
        signal.signal(signum, previous)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[bool]:
    """Within the block, SIGTERM raises ``Terminated``; yields whether the handler was installed."""
    with _handling(signal.SIGTERM, _raise_terminated, (signal.SIG_DFL,)) as installed:
        yield installed


@contextlib.contextmanager
def deferred_signals() -> Iterator[PendingSignal]:
    """Within the block, SIGINT and SIGTERM are recorded in the yielded ``PendingSignal``."""
    pending = PendingSignal()
    with (
        _handling(signal.SIGINT, pending.record, (signal.default_int_handler,)),
        _handling(signal.SIGTERM, pending.record, (signal.SIG_DFL, _raise_terminated)),
    ):
        yield pending
