"""Each flow's egress ports, read from the engine's path table when they are asked for.

Made up front for every flow, as an array and a set each, the paths of MoE-32x22B's 1.4 M flows cost ~45 s
and ~1 GB before the first event; a run needs the sets of the active flows only, so they are made on demand
and dropped when the flow completes.
"""

import numpy as np

from wormhole_lab.engine import layout as L

CODE_LIMIT = 2**63 - 1  # shape codes are int64


class FlowPaths:
    """``data(f)``/``ack(f)``: ports of flow f's data packets and of its ACKs, in path order; ``paths[f]``: the set
    of both (kept until ``forget`` is given f); ``shape_codes(delay_ps)``: per flow, its path shape."""

    def __init__(self, table: np.ndarray, data_begin, data_length, ack_begin, ack_length):
        """Flow f's data ports are ``table[data_begin[f] : data_begin[f] + data_length[f]]``, its ACK ports alike."""
        self._table = np.asarray(table)
        self._data = np.asarray(data_begin), np.asarray(data_length)
        self._ack = np.asarray(ack_begin), np.asarray(ack_length)
        self._sets: dict[int, frozenset] = {}

    @classmethod
    def of_state(cls, state) -> "FlowPaths":
        """The paths of an engine state's flows."""
        fl = state.fl
        columns = (L.FL_PATH_BEGIN, L.FL_PATH_LEN, L.FL_APATH_BEGIN, L.FL_APATH_LEN)
        return cls(state.path_ports, *(fl[:, c].copy() for c in columns))

    def __len__(self) -> int:
        return len(self._data[0])

    def data(self, f: int) -> np.ndarray:
        begin, length = self._data[0][f], self._data[1][f]
        return self._table[begin : begin + length]

    def ack(self, f: int) -> np.ndarray:
        begin, length = self._ack[0][f], self._ack[1][f]
        return self._table[begin : begin + length]

    @property
    def table(self) -> tuple[np.ndarray, ...]:
        """The path table and, per flow, where its data and ACK ports begin in it and how many there are."""
        return self._table, *self._data, *self._ack

    def flat(self, flows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The data and ACK ports of ``flows``, flattened, and for each the index in ``flows`` of its flow."""
        ports, owners = [], []
        for begin, length in (self._data, self._ack):
            lengths = length[flows]
            first = np.repeat(begin[flows] - np.cumsum(lengths) + lengths, lengths)
            ports.append(self._table[first + np.arange(lengths.sum())])
            owners.append(np.repeat(np.arange(len(flows)), lengths))
        return np.concatenate(ports), np.concatenate(owners)

    def __getitem__(self, f: int) -> frozenset:
        kept = self._sets.get(f)
        if kept is None:
            kept = self._sets[f] = frozenset(self.data(f).tolist()) | frozenset(self.ack(f).tolist())
        return kept

    def forget(self, flows: np.ndarray) -> None:
        """``flows`` completed: their ports are not needed again."""
        if self._sets:
            for f in flows.tolist():
                self._sets.pop(f, None)

    def shape_codes(self, delay_ps: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Per flow, a code for the hop counts and one-way propagation delays (ns) of its data and ACK paths, and
        per code the FCG's label ``"hops+hops@ns+ns"`` (``delay_ps``: per port)."""
        total = np.concatenate([[0], np.cumsum(delay_ps[self._table])])
        (data_begin, data_hops), (ack_begin, ack_hops) = self._data, self._ack
        columns = [
            data_hops,
            ack_hops,
            (total[data_begin + data_hops] - total[data_begin]) // 1000,
            (total[ack_begin + ack_hops] - total[ack_begin]) // 1000,
        ]
        # a code per distinct shape in the order of its columns, as mixed-radix numbers of each column's ranks
        # (np.unique(axis=0) is 20x slower, and ranking the codes after each column took twice the sorts); a
        # column of one value (on a rail cluster, every one) adds nothing
        which, size = np.zeros(len(self), dtype=np.int64), 1
        for column in columns:
            if len(column) and column.min() == column.max():
                continue
            values, code = np.unique(column, return_inverse=True)
            if size * len(values) > CODE_LIMIT:  # ranked first, the codes so far stay below the number of flows
                which = np.unique(which, return_inverse=True)[1].ravel()
                size = int(which.max(initial=0)) + 1
            which, size = which * len(values) + code.ravel(), size * len(values)
        if size == 1:
            first = np.zeros(min(1, len(self)), dtype=np.int64)
        else:
            _, first, which = np.unique(which, return_index=True, return_inverse=True)
            which = which.ravel()
        labels = [f"{d}+{a}@{dd}+{ad}" for d, a, dd, ad in zip(*(c[first].tolist() for c in columns), strict=True)]
        return which, labels
