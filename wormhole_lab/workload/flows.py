"""The flow table: what every other layer consumes as "the traffic"."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FlowTable:
    """One row per flow (an RDMA queue pair). Times are picoseconds, sizes bytes.

    ``sport`` is assigned as the reference does: 10000 + k for the k-th flow of a (src, dst) pair.
    ``pg`` is the priority group from the flow file (3 in every shipped file).
    """

    src: np.ndarray  # int64[n]
    dst: np.ndarray  # int64[n]
    size: np.ndarray  # int64[n] bytes
    start_ps: np.ndarray  # int64[n]
    pg: np.ndarray  # int64[n]
    dport: np.ndarray  # int64[n]
    sport: np.ndarray  # int64[n]

    def __len__(self) -> int:
        return int(self.src.shape[0])


def assign_sports(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """10000 + k for the k-th flow of each (src, dst) pair, in table order (the reference's portNumder)."""
    counters: dict[tuple[int, int], int] = {}
    sport = np.empty(len(src), dtype=np.int64)
    for i, pair in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        sport[i] = 10000 + counters.get(pair, 0)
        counters[pair] = counters.get(pair, 0) + 1
    return sport


def make_flows(src, dst, size, start_ps, pg=3, dport=100) -> FlowTable:
    """Build a FlowTable from array-likes; pg and dport broadcast. Validation lives in the engine's checks."""
    src = np.asarray(src, dtype=np.int64)
    n = len(src)
    dst = np.asarray(dst, dtype=np.int64)
    return FlowTable(
        src=src,
        dst=dst,
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.broadcast_to(np.asarray(start_ps, dtype=np.int64), (n,)).copy(),
        pg=np.broadcast_to(np.asarray(pg, dtype=np.int64), (n,)).copy(),
        dport=np.broadcast_to(np.asarray(dport, dtype=np.int64), (n,)).copy(),
        sport=assign_sports(src, dst),
    )
