"""Bounded copies of a run's series for live views, fed a chunk at a time and thinned for display.

A ``ThinnedTable`` keeps every ``stride``-th row it was given (counted from the first row ever given), at most
``max_rows`` of them: when full, it keeps every other row and doubles the stride. Which rows are kept depends only
on how many rows came in, so a table fed chunk by chunk ends with exactly the rows of one fed the whole run at
once. ``take()`` hands a view what changed since the last ``take()``: the new rows (to stream), or every kept row
after a thinning (to replace the view's data, at most ``max_rows`` rows). A view never holds more than
``max_rows`` rows, however long the run; the run's Dataset keeps every sample.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_POINTS", "ThinnedTable", "Update"]

MAX_POINTS = 2000  # rows (points per line) a live view holds at most


@dataclass(frozen=True)
class Update:
    """What changed since the last ``take()``: ``rows`` (column -> 1-D array) to append, or, with ``reset``, the
    rows that replace everything shown."""

    rows: dict
    reset: bool

    def __len__(self) -> int:
        return len(next(iter(self.rows.values()))) if self.rows else 0


class ThinnedTable:
    """Rows of named float columns (every ``stride``-th row given, at most ``max_rows``)."""

    def __init__(self, columns, max_rows: int = MAX_POINTS):
        if max_rows < 2:
            raise ValueError("max_rows must be 2 or more")
        self.columns = list(columns)
        self.max_rows = max_rows
        self.stride = 1
        self.rows_given = 0
        self._data = np.empty((max_rows, len(self.columns)))
        self._kept = 0
        self._taken = 0  # rows of _data the view already has
        self._thinned = False  # the stride changed since the last take()

    def __len__(self) -> int:
        return self._kept

    def append(self, block: np.ndarray) -> None:
        """Rows of the table's columns, ``block[row, column]``, in order."""
        block = np.asarray(block, dtype=float).reshape(-1, len(self.columns))
        first = self.rows_given
        self.rows_given += len(block)
        while True:
            # the global index of each row in the block, kept where it falls on the stride
            offset = (-first) % self.stride
            keep = block[offset :: self.stride]
            if self._kept + len(keep) <= self.max_rows:
                break
            self._halve()
        self._data[self._kept : self._kept + len(keep)] = keep
        self._kept += len(keep)

    def _halve(self) -> None:
        """Keep the rows whose global index falls on twice the stride: the even kept rows."""
        kept = self._data[: self._kept : 2].copy()
        self._data[: len(kept)] = kept
        self._kept = len(kept)
        self.stride *= 2
        self._thinned = True

    def column(self, name: str) -> np.ndarray:
        return self._data[: self._kept, self.columns.index(name)].copy()

    def rows(self) -> dict:
        """Every kept row, column by column."""
        return {c: self._data[: self._kept, i].copy() for i, c in enumerate(self.columns)}

    def take(self) -> Update:
        """What the view needs to be up to date: the rows kept since the last call, or all after a thinning."""
        if self._thinned:
            self._thinned = False
            self._taken = self._kept
            return Update(self.rows(), reset=True)
        new = {c: self._data[self._taken : self._kept, i].copy() for i, c in enumerate(self.columns)}
        self._taken = self._kept
        return Update(new, reset=False)
