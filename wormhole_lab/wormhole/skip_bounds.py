"""How far a skip may go, compiled: a partition's first completion, the known flow starts on its ports, and the
rules (``SkipRules``) that bound every skip and memo jump (``fastforward`` plans with them)."""

from typing import NamedTuple

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine.jit import kernel

NEVER = int(np.iinfo(np.int64).max)


class KnownStarts(NamedTuple):
    """The predetermined interrupts, flows that wait for nobody: per port ``p``, their start times (sorted) and ids
    at ``[offsets[p] : offsets[p + 1]]`` of ``times`` and ``flows``."""

    offsets: np.ndarray
    times: np.ndarray
    flows: np.ndarray


class SkipRules(NamedTuple):
    """What bounds a skip: bytes each flow leaves to the packets (``tail``), the payload credits are whole packets
    of, the end of the run (``horizon``), the shortest skip worth taking and the cap of a partition's first skip."""

    tail: int
    payload: int
    horizon: int
    min_skip: int
    first_cap: int


@kernel
def no_shared_data_port(fl, path_ports, flows, count):
    """True when no two of ``flows`` send data through the same port (``count``: per port scratch, 0 on entry and
    exit)."""
    shared = False
    for f in flows:
        for i in range(fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_BEGIN] + fl[f, L.FL_PATH_LEN]):
            shared |= count[path_ports[i]] > 0
            count[path_ports[i]] += 1
    for f in flows:
        for i in range(fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_BEGIN] + fl[f, L.FL_PATH_LEN]):
            count[path_ports[i]] = 0
    return not shared


@kernel
def until_done(fl, flows, goodput, sent, tail):
    """Time until the first of ``flows`` would be down to its last ``tail`` bytes at ``goodput`` (bytes/ps), having
    sent ``sent``; 0 when a flow has no rate or no room left."""
    if len(flows) == 0:
        return NEVER
    soonest = np.inf
    for i in range(len(flows)):
        left = fl[flows[i], L.FL_SIZE] - sent[i] - tail
        if goodput[i] <= 0 or left <= 0:
            return 0
        soonest = min(soonest, left / goodput[i])
    return NEVER if soonest >= NEVER else int(soonest)  # a cast past int64 would wrap


@kernel
def has_room(fl, fw, flows, moved, tail):
    """Every one of ``flows`` has more than ``moved`` bytes and a ``tail`` left to send."""
    for i in range(len(flows)):
        if moved[i] > fl[flows[i], L.FL_SIZE] - fw[fl[flows[i], L.FL_SLOT], L.FW_SND_NXT] - tail:
            return False
    return True


@kernel
def base_cap(fl, path_ports, flows, count, first):
    """``FastForward._cap`` before any skip of the partition: none for flows that share no data port, else
    ``first``."""
    return NEVER if no_shared_data_port(fl, path_ports, flows, count) else first


@kernel
def skip_span(fl, starts, ports, flows, goodput, sent, t, rules, cap):
    """The length of ``FastForward._span``'s skip from ``t`` (``_span`` keeps the history): at most the ``rules``'
    ``horizon - t`` and ``cap``, 0 when less than their ``min_skip``, when the first flow would be down to its
    ``tail`` sooner, or when a flow with a known start (``starts``) joins the partition on ``ports`` before that
    completion.

    Such a partition is not skipped (nor taken from the memo DB) before the join: a skip leaves the members'
    packets shifted by parts of a packet, and flows that meet on a port settle on shares such details decide.
    Ending the skip earlier does not help (HPCC, 2 x 50 MB into one host, the second 300 us later: a skip that
    ended at the join left a flow 4.2 % off packet mode, one that ended 100 us before it 13.8 %, none 0.004 %)."""
    done = until_done(fl, flows, goodput, sent, rules.tail)
    if done <= 0 or next_known_start(starts, fl, ports, t) - t < done:
        return 0
    dt = min(rules.horizon - t, done, cap)
    dt -= dt % 1000  # keep every event on the reference's 1 ns grid
    return dt if dt >= rules.min_skip else 0


@kernel
def next_known_start(starts, fl, ports, now):
    """The first known start (``KnownStarts``) at or after ``now`` on ``ports``, NEVER for none."""
    offsets, times, flows = starts.offsets, starts.times, starts.flows
    best = NEVER
    for p in ports:
        lo, hi = offsets[p], offsets[p + 1]
        while lo < hi:  # the first start at or after now
            mid = (lo + hi) // 2
            if times[mid] < now:
                lo = mid + 1
            else:
                hi = mid
        i = lo
        while i < offsets[p + 1] and times[i] == now and fl[flows[i], L.FL_STATE] != L.FS_PENDING:
            i += 1  # a flow starting at this very instant counts only until it has started
        if i < offsets[p + 1] and times[i] < best:
            best = times[i]
    return best
