"""ECN marking at dequeue and the shared-buffer accounting, tested on the kernels directly."""

import numpy as np
import pytest

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.mmu import admit, ecn_mark, release
from wormhole_lab.engine.rng import new_state

KMIN, KMAX, PMAX = 400_000, 1_600_000, 0.2


def ports():
    pt = np.zeros((1, L.PT_N), dtype=np.int64)
    ptf = np.zeros((1, L.PTF_N))
    pt[0, L.PT_KMIN], pt[0, L.PT_KMAX], ptf[0, L.PTF_PMAX] = KMIN, KMAX, PMAX
    return pt, ptf


@pytest.mark.parametrize("queued", [500_000, 1_000_000, 1_500_000])
def test_marking_probability_follows_the_kmin_kmax_pmax_line(queued):
    pt, ptf = ports()
    rng = new_state(11)
    draws = 40_000
    marks = sum(ecn_mark(pt, ptf, rng, 0, queued) for _ in range(draws))
    p = PMAX * (queued - KMIN) / (KMAX - KMIN)
    sigma = np.sqrt(p * (1 - p) / draws)
    assert abs(marks / draws - p) < 5 * sigma


def test_marking_is_certain_above_kmax_and_absent_at_or_below_kmin():
    pt, ptf = ports()
    rng = new_state(3)
    assert all(ecn_mark(pt, ptf, rng, 0, KMAX + 1) for _ in range(1000))
    assert not any(ecn_mark(pt, ptf, rng, 0, q) for q in (0, KMIN) for _ in range(1000))


def test_admission_fills_reserve_then_shared_then_headroom_and_release_undoes_it():
    nd = np.zeros((1, L.ND_N), dtype=np.int64)
    nd[0, L.ND_BUFFER], nd[0, L.ND_TOTAL_HDRM], nd[0, L.ND_TOTAL_RSRV] = 100_000, 20_000, 4096
    pt = np.zeros((1, L.PT_N), dtype=np.int64)
    pt[0, L.PT_HEADROOM], pt[0, L.PT_PFC_SHIFT] = 20_000, 3
    ci = np.zeros(L.CI_N, dtype=np.int64)
    ci[L.CI_RESERVE] = 4096
    admitted = 0
    while admit(nd, pt, ci, 0, 0, 1000):
        admitted += 1
    # reserve 4096, then shared until (buffer - hdrm - rsrv - shared) >> 3 is exceeded, then 20 kB of headroom
    assert pt[0, L.PT_HDRM_BYTES] > 19_000
    assert nd[0, L.ND_SHARED_USED] > 0
    assert pt[0, L.PT_ING_BYTES] + pt[0, L.PT_HDRM_BYTES] == admitted * 1000
    for _ in range(admitted):
        release(nd, pt, ci, 0, 0, 1000)
    assert pt[0, L.PT_ING_BYTES] == pt[0, L.PT_HDRM_BYTES] == nd[0, L.ND_SHARED_USED] == 0
