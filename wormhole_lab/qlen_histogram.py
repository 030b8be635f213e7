"""The reference's queue-length monitor (``QLEN_MON_FILE``), built from telemetry chunks.

third.cc's ``monitor_buffer`` samples every 100 ns from ``QLEN_MON_START`` to the first sample at or after
``QLEN_MON_END`` (ns). Each sample adds, for every switch port, its egress bytes (all classes the MMU
accounts: the data class) divided by 1000 to a histogram of counts per KB. Whenever the sample time is a
multiple of 0.1 s it writes ``time: T`` and one line per switch port, ``switch port c0 c1 ...``: the counts so
far, up to the largest bucket seen. Switches in node order, ports by ns-3 interface index.
"""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.telemetry import Telemetry

INTERVAL_PS = 100_000  # third.cc: qlen_mon_interval = 100 ns
DUMP_EVERY_PS = 10**11  # third.cc: qlen_dump_interval = 100000000 ns
DEFAULT_START_NS = 2_000_000_000  # third.cc's globals, used when the config omits the keys
DEFAULT_END_NS = 2_100_000_000
CHUNK_BYTES = 2 << 20  # telemetry chunk size the monitor asks for (its buffer and a copy are held at once)
TELEMETRY_PORT_BYTES = L.TP_N * 8  # one port's row of a chunk


class QlenHistogram:
    """Counts per (switch port, KB) over the telemetry chunks of a run, and the reference's text dumps."""

    def __init__(self, ports: np.ndarray, switch_ids: np.ndarray, ifindex: np.ndarray):
        order = np.lexsort((ifindex, switch_ids))
        self.ports = np.asarray(ports)[order]
        self.labels = [f"{s} {i}" for s, i in zip(switch_ids[order], ifindex[order], strict=True)]
        self.counts = np.zeros((len(self.ports), 1), dtype=np.int64)
        self.seen = np.zeros(len(self.ports), dtype=np.int64)  # buckets each port has seen (the vector's size)
        self.lines: list[str] = []

    @classmethod
    def for_topology(cls, topo) -> "QlenHistogram":
        ports = np.flatnonzero(topo.is_switch[topo.port_node()])
        return cls(ports, topo.port_node()[ports], topo.port_ifindex()[ports])

    @staticmethod
    def window_ps(start_ns: int | None, end_ns: int | None) -> tuple[int, int]:
        """The monitor's window in ps, with third.cc's defaults for keys the config omits."""
        start = DEFAULT_START_NS if start_ns is None else start_ns
        end = DEFAULT_END_NS if end_ns is None else end_ns
        return start * 1000, end * 1000

    def telemetry(self, start_ns: int | None, end_ns: int | None) -> Telemetry:
        """The sampling the monitor needs: these ports, every 100 ns through the window, idle time included.

        Chunks of about ``CHUNK_BYTES``: each chunk becomes a Dataset, which costs about 5 ms whatever its
        size (512-sample chunks made that 0.9 s of the shipped example's 3 s)."""
        start_ps, end_ps = self.window_ps(start_ns, end_ns)
        rows = int(np.clip(CHUNK_BYTES // (len(self.ports) * TELEMETRY_PORT_BYTES), 512, 1 << 16))
        return Telemetry(
            interval_ps=INTERVAL_PS, ports=self.ports.tolist(), flows=None, chunk_samples=rows,
            start_ps=start_ps, end_ps=end_ps, idle_samples=True,
        )  # fmt: skip

    def add(self, times: np.ndarray, port_rows: np.ndarray, sampled_ports: np.ndarray) -> None:
        """Fold one raw telemetry chunk in (``Simulation.raw_chunks``: its rows are ``sampled_ports``), writing a
        dump at every sample on a 0.1 s boundary."""
        column = {int(p): i for i, p in enumerate(sampled_ports)}
        kb = port_rows[:, [column[int(p)] for p in self.ports], L.TP_QUEUE] // 1000
        begin = 0
        for row in np.flatnonzero(times % DUMP_EVERY_PS == 0):
            self._count(kb[begin : row + 1])
            begin = row + 1
            self._dump(int(times[row]) // 1000)
        self._count(kb[begin:])

    def _count(self, kb: np.ndarray) -> None:
        if not kb.size:
            return
        width = max(int(kb.max()) + 1, self.counts.shape[1])
        if width > self.counts.shape[1]:
            self.counts = np.pad(self.counts, ((0, 0), (0, width - self.counts.shape[1])))
        cells = (np.arange(len(self.ports)) * width + kb).ravel()  # (port, KB) as one index, for bincount
        self.counts += np.bincount(cells, minlength=self.counts.size).reshape(self.counts.shape)
        self.seen = np.maximum(self.seen, kb.max(axis=0) + 1)

    def _dump(self, time_ns: int) -> None:
        self.lines.append(f"time: {time_ns}")
        for label, counts, seen in zip(self.labels, self.counts, self.seen, strict=True):
            self.lines.append(" ".join([label, *map(str, counts[:seen].tolist())]))
