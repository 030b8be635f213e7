"""A queue pair going back to resend tells the flow log that sent bytes went down (``G_WENT_BACK``)."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.qp import go_back


def test_going_back_over_unacknowledged_bytes_is_flagged_and_counted():
    g, fl = np.zeros(L.G_N, dtype=np.int64), np.zeros((2, L.FL_N), dtype=np.int64)
    fl[:, L.FL_SND_UNA] = 4000
    fl[:, L.FL_SND_NXT] = [4000, 9000]
    go_back(g, fl, 0)  # nothing in flight: nothing resent
    assert g[L.G_WENT_BACK] == 0 and fl[0, L.FL_RETX_BYTES] == 0
    go_back(g, fl, 1)
    assert g[L.G_WENT_BACK] == 1 and fl[1, L.FL_SND_NXT] == 4000 and fl[1, L.FL_RETX_BYTES] == 5000
