"""Switch shared buffer: ingress admission, PFC pause/resume thresholds and ECN at dequeue.

Follows the reference's switch-mmu.cc: per ingress (port, class) a 4 KiB reserve, then the
shared pool up to a dynamic threshold ``free_shared >> shift``, then the port's headroom.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CI_RESERVE,
    CI_RESUME_OFFSET,
    ND_BUFFER,
    ND_SHARED_USED,
    ND_TOTAL_HDRM,
    ND_TOTAL_RSRV,
    PT_HDRM_BYTES,
    PT_HEADROOM,
    PT_ING_BYTES,
    PT_KMAX,
    PT_KMIN,
    PT_PAUSING,
    PT_PFC_SHIFT,
    PTF_PMAX,
)
from wormhole_lab.engine.rng import uniform


@kernel
def pfc_threshold(nd, pt, node, port):
    free_shared = nd[node, ND_BUFFER] - nd[node, ND_TOTAL_HDRM] - nd[node, ND_TOTAL_RSRV] - nd[node, ND_SHARED_USED]
    if free_shared < 0:
        free_shared = 0
    return free_shared >> pt[port, PT_PFC_SHIFT]


@kernel
def shared_used(pt, ci, port):
    used = pt[port, PT_ING_BYTES] - ci[CI_RESERVE]
    return used if used > 0 else 0


@kernel
def admit(nd, pt, ci, node, port, size):
    """Account a packet entering ``node`` through ``port``; False means it is dropped."""
    if size + pt[port, PT_HDRM_BYTES] > pt[port, PT_HEADROOM] and (
        size + shared_used(pt, ci, port) > pfc_threshold(nd, pt, node, port)
    ):
        return False
    new_bytes = pt[port, PT_ING_BYTES] + size
    reserve = ci[CI_RESERVE]
    if new_bytes <= reserve:
        pt[port, PT_ING_BYTES] = new_bytes
    elif new_bytes - reserve > pfc_threshold(nd, pt, node, port):
        pt[port, PT_HDRM_BYTES] += size
    else:
        pt[port, PT_ING_BYTES] = new_bytes
        nd[node, ND_SHARED_USED] += min(size, new_bytes - reserve)
    return True


@kernel
def release(nd, pt, ci, node, port, size):
    """Undo ``admit`` when the packet leaves the switch."""
    from_hdrm = min(pt[port, PT_HDRM_BYTES], size)
    over_reserve = pt[port, PT_ING_BYTES] - ci[CI_RESERVE]
    from_shared = min(size - from_hdrm, over_reserve if over_reserve > 0 else 0)
    pt[port, PT_HDRM_BYTES] -= from_hdrm
    pt[port, PT_ING_BYTES] -= size - from_hdrm
    nd[node, ND_SHARED_USED] -= from_shared


@kernel
def should_pause(nd, pt, ci, node, port):
    return pt[port, PT_PAUSING] == 0 and (
        pt[port, PT_HDRM_BYTES] > 0 or shared_used(pt, ci, port) >= pfc_threshold(nd, pt, node, port)
    )


@kernel
def should_resume(nd, pt, ci, node, port):
    if pt[port, PT_PAUSING] == 0:
        return False
    used = shared_used(pt, ci, port)
    return pt[port, PT_HDRM_BYTES] == 0 and (
        used == 0 or used + ci[CI_RESUME_OFFSET] <= pfc_threshold(nd, pt, node, port)
    )


@kernel
def ecn_mark(pt, ptf, rng, port, queued_bytes):
    """RED-like marking on the egress bytes left after the dequeue: above Kmax always, between Kmin and Kmax
    with probability Pmax * (q - Kmin) / (Kmax - Kmin)."""
    kmin = pt[port, PT_KMIN]
    kmax = pt[port, PT_KMAX]
    if queued_bytes > kmax:
        return True
    if queued_bytes > kmin:
        p = ptf[port, PTF_PMAX] * (queued_bytes - kmin) / (kmax - kmin)
        return uniform(rng) < p
    return False
