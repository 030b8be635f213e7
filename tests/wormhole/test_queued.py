"""The bytes a flow has sent less those of its data waiting in queues: given ports' queues, or its own path's."""

from types import SimpleNamespace

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.wormhole.queued import queued_on_paths, unqueued_bytes


def test_unqueued_bytes_leave_out_the_data_in_the_given_ports_queues_only():
    """Port 0 queues data of flows 7 and 3 and an ACK of flow 7; port 1 data of flows 3 and 9 (9 is not asked for);
    port 2 is not asked for."""
    queues = {0: [(7, L.KIND_DATA, 1000), (3, L.KIND_DATA, 500), (7, L.KIND_ACK, 0)], 1: [(3, L.KIND_DATA, 1000),
              (9, L.KIND_DATA, 1000)], 2: [(7, L.KIND_DATA, 1000)]}  # fmt: skip
    pk = np.zeros((8, L.PK_N), dtype=np.int64)
    pt = np.full((3, L.PT_N), -1, dtype=np.int64)
    k = 0
    for port, packets in queues.items():
        pt[port, L.PT_DATA_HEAD] = k
        for i, (flow, kind, payload) in enumerate(packets):
            pk[k, [L.PK_FLOW, L.PK_KIND, L.PK_PAYLOAD]] = flow, kind, payload
            pk[k, L.PK_NEXT] = k + 1 if i + 1 < len(packets) else -1
            k += 1
    fl = np.zeros((10, L.FL_N), dtype=np.int64)
    fw = np.zeros((2, L.FW_N), dtype=np.int64)
    fl[:, L.FL_SLOT] = -1
    fl[[3, 7], L.FL_SLOT] = 1, 0
    fw[[1, 0], L.FW_SND_NXT] = 10_000, 20_000
    state = SimpleNamespace(pt=pt, pk=pk, fl=fl, fw=fw)
    assert unqueued_bytes(state, np.array([3, 7]), [1, 0]).tolist() == [8_500, 19_000]
    # over their own data paths (flow 3 crosses ports 0 and 1, flow 7 ports 2 and 0): every queue they are in
    fl[3, L.FL_PATH_BEGIN], fl[3, L.FL_PATH_LEN], fl[7, L.FL_PATH_BEGIN], fl[7, L.FL_PATH_LEN] = 0, 2, 2, 2
    seen, touched, queued = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.int64)
    queued_on_paths(fl, pt, pk, np.array([0, 1, 2, 0]), np.array([3, 7]), seen, touched, queued)
    assert queued.tolist() == [1_500, 2_000] and not seen.any()
