"""A queue pair going back to resend tells the flow log that sent bytes went down (``G_WENT_BACK``)."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.qp import fill_dependants, go_back


def test_going_back_over_unacknowledged_bytes_is_flagged_and_counted():
    g, fl = np.zeros(L.G_N, dtype=np.int64), np.zeros((2, L.FL_N), dtype=np.int64)
    fw = np.zeros((2, L.FW_N), dtype=np.int64)
    fl[:, L.FL_SLOT] = [1, 0]  # the sending state is in the flow's slot, wherever that is
    fw[:, L.FW_SND_UNA] = 4000
    fw[:, L.FW_SND_NXT] = [9000, 4000]
    go_back(g, fl, fw, 0)  # nothing in flight: nothing resent
    assert g[L.G_WENT_BACK] == 0 and fl[0, L.FL_RETX_BYTES] == 0
    go_back(g, fl, fw, 1)
    assert g[L.G_WENT_BACK] == 1 and fw[0, L.FW_SND_NXT] == 4000 and fl[1, L.FL_RETX_BYTES] == 5000


def test_dependants_are_grouped_by_the_flow_waited_for_in_id_order():
    rng = np.random.default_rng(7)
    n = 300
    counts = rng.integers(0, 6, n)
    offset = np.concatenate([[0], np.cumsum(counts)])
    ids = rng.integers(0, n, offset[-1])  # repeats and ids above the waiting flow's are allowed here
    first = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=n))])
    children = np.full(len(ids), -1)
    none = np.zeros(0, dtype=np.int64)
    fill_dependants(offset, ids, none, first[:-1].copy(), children, none)
    owner = np.repeat(np.arange(n), counts)
    order = np.argsort(ids, kind="stable")
    assert np.array_equal(children, owner[order])
    # per-edge delays land beside their edge's dependant, in the same pass
    gaps = rng.integers(0, 10**9, len(ids))
    children, child_gaps = np.full(len(ids), -1), np.full(len(ids), -1)
    fill_dependants(offset, ids, gaps, first[:-1].copy(), children, child_gaps)
    assert np.array_equal(children, owner[order]) and np.array_equal(child_gaps, gaps[order])
