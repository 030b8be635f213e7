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
        n = len(values)
        self.room(n)[self.n : self.n + n] = values
        self.n += n
        return self.n - n

    def room(self, n: int) -> np.ndarray:
        """The whole buffer, with room for ``n`` more after the first ``self.n``: a compiled writer fills them,
        then adds ``n`` to ``self.n``."""
        if self.n + n > len(self._data):
            data = np.zeros((max(2 * len(self._data), self.n + n), *self._shape), dtype=self._data.dtype)
            data[: self.n] = self._data[: self.n]
            self._data = data
        return self._data

    @property
    def values(self) -> np.ndarray:
        """What was appended (a view: valid until the next append)."""
        return self._data[: self.n]
