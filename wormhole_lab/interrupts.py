"""SIGTERM handled like Ctrl-C while a run writes files, so that the writers' cleanup runs.

Python turns SIGINT into ``KeyboardInterrupt``, so ``finally`` blocks close the netCDF/zarr store and
mark it incomplete. SIGTERM (``kill``, a batch scheduler, a container stop) kills the process at once
instead, leaving an HDF5 file open mid-write and unreadable. Within ``sigterm_as_interrupt()``, SIGTERM
raises ``Terminated`` (a ``KeyboardInterrupt``) in the main thread, and the same cleanup runs.

The handler is installed only from the main thread and only when SIGTERM has its default action: an
application that handles (or ignores) SIGTERM itself keeps its own handler. The previous handler is put
back when the block ends. Like Ctrl-C, the signal takes effect when the engine returns to Python (at
the next stop: a telemetry chunk, a flow event), not inside a compiled kernel.
"""

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["Terminated", "sigterm_as_interrupt"]


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived during a run (raised only inside ``sigterm_as_interrupt()``)."""


def _raise_terminated(signum, frame):
    raise Terminated(f"received {signal.Signals(signum).name}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[bool]:
    """Within the block, SIGTERM raises ``Terminated``; yields whether the handler was installed."""
    if threading.current_thread() is not threading.main_thread():
        yield False  # signal handlers can only be set from the main thread
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield False  # someone else decides what SIGTERM does (or a handler set outside Python: None)
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield True
    finally:
        signal.signal(signal.SIGTERM, previous)
