"""Arrays that grow by appending, for logs kept as columns rather than as an object per row."""

import numpy as np


class Grown:
    """An array of ``dtype`` (rows of ``width`` values, or scalars) that grows by appending, doubling its room."""

    def __init__(self, dtype, width: int | None = None):
        self._shape = () if width is None else (width,)
        self._data = np.zeros((64, *self._shape), dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> int:
        """Append ``values``; returns where they begin."""
        data, first = self.claim(len(values))
        data[first : first + len(values)] = values
        return first

    def claim(self, n: int) -> tuple[np.ndarray, int]:
        """Count ``n`` more entries, for the caller to write at once: the whole buffer (valid until the next claim)
        and where they begin (a compiled writer fills several logs in one call)."""
        if self.n + n > len(self._data):
            data = np.zeros((max(2 * len(self._data), self.n + n), *self._shape), dtype=self._data.dtype)
            data[: self.n] = self._data[: self.n]
            self._data = data
        self.n += n
        return self._data, self.n - n

    @property
    def values(self) -> np.ndarray:
        """What was appended (a view: valid until the next append)."""
        return self._data[: self.n]
