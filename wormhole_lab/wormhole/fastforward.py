"""Fast-forwarding a steady partition: how far, how many bytes, and undoing part of it (skip-back).

A skip of ``dt`` moves the partition's pending events ``dt`` later (engine.offset) and credits each flow
``goodput x dt`` bytes, rounded down to whole packets. It ends before the partition's first flow would
put its last packets on the wire (those few packets then run packet by packet, so completion times
come from the packet-level tail, and so do last-byte deliveries, which release dependants with
``FlowTable.release_on_delivery``), and before any known flow start on the partition's ports. A flow
that starts earlier than foreseen on those ports skips the partition back to that moment.
"""

import contextlib
from functools import cached_property
from typing import NamedTuple

import numpy as np

from wormhole_lab.arrays import grown_ids
from wormhole_lab.engine import layout as L
from wormhole_lab.engine.cca.dcqcn import resume_timers
from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.offset import offset_partitions
from wormhole_lab.engine.state import slots_of
from wormhole_lab.wormhole.flow_paths import FlowPaths
from wormhole_lab.wormhole.grown import Grown
from wormhole_lab.wormhole.queued import queued_on_paths
from wormhole_lab.wormhole.segments import select_segments
from wormhole_lab.wormhole.skip_bounds import (
    NEVER,
    KnownStarts,
    SkipRules,
    base_cap,
    has_room,
    next_known_start,
    skip_span,
    until_done,
)
from wormhole_lab.wormhole.skip_log import END, MEMO_UNTIL, PART, START, Skip, SkipLog

FIRST_CAP_WINDOWS = 10  # the first skip of a partition is at most this many steady-test windows long
CREDIT_SCALE = 1.0  # test hook: a fast-forward credits this times the measured goodput (the audit must see it)


# the per-flow CCA state a memoized transient restores (sequence-valued state moves with the offset): the sending
# rate (in fl), then these integers of the flow's slot in fw, and these floats of its slot in ff
STATE_FW = (
    L.FW_TARGET,
    L.FW_STAGE,
    L.FW_ALPHA_CNP,
    L.FW_DEC_CNP,
    L.FW_FIRST_CNP,
    L.FW_CUR_RATE,
    L.FW_LAST_RTT,
    L.FW_CA_STATE,
    L.FW_ECN_CNT,
    L.FW_BATCH,
)
STATE_FLOAT = (L.FF_ALPHA, L.FF_U, L.FF_RTT_DIFF, L.FF_GOODPUT)
STATE_SHAPE = (1 + len(STATE_FW), len(STATE_FLOAT))  # a stored flow's integers and floats
_STATE_FW, _STATE_FLOAT = np.array(STATE_FW), np.array(STATE_FLOAT)  # as indices, made once
_GOODPUT = STATE_FLOAT.index(L.FF_GOODPUT)  # where a stored transient keeps each flow's converged goodput


class Transients(NamedTuple):
    """Stored transients, the k-th for ``flows[flow_offsets[k] : flow_offsets[k + 1]]``: the bytes each flow moved
    in it and its goodput after it (bytes/ps), its length ``t_conv[k]`` and whether it ``settled[k]``."""

    flows: np.ndarray
    flow_offsets: np.ndarray
    moved: np.ndarray
    goodput: np.ndarray
    t_conv: np.ndarray
    settled: np.ndarray


def cca_state(state, flows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a memo entry stores of active ``flows``' CCA state: integers and floats, ``STATE_SHAPE`` per flow."""
    slots = slots_of(state.fl, flows)
    ints = np.column_stack([state.fw[slots, L.FW_RATE], state.fw[slots][:, _STATE_FW]])
    return ints, state.ff[slots][:, _STATE_FLOAT]


@kernel
def _shares_disagree(
    fl, ff, fw, pt, path_ports, flows, theta, data_wire, payload, resolution, total, fastest, count, flag, touched
):
    """``FastForward.shares_disagree``; per port scratch: goodput ``total``, ``fastest``, flows ``count`` (0 on entry
    and exit), ``flag`` (1: every flow cycle-steady, then 2: full), the ports ``touched``."""
    n = 0
    for f in flows:
        g = ff[fl[f, L.FL_SLOT], L.FF_GOODPUT]
        for i in range(fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_BEGIN] + fl[f, L.FL_PATH_LEN]):
            p = path_ports[i]
            if count[p] == 0:
                touched[n] = p
                n += 1
                total[p], fastest[p], flag[p] = 0.0, g, 1
            count[p] += 1
            total[p] += g
            fastest[p] = max(fastest[p], g)
            if fw[fl[f, L.FL_SLOT], L.FW_CYC_STEADY] == 0:
                flag[p] = 0
    for k in range(n):
        p = touched[k]
        full = total[p] * data_wire / payload * 8e12 >= (1 - 2 * theta) * pt[p, L.PT_RATE]
        flag[p] = 2 * full + (flag[p] == 1 and full)  # 2: full; 3: full, every flow cycle-steady
    disagree = False
    for f in flows:
        g = ff[fl[f, L.FL_SLOT], L.FF_GOODPUT]
        begin, end = fl[f, L.FL_PATH_BEGIN], fl[f, L.FL_PATH_BEGIN] + fl[f, L.FL_PATH_LEN]
        for i in range(begin, end):
            p = path_ports[i]
            if flag[p] != 2 or count[p] < 2 or g >= (1 - theta / 10) * fastest[p] - resolution:
                continue
            held_elsewhere = False
            for j in range(begin, end):
                if path_ports[j] != p and flag[path_ports[j]] >= 2:
                    held_elsewhere = True
            if not held_elsewhere:
                disagree = True
    for k in range(n):
        count[touched[k]] = 0
    return disagree


@kernel
def _add_skipped_events(total, adv, flows, hops, payload):
    """``total`` plus the events a skip of ``adv`` bytes per flow of ``flows`` spared: a TX_DONE and an ARRIVE per
    packet and hop (``hops``, per flow), added one flow after another (the estimate's rounding as it always was)."""
    for i in range(len(flows)):
        total += adv[i] / payload * 2 * hops[flows[i]]
    return total


@kernel
def _restore(t, flows, state_int, state_float, fw_cols, float_cols, resume_at):
    """Give ``flows`` the stored CCA state (``cca_state``'s: the rate, columns ``fw_cols`` of ``fw``, ``float_cols``
    of ``ff``) on the engine's tables ``t``. DCQCN flows that had their first CNP and take a state from before one
    restart their timers at ``resume_at``."""
    g, events, fl, ff, fw, ci = t.g, t.events, t.fl, t.ff, t.fw, t.ci
    first = -1
    for c in range(len(fw_cols)):
        if fw_cols[c] == L.FW_FIRST_CNP:
            first = 1 + c
    dcqcn = ci[L.CI_CC] == L.CC_DCQCN
    for i in range(len(flows)):
        f = flows[i]
        s = fl[f, L.FL_SLOT]
        restarts = fw[s, L.FW_FIRST_CNP] == 1 and state_int[i, first] == 0
        fw[s, L.FW_RATE] = state_int[i, 0]
        for c in range(len(fw_cols)):
            fw[s, fw_cols[c]] = state_int[i, 1 + c]
        for c in range(len(float_cols)):
            ff[s, float_cols[c]] = state_float[i, c]
        if dcqcn and restarts:
            resume_timers(g, events, fl, fw, ci, f, resume_at)


@kernel
def _take_stored(t, flows, state_int, state_float, fw_cols, float_cols, resume_at, moved, payload, dt, credit):
    """``_restore``, then each flow's ``credit``: the stored bytes it ``moved`` and ``dt`` ps at its restored goodput,
    each in whole packets."""
    _restore(t, flows, state_int, state_float, fw_cols, float_cols, resume_at)
    for i in range(len(flows)):
        goodput = t.ff[t.fl[flows[i], L.FL_SLOT], L.FF_GOODPUT]
        credit[i] = moved[i] // payload * payload + np.int64(goodput * dt) // payload * payload


@kernel
def _memo_fits(fl, fw, starts, ports, flows, moved, goodput, sent, now, t_conv, settled, tail):
    """``_plan_memo``'s test: every flow has room for ``moved`` bytes and its tail, and no known start joins before the
    first completion (after a ``settled`` transient, the first flow's end at ``goodput`` from ``sent``; else the
    transient's end)."""
    if not has_room(fl, fw, flows, moved, tail):
        return False
    after = until_done(fl, flows, goodput, sent, tail) if settled else 0  # kept apart from t_conv: may be NEVER
    return next_known_start(starts, fl, ports, now) - now - t_conv >= after


@kernel
def _plan_memo(fl, fw, path_ports, starts, ports, flows, moved, goodput, now, t_conv, settled, rules, count, sent):
    """Whether and how a stored transient of ``t_conv`` ps, in which ``flows`` moved ``moved`` bytes (and, if
    ``settled``, went on at ``goodput``, bytes/ps), is taken for their partition (on ``ports``) at ``now``: (-1, 0)
    when it does not fit (``_memo_fits``); else the fast-forward that follows it, measured from its end as
    ``FastForward._span`` measures any (0: none), and that skip's cap (``base_cap``'s: a partition that just formed
    has no skip history). ``sent``: scratch of at least a flow per member."""
    payload = rules.payload
    for i in range(len(flows)):
        sent[i] = fw[fl[flows[i], L.FL_SLOT], L.FW_SND_NXT] + moved[i]
    if not _memo_fits(fl, fw, starts, ports, flows, moved, goodput, sent, now, t_conv, settled, rules.tail):
        return -1, 0
    if not settled:
        return 0, 0
    for i in range(len(flows)):
        sent[i] = fw[fl[flows[i], L.FL_SLOT], L.FW_SND_NXT] + moved[i] // payload * payload
    cap = base_cap(fl, path_ports, flows, count, rules.first_cap)
    return skip_span(fl, starts, ports, flows, goodput, sent, now + t_conv, rules, cap), cap


@kernel
def _plan_hits(fl, fw, path_ports, starts, ports, port_offsets, hits, now, rules, count, sent, dt, cap):
    """``_plan_memo`` of every stored transient k of ``hits`` (``Transients``) on
    ``ports[port_offsets[k] : port_offsets[k + 1]]``, into ``dt[k]`` and ``cap[k]``."""
    for k in range(len(hits.t_conv)):
        a, b = hits.flow_offsets[k], hits.flow_offsets[k + 1]
        on = ports[port_offsets[k] : port_offsets[k + 1]]
        dt[k], cap[k] = _plan_memo(fl, fw, path_ports, starts, on, hits.flows[a:b], hits.moved[a:b],
                                   hits.goodput[a:b], now, hits.t_conv[k], hits.settled[k], rules, count,
                                   sent)  # fmt: skip


@kernel
def _stored_flows(offsets, positions, entries, members, member_offsets, flows, rows):
    """Per stored flow of each entry ``entries[k]`` (rows ``offsets[e] : offsets[e + 1]`` of its store), the flow of
    ``members[member_offsets[k] : member_offsets[k + 1]]`` that stands for it into ``flows``, and its row into
    ``rows``, entry after entry."""
    for k in range(len(entries)):
        e, at = entries[k], member_offsets[k]
        for i in range(offsets[e + 1] - offsets[e]):
            rows[at + i] = offsets[e] + i
            flows[at + i] = members[at + positions[offsets[e] + i]]


@kernel
def _mark_jump(parts, part, now, dt, memo_until, half_window):
    """Partition ``part`` jumps ``dt`` from ``now``, taken from the memo DB up to ``memo_until``."""
    parts[part, L.PA_SKIP_START] = now
    parts[part, L.PA_SKIP_END] = now + dt
    if memo_until > now:
        parts[part, L.PA_CHANGED_AT] = now + dt  # its steady windows start after the stored transient
    # the next skip needs a fresh half window of samples, so that drift shows up in the goodput
    parts[part, L.PA_RETRY_AT] = now + dt + half_window


@kernel
def _take_hits(t, part, hits, state_int, state_float, fw_cols, float_cols, dt, now, payload, half_window, credit):
    """Take every stored transient k of ``hits`` (``Transients``) that fits (``dt[k] >= 0``, ``_plan_hits``) for
    partition ``part[k]``, on the engine's tables ``t``: ``_take_stored`` into ``credit``, the steady-test rings
    moved with it (``_shift_rings``) and the partition marked as jumping (``_mark_jump``). Its events shift later
    (``FastForward._queue_shifts``)."""
    flows, flow_offsets, moved, t_conv = hits.flows, hits.flow_offsets, hits.moved, hits.t_conv
    for k in range(len(part)):
        if dt[k] < 0:
            continue
        a, b = flow_offsets[k], flow_offsets[k + 1]
        _take_stored(t, flows[a:b], state_int[a:b], state_float[a:b], fw_cols, float_cols, now + t_conv[k],
                     moved[a:b], payload, dt[k], credit[a:b])  # fmt: skip
        _shift_rings(t.fl, t.seq_ring, flows[a:b], credit[a:b])
        _mark_jump(t.parts, part[k], now, t_conv[k] + dt[k], now + t_conv[k], half_window)


@kernel
def _shift_rings(fl, seq_ring, flows, credit):
    """The steady-test window lives in the partition's own (shifted) timeline: the sequence numbers of its
    samples move by each flow's ``credit`` too."""
    for i in range(len(flows)):
        row = fl[flows[i], L.FL_SLOT]
        if credit[i] != 0 and row >= 0:  # a flow that completed holds no ring
            for j in range(seq_ring.shape[1]):
                seq_ring[row, j, 0] += credit[i]
                seq_ring[row, j, 1] += credit[i]


class FastForward:
    """Plans and applies skips on an engine state; keeps the statistics of what was skipped."""

    def __init__(self, state, flows, min_skip_ps: int, window_ps: int, theta: float, tail_packets: int):
        self.state = state
        self.auditor = None  # an audit.Auditor, offered every skip before it is taken
        self.window_ps = window_ps
        self.first_cap_ps = FIRST_CAP_WINDOWS * window_ps
        self.theta = theta
        # per partition id, its last skip's row in _history_log (its cap, and where its flows and their goodputs
        # lie), or -1
        self._history = np.full(len(state.parts), -1, dtype=np.int64)
        self._history_log = Grown(np.int64, 3)
        self._history_flows, self._history_goodput = Grown(np.int64), Grown(np.float64)
        self.payload = int(state.ci[L.CI_PAYLOAD])
        self.tail_bytes = tail_packets * self.payload  # left to the packet level by every skip and memo hit
        self.data_wire = self.payload + int(state.ci[L.CI_DATA_HDR])
        self.min_skip_ps = min_skip_ps
        self.paths = FlowPaths.of_state(state)
        _, _, data_hops, _, ack_hops = self.paths.table
        self._hops = data_hops + ack_hops
        n_ports = len(state.pt)  # scratch of shares_disagree and the caps, per port
        self._port_sum, self._port_fastest = np.zeros(n_ports), np.zeros(n_ports)
        self._port_count, self._port_flag = np.zeros(n_ports, dtype=np.int64), np.zeros(n_ports, dtype=np.int64)
        self._port_touched = np.zeros(n_ports, dtype=np.int64)
        self.skips = SkipLog(len(state.parts))  # every skip and memo hit, and those in progress
        self._events_skipped = 0.0
        self.skips_taken = 0
        self.skip_backs = 0
        # the kernel reads a skip's credits by flow id; one array serves every skip (only its flows are set), as
        # an array per skip cost O(flows) each time and kept ~0.4 MB per skip of GPT-175B alive in the log
        self._credit = np.zeros(len(flows), dtype=np.int64)
        self._shift = np.zeros(len(state.parts), dtype=np.int64)  # per partition id, the shift being applied, ps
        self._shifts: list[tuple] = []  # (partitions, shifts, ports, flows, credits) waiting for the batch's end
        self._shifting: set[int] = set()  # the partitions in them
        self._batching = False
        self._ff_time = np.zeros(len(flows), dtype=np.int64)
        self._memo_time = np.zeros(len(flows), dtype=np.int64)
        self._booked: list[np.ndarray] = []  # skips (ids in the log) that ended, not yet added to the three totals
        self._flows = flows

    @cached_property
    def _known_starts(self) -> KnownStarts:
        """The predetermined interrupts, built when first asked for: its sort costs ~25 ms per 30,000 flows, and a
        run that tries no skip needs none."""
        flows = self._flows
        independent = np.flatnonzero(np.diff(flows.dep_offset) == 0)
        port, owner = self.paths.flat(independent)
        flow = independent[owner]
        start = np.asarray(flows.start_ps, dtype=np.int64)[flow]
        order = np.lexsort((flow, start, port))
        offsets = np.zeros(len(self.state.pt) + 1, dtype=np.int64)
        np.cumsum(np.bincount(port, minlength=len(self.state.pt)), out=offsets[1:])
        return KnownStarts(offsets, start[order], flow[order])

    def unqueued(self, flows: np.ndarray) -> np.ndarray:
        """``queued.unqueued_bytes`` of ``flows`` (ascending ids) over all their queues: those of their data paths."""
        s = self.state
        queued = np.zeros(len(flows), dtype=np.int64)
        queued_on_paths(s.fl, s.pt, s.pk, s.path_ports, flows, self._port_count, self._port_touched, queued)
        return s.fw[slots_of(s.fl, flows), L.FW_SND_NXT] - queued

    def fit(self) -> None:
        """Rows for every partition id of the state's ``parts``, which the partitioning layer grows as it needs ids
        (``Partitions``); the new ids have no skip history and no skip in progress."""
        rows = len(self.state.parts)
        if len(self._shift) < rows:
            self._history = grown_ids(self._history, rows, -1)
            self._shift = grown_ids(self._shift, rows, 0)
            self.skips.active_of = grown_ids(self.skips.active_of, rows, -1)

    def forget(self, parts: np.ndarray) -> None:
        """The partitions' membership changed: their skip history no longer applies."""
        self._history[parts] = -1

    def _remember(self, parts: np.ndarray, flows, flow_offsets: np.ndarray, goodput, caps: np.ndarray) -> None:
        """The skips just taken of ``parts``, the k-th of ``flows[flow_offsets[k] : flow_offsets[k + 1]]`` at
        ``goodput`` and capped at ``caps[k]``, are what their next skips' caps start from (``_cap``)."""
        (log, row0), (flow_col, flow0) = self._history_log.claim(len(parts)), self._history_flows.claim(len(flows))
        goodput_col, _ = self._history_goodput.claim(len(flows))
        _log_history(log, row0, flow_col, goodput_col, flow0, self._history, parts, flows, flow_offsets, goodput, caps)

    def _cap(self, part: int, flows: np.ndarray, goodput: np.ndarray) -> int:
        """Longest skip allowed now. Flows that compete for a port can still drift slowly (a rate the window
        cannot see changing); their skips are bounded, the bound doubling while the measured rates stay
        within theta/2 of the previous skip's and halving when they moved more. Flows whose data never
        share a port (they may share ports only with each other's ACKs) have nobody to drift against."""
        s = self.state
        base = base_cap(s.fl, s.path_ports, flows, self._port_count, self.first_cap_ps)
        h = int(self._history[part])
        if base == NEVER or h < 0:
            return base
        cap, lo, hi = self._history_log.values[h].tolist()
        before, their_goodput = self._history_flows.values[lo:hi], self._history_goodput.values[lo:hi]
        rates = dict(zip(before.tolist(), their_goodput.tolist(), strict=True))
        drift = max(
            abs(g - rates[f]) / rates[f] if f in rates else 1.0
            for f, g in zip(flows.tolist(), goodput.tolist(), strict=True)
        )
        return cap * 2 if drift < self.theta / 2 else max(cap // 2, 2 * self.window_ps)

    def shares_disagree(self, flows: np.ndarray) -> bool:
        """True when two of ``flows`` share a full port that limits both, at goodputs more than theta/10 apart
        (beyond the packet a measured goodput can be off by).

        Such shares are still moving: HPCC brings flows that meet on a bottleneck towards equal rates over
        milliseconds, within the steady test's spread. A skip freezes them where they stood, and every later
        skip starts from there (two HPCC flows into one host, 20 and 10 MB, the second 100 us later: the second
        finished 15.8 % early). A flow slower than its port's fastest is fine when another full port on its path
        holds it back (max-min fair shares differ). Flows steady over whole DCQCN cycles (``FW_CYC_STEADY``)
        repeated their shares within theta and are exempt."""
        s = self.state
        # a goodput is counted in packets over half a window: DCTCP's 3-to-1 incast of 1.5 MB settles one packet
        # apart (32.0 and 32.3 Gb/s), and is skipped. HPCC's shares wander even when they come that close: its
        # staggered pair, skipped then, ended 1.4 % off packet mode; held to theta/10, 0.004 %
        hpcc = int(s.ci[L.CI_CC]) == L.CC_HPCC
        resolution = 0.0 if hpcc else 2 * self.payload / self.window_ps
        load = (self._port_sum, self._port_fastest, self._port_count, self._port_flag, self._port_touched)
        return bool(
            _shares_disagree(s.fl, s.ff, s.fw, s.pt, s.path_ports, flows, self.theta, self.data_wire, self.payload,
                             resolution, *load)
        )  # fmt: skip

    def split_unevenly(self, moved: dict) -> bool:
        """True when two flows whose data share a port moved (``moved``: bytes per flow id) more than theta/10
        apart (and more than a packet)."""
        return any(
            max(amounts) - min(amounts) > max(self.theta / 10 * max(amounts), self.payload)
            for amounts in ([moved[f] for f in flows] for flows in self._by_data_port(moved).values())
            if len(amounts) > 1
        )

    def _by_data_port(self, flows) -> dict[int, list[int]]:
        """The ports the data of ``flows`` cross, each with the flows that cross it."""
        load: dict[int, list[int]] = {}
        for f in flows:
            for p in self.paths.data(f).tolist():
                load.setdefault(p, []).append(f)
        return load

    def _span(self, part: int, flows, goodput, sent, ports: np.ndarray, t: int, horizon: int) -> int:
        """How long partition ``part`` may be skipped from ``t``, its ``flows`` at ``goodput`` (bytes/ps) having sent
        ``sent`` bytes: 0 when less than ``min_skip_ps`` (or a flow has no rate or room, or a known start joins
        first: ``skip_span``). A skip of that length is then taken: the next one's cap starts from it."""
        cap = self._cap(part, flows, goodput)
        rules = self._rules(horizon)
        dt = int(skip_span(self.state.fl, self._known_starts, ports, flows, goodput, sent, t, rules, cap))
        if dt:
            self._remember(np.array([part]), flows, np.array([0, len(flows)]), goodput, np.array([cap]))
        return dt

    def _rules(self, horizon: int) -> SkipRules:
        return SkipRules(self.tail_bytes, self.payload, horizon, self.min_skip_ps, self.first_cap_ps)

    def try_skip(self, part: int, members: list[int], ports: np.ndarray, now: int, horizon: int) -> bool:
        """Skip partition ``part`` ahead if at least ``min_skip_ps`` can be skipped; True when it did."""
        flows = np.array(members, dtype=np.int64)
        slots = slots_of(self.state.fl, flows)
        rates = self.state.ff[slots, L.FF_GOODPUT] * CREDIT_SCALE  # bytes per ps
        dt = self._span(part, flows, rates, self.state.fw[slots, L.FW_SND_NXT], ports, now, horizon)
        if not dt:
            return False
        if self.auditor is not None:
            self.auditor.offer_fastforward(part, now, dt, dict(zip(flows.tolist(), rates.tolist(), strict=True)))
        adv = (rates * dt).astype(np.int64) // self.payload * self.payload
        self._jump(part, ports, now, dt, flows, adv, rates)
        self.skips_taken += 1
        return True

    def take_memo(self, parts, entries, members, member_offsets, stored, ports, port_offsets, now: int,
                  horizon: int) -> int:  # fmt: skip
        """Take the stored transients that fit now (``_plan_memo``) of partitions ``parts``, just formed: the k-th
        finds entry ``entries[k]`` of ``stored`` (a pattern_lookup.Stored) for its flows
        ``members[member_offsets[k] : member_offsets[k + 1]]``, in the order the entry's positions index, on
        ``ports[port_offsets[k] : port_offsets[k + 1]]``. Returns how many it took.

        Each taken one credits its flows the stored bytes and gives them the stored CCA state (``cca_state``); a
        settled one goes on as a fast-forward at its stored goodput, without re-qualifying, and one that ended at a
        member's mark leaves the partition to the packets. Three compiled calls do it for all:
        one at a time in Python, a hit cost ~10 us (MoE-8x7B: 2,272 hits)."""
        s = self.state
        flows, rows = np.empty(len(members), dtype=np.int64), np.empty(len(members), dtype=np.int64)
        _stored_flows(stored.offsets, stored.positions, entries, members, member_offsets, flows, rows)
        flow_offsets = member_offsets  # an entry stores a flow per member
        moved, state_int, state_float = stored.moved[rows], stored.state_int[rows], stored.state_float[rows]
        goodput = np.ascontiguousarray(state_float[:, _GOODPUT])
        t_conv = stored.t_conv[entries]
        hits = Transients(flows, flow_offsets, moved, goodput, t_conv, stored.settled[entries])
        dt, cap = np.empty(len(entries), dtype=np.int64), np.empty(len(entries), dtype=np.int64)
        _plan_hits(s.fl, s.fw, s.path_ports, self._known_starts, ports, port_offsets, hits, now, self._rules(horizon),
                   self._port_count, np.empty(len(flows), dtype=np.int64), dt, cap)  # fmt: skip
        fits = dt >= 0
        if not fits.any():
            return 0
        taken = np.flatnonzero(fits).tolist()
        if self.auditor is not None:
            for k in taken:
                a, b = flow_offsets[k], flow_offsets[k + 1]
                credited = moved[a:b] // self.payload * self.payload
                self.auditor.offer_memo(
                    int(parts[k]), now, int(t_conv[k]), dict(zip(flows[a:b].tolist(), credited.tolist(), strict=True))
                )
        credit = np.empty(len(flows), dtype=np.int64)
        _take_hits(s.arrays(), parts, hits, state_int, state_float, _STATE_FW, _STATE_FLOAT, dt, now, self.payload,
                   self.window_ps // 2, credit)  # fmt: skip
        went_on = dt > 0  # fast-forwarded after the stored transient
        if went_on.any():
            (went, their_goodput), went_offsets = select_segments((flows, goodput), flow_offsets, went_on)
            self._remember(parts[went_on], went, went_offsets, their_goodput, cap[went_on])
        span = t_conv + dt
        if not fits.all():
            (flows, credit), flow_offsets = select_segments((flows, credit), flow_offsets, fits)
            (ports,), port_offsets = select_segments((ports,), port_offsets, fits)
            parts, t_conv, span = parts[fits], t_conv[fits], span[fits]
        rate = credit / np.repeat(span, np.diff(flow_offsets))
        self._started(parts, now, span, now + t_conv, flows, flow_offsets, credit, rate, ports, port_offsets)
        self.skips_taken += int(went_on.sum())
        return int(fits.sum())

    def _jump(self, part: int, ports, now: int, dt: int, flows, adv, goodput) -> None:
        """Fast-forward partition ``part`` by ``dt`` from ``now``, its ``flows`` advancing ``adv`` bytes (at
        ``goodput``, bytes/ps)."""
        ports = np.asarray(ports, dtype=np.int64)
        _mark_jump(self.state.parts, part, now, dt, now, self.window_ps // 2)
        _shift_rings(self.state.fl, self.state.seq_ring, flows, adv)
        self._started(np.array([part]), now, np.array([dt]), np.array([now]), flows, np.array([0, len(flows)]), adv,
                      goodput, ports, np.array([0, len(ports)]))  # fmt: skip

    def _started(self, parts, now: int, spans, memo_until, flows, flow_offsets, adv, goodput, ports, port_offsets):
        """Skips k of partitions ``parts[k]`` began at ``now`` for ``spans[k]`` (their rings shifted already; as
        ``SkipLog.append`` for the rest): their events shift, and they are in progress until they end."""
        self._queue_shifts(parts, spans, ports, flows, adv)
        self.skips.append(parts, np.full(len(parts), now), now + spans, memo_until, flows, flow_offsets, adv,
                          goodput, ports, port_offsets)  # fmt: skip

    @property
    def log(self) -> list[Skip]:
        """Every skip and memo hit, in order of start (a skip-back shortens one)."""
        return self.skips.records()

    @property
    def active(self) -> dict[int, Skip]:
        """The skips in progress, by partition."""
        return self.skips.active()

    def _offset(self, part: int, ports: np.ndarray, dt: int, flows: np.ndarray, credit: np.ndarray) -> None:
        """Shift the partition's steady-test rings and events by ``dt``; its ``flows`` advance ``credit`` bytes and
        its ``ports`` carry them."""
        _shift_rings(self.state.fl, self.state.seq_ring, flows, credit)
        self._queue_shifts(np.array([part]), np.array([dt]), ports, flows, credit)

    def _queue_shifts(self, parts, dts, ports, flows, credits) -> None:
        """Shift the events of partitions ``parts`` by ``dts`` (each its own; their rings shifted already): their
        ``flows`` advance ``credits`` bytes, and their ``ports`` carry them. Within ``batched()`` the shifts wait for
        the others of the batch."""
        if self._shifting and not self._shifting.isdisjoint(parts.tolist()):
            self._apply_shifts()  # shifts of one partition compose in order
        self._shifts.append((parts, dts, ports, flows, credits))
        self._shifting.update(parts.tolist())
        if not self._batching:
            self._apply_shifts()

    @contextlib.contextmanager
    def batched(self):
        """Skips and memo jumps taken in the block shift their partitions in one pass over the pending events, at
        its end (at GPT-175B on 8192 GPUs, a pass takes ~2 ms, and 1,024 rings qualify at once). What the block
        reads of one partition no other's shift changes: partitions share no flow, port or event. An audit copies
        the state before each skip it may replay, so with one the shifts are not held back."""
        self._batching = self.auditor is None
        try:
            yield
        finally:
            self._batching = False
            self._apply_shifts()

    def _apply_shifts(self) -> None:
        if not self._shifts:
            return
        s = self.state
        if len(self._shifts) == 1:  # most batches: a stop's memo hits are taken in one call
            parts, dts, ports, flows, credits = self._shifts[0]
        else:
            parts, dts, ports, flows, credits = (np.concatenate(column) for column in zip(*self._shifts, strict=True))
        self._shifts, self._shifting = [], set()
        self._shift[parts] = dts
        self._credit[flows] = credits
        scratch = np.empty(int(s.g[L.G_PENDING]), dtype=np.int64)
        offset_partitions(
            s.g, s.ci, s.events, s.pk, s.pt, s.fl, s.fw, s.path_ports, self._shift, self._credit, ports, flows,
            scratch,
        )  # fmt: skip
        self._credit[flows] = 0
        self._shift[parts] = 0

    def skip_back(self, part: int, now: int) -> None:
        """Cut partition ``part``'s skip short at ``now``: its events come back and its credit shrinks."""
        skips, i = self.skips, int(self.skips.active_of[part])
        if i < 0:  # the kernel's test (PA_SKIP_END) and the log disagree: a bug, not an input
            raise RuntimeError(f"partition {part} is cut short at {now} ps without a skip in progress")
        row, adv = skips.row(i), skips.adv(i)
        back = (skips.goodput(i) * (now - row[START])).astype(np.int64) // self.payload * self.payload - adv
        self._offset(part, skips.ports(i), now - int(row[END]), skips.flows(i), back)
        self.state.parts[part, L.PA_SKIP_END] = 0
        adv += back
        row[END] = now
        self.skip_backs += 1
        self._book(np.array([i]))

    def finish(self, parts: np.ndarray, now: int) -> None:
        """Book the skips of ``parts`` (distinct) whose end has been reached, in that order (called when the
        partitions change or the run ends)."""
        if not self.skips.n_active:
            return
        ids = self.skips.active_of[parts]
        ids = ids[ids >= 0]
        self._book(ids[self.skips.rows(ids)[:, END] <= now])

    def finish_all(self) -> None:
        """Book every skip in progress, in order of start (the run ended; one that runs past its end is booked to
        its own end)."""
        self._book(np.sort(self.skips.active_of[self.skips.active_of >= 0]))

    def _book(self, ids: np.ndarray) -> None:
        """The skips ``ids`` (rows of the log) are over: added to the totals when one is read (a skip's own
        additions cost ~3.5 us), in this order."""
        if len(ids):
            self.skips.end(self.skips.rows(ids)[:, PART])
            self._booked.append(ids)

    def _add_booked(self) -> None:
        if not self._booked:
            return
        ids, self._booked = np.concatenate(self._booked), []
        rows = self.skips.rows(ids)
        flows, adv, sizes = self.skips.flows_of(ids)  # in booking order: the estimate rounds as it always did
        memo = np.minimum(rows[:, END], rows[:, MEMO_UNTIL]) - rows[:, START]
        np.add.at(self._memo_time, flows, np.repeat(memo, sizes))
        np.add.at(self._ff_time, flows, np.repeat(rows[:, END] - rows[:, START] - memo, sizes))
        self._events_skipped = _add_skipped_events(self._events_skipped, adv, flows, self._hops, self.payload)

    @property
    def events_skipped(self) -> float:
        """Events the skips that ended spared (``_add_skipped_events``)."""
        self._add_booked()
        return self._events_skipped

    @property
    def ff_time(self) -> np.ndarray:
        """Per flow, ps fast-forwarded."""
        self._add_booked()
        return self._ff_time

    @property
    def memo_time(self) -> np.ndarray:
        """Per flow, ps taken from the memo DB."""
        self._add_booked()
        return self._memo_time


@kernel
def _log_history(log, row0, flow_col, goodput_col, flow0, history, parts, flows, flow_offsets, goodput, caps):
    """``FastForward._remember`` into buffers with room: the log's rows (cap, first flow, end) from ``row0``, its
    flows and goodputs from ``flow0``; ``history[part]`` is the partition's row."""
    for j in range(len(flows)):
        flow_col[flow0 + j] = flows[j]
        goodput_col[flow0 + j] = goodput[j]
    for k in range(len(parts)):
        r = row0 + k
        log[r, 0], log[r, 1], log[r, 2] = caps[k], flow0 + flow_offsets[k], flow0 + flow_offsets[k + 1]
        history[parts[k]] = r
