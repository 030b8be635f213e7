"""The skips a run took, fast-forwards and memo hits, as a table that grows by appending.

One row per skip: its partition, start, end, the end of its part taken from the memo DB, and where its flows,
their credits (bytes) and goodputs (bytes/ps) and its partition's ports lie in columns shared by all skips. Per
partition id, the skip in progress. A batch of skips is appended with a few array copies: as an object each, a
memo hit cost ~3.5 us of Python (MoE-8x7B takes 2,272 of them in a 0.17 s run).
"""

from dataclasses import dataclass

import numpy as np

from wormhole_lab.arrays import concat_ranges
from wormhole_lab.engine.jit import kernel
from wormhole_lab.wormhole.grown import Grown

# the columns of a skip's row (each _HI right after its _LO: SkipLog._of reads them as a pair)
PART, START, END, MEMO_UNTIL, FLOW_LO, FLOW_HI, PORT_LO, PORT_HI = range(8)


@dataclass
class Skip:
    """One fast-forward (or memoized transient), as read from the log: its ``flows`` at ``goodput`` (bytes/ps),
    credited ``adv`` bytes."""

    part: int
    start: int
    end: int
    flows: np.ndarray
    goodput: np.ndarray
    adv: np.ndarray
    memo_until: int  # the skip is taken from the memo DB up to here, fast-forwarded after
    ports: np.ndarray  # the partition's ports (a skip-back shifts them back)


class SkipLog:
    """Every skip taken, in order of start (a skip-back shortens one in place), and per partition id < ``n_parts``
    the one in progress (``active_of``: its row, or -1)."""

    def __init__(self, n_parts: int):
        self._rows = Grown(np.int64, 8)
        self._flows, self._adv = Grown(np.int64), Grown(np.int64)
        self._goodput, self._ports = Grown(np.float64), Grown(np.int64)
        self.active_of = np.full(n_parts, -1, dtype=np.int64)
        self.n_active = 0

    def __len__(self) -> int:
        return self._rows.n

    def append(self, parts, starts, ends, memo_until, flows, flow_offsets, adv, goodput, ports, port_offsets) -> None:
        """Skips k = 0, 1, ... of partition ``parts[k]`` from ``starts[k]`` to ``ends[k]``, taken from the memo DB
        up to ``memo_until[k]``, of ``flows[flow_offsets[k] : flow_offsets[k + 1]]`` (credited ``adv``, at
        ``goodput``) on ``ports[port_offsets[k] : port_offsets[k + 1]]``, are in progress (``parts`` distinct). A
        partition's skip in progress is replaced by its new one."""
        (rows, row0), (flow_col, flow0), (port_col, port0) = (
            self._rows.claim(len(parts)),
            self._flows.claim(len(flows)),
            self._ports.claim(len(ports)),
        )
        (adv_col, _), (goodput_col, _) = self._adv.claim(len(flows)), self._goodput.claim(len(flows))
        self.n_active += _append(
            rows, row0, flow_col, adv_col, goodput_col, flow0, port_col, port0,
            self.active_of, parts, starts, ends, memo_until, flows, flow_offsets, adv, goodput, ports, port_offsets,
        )  # fmt: skip

    def row(self, i: int) -> np.ndarray:
        """Skip ``i``'s row (a view: valid until the next append)."""
        return self._rows.values[i]

    def _of(self, column: Grown, i: int, lo: int = FLOW_LO) -> np.ndarray:
        """Skip ``i``'s values in ``column``, per flow (``lo`` FLOW_LO) or per port (PORT_LO); a view, valid until
        the next append."""
        row = self._rows.values[i]
        return column.values[row[lo] : row[lo + 1]]

    def flows(self, i: int) -> np.ndarray:
        return self._of(self._flows, i)

    def goodput(self, i: int) -> np.ndarray:
        return self._of(self._goodput, i)

    def adv(self, i: int) -> np.ndarray:
        """Skip ``i``'s credits (writing to them changes them)."""
        return self._of(self._adv, i)

    def ports(self, i: int) -> np.ndarray:
        return self._of(self._ports, i, PORT_LO)

    def end(self, parts: np.ndarray) -> None:
        """The skips in progress of ``parts`` (distinct) are over (ended or cut short)."""
        self.n_active -= int((self.active_of[parts] >= 0).sum())
        self.active_of[parts] = -1

    def flows_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The flows of skips ``ids``, one skip after another, their credits, and how many each skip has."""
        rows = self._rows.values[ids]
        sizes = rows[:, FLOW_HI] - rows[:, FLOW_LO]
        at = concat_ranges(rows[:, FLOW_LO], sizes)
        return self._flows.values[at], self._adv.values[at], sizes

    def rows(self, ids: np.ndarray) -> np.ndarray:
        return self._rows.values[ids]

    def skip(self, i: int) -> Skip:
        """Skip ``i`` as a record (its arrays copied)."""
        row = self._rows.values[i]
        return Skip(
            int(row[PART]), int(row[START]), int(row[END]), self.flows(i).copy(), self.goodput(i).copy(),
            self.adv(i).copy(), int(row[MEMO_UNTIL]), self.ports(i).copy(),
        )  # fmt: skip

    def records(self) -> list[Skip]:
        """Every skip, in order of start."""
        return [self.skip(i) for i in range(len(self))]

    def active(self) -> dict[int, Skip]:
        """The skips in progress, by partition."""
        parts = np.flatnonzero(self.active_of >= 0)
        return {int(p): self.skip(int(i)) for p, i in zip(parts, self.active_of[parts], strict=True)}


@kernel
def _append(rows, row0, flow_col, adv_col, goodput_col, flow0, port_col, port0, active_of, parts, starts, ends,
            memo_until, flows, flow_offsets, adv, goodput, ports, port_offsets):  # fmt: skip
    """``SkipLog.append`` into buffers with room, the log's rows from ``row0``, its flow columns from ``flow0`` and
    its ports from ``port0``; returns how many of ``parts`` had no skip in progress (a memo hit cost ~25 us of
    NumPy calls here)."""
    for j in range(len(flows)):
        flow_col[flow0 + j] = flows[j]
        adv_col[flow0 + j] = adv[j]
        goodput_col[flow0 + j] = goodput[j]
    for j in range(len(ports)):
        port_col[port0 + j] = ports[j]
    fresh = 0
    for k in range(len(parts)):
        r = row0 + k
        rows[r, PART], rows[r, START], rows[r, END], rows[r, MEMO_UNTIL] = parts[k], starts[k], ends[k], memo_until[k]
        rows[r, FLOW_LO], rows[r, FLOW_HI] = flow0 + flow_offsets[k], flow0 + flow_offsets[k + 1]
        rows[r, PORT_LO], rows[r, PORT_HI] = port0 + port_offsets[k], port0 + port_offsets[k + 1]
        if active_of[parts[k]] < 0:
            fresh += 1
        active_of[parts[k]] = r
    return fresh
