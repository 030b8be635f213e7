"""The steady-state test inside the kernel: a sliding window of each active flow's sending rate.

Every ``CI_STEADY_INTERVAL`` the sending rate (what the CCA sets) and the bytes acknowledged and sent of
every active flow go into per-flow rings of ``l`` samples: row ``FL_SLOT`` of ``rate_ring`` and ``seq_ring``
(slots.py), with the window's sums and the cycle marks in the same row of ``fw``, so that the rows in use stay
as few as the active flows (a row per flow id touched ~1.2 kB of fresh memory per flow, most of the sampler's
cost on random short flows). A flow is steady when (max - min) / mean of its
rates is below theta, and its bytes in flight held still over the newer half of the window (a queue that
fills or drains makes the goodput differ from what the flow sends). Under DCQCN (``CI_STEADY_LINE`` > 0)
a flow is also steady when its last ``CI_STEADY_LINE`` samples sit at its line rate with no CNP pending;
with ``CI_STEADY_CYCLES`` > 0, a DCQCN flow below its line rate is steady only when it repeats its rate
cycle (cut, climb on the RP timer, cut), and is then skipped at the goodput of whole cycles.
``FW_STEADY`` holds how many samples the verdict covers. A partition (the group id
``FL_PART`` given by the layer above) is a candidate for fast-forwarding when all its flows are steady
over samples taken after its last change. ``FF_GOODPUT`` is the goodput over the newer half of those
samples, the rate at which a skip credits bytes.
"""

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    CF_THETA,
    CI_PAYLOAD,
    CI_STEADY_CYCLES,
    CI_STEADY_INTERVAL,
    CI_STEADY_LINE,
    CI_STEADY_WINDOW,
    CYCLE_MARKS,
    E_TIME,
    EV_STEADY_SAMPLE,
    FF_GOODPUT,
    FL_PART,
    FL_SLOT,
    FW_CYC_MARKS,
    FW_CYC_N,
    FW_CYC_POS,
    FW_CYC_ROSE,
    FW_CYC_STEADY,
    FW_DEC_CNP,
    FW_MAX_RATE,
    FW_RATE,
    FW_RING_HI,
    FW_RING_LO,
    FW_RING_N,
    FW_RING_NEWER,
    FW_RING_OLDER,
    FW_RING_POS,
    FW_SND_NXT,
    FW_SND_UNA,
    FW_STEADY,
    FW_TARGET,
    G_N_ACTIVE,
    PA_CANDIDATE,
    PA_CHANGED_AT,
    PA_FLOWS,
    PA_LEFT_AT,
    PA_RETRY_AT,
    PA_SKIP_END,
    PA_SKIP_START,
    PA_UNSTEADY,
)
from wormhole_lab.engine.sampling import next_sample_time
from wormhole_lab.engine.wheel import first, push


@kernel
def _wrap(k, window):
    """Ring slot ``k`` (less than two windows on) brought into the ring: not ``k % window``, a division per sample
    and flow, which was most of the steady test's cost."""
    return k - window if k >= window else k


@kernel
def _steady_span(fl, fw, ci, cf, rate_ring, f, row, n):
    """Samples (the newest ones of slot ``row``'s ring) over which flow ``f``'s rate counts as steady, 0 when it does
    not."""
    window = ci[CI_STEADY_WINDOW]
    start = fw[row, FW_RING_POS]  # the oldest sample, once the ring is full
    line = ci[CI_STEADY_LINE]
    if line and n >= line and fw[row, FW_TARGET] == fw[row, FW_MAX_RATE] and fw[row, FW_DEC_CNP] == 0:
        # DCQCN at its line rate: only a CNP moves it now (an increase keeps rate = target = line rate), and
        # the samples show whether one came, so a short window tells as much as two RP-timer periods would
        pinned = True
        for i in range(line):
            pinned = pinned and rate_ring[row, (start - 1 - i) % window] == fw[row, FW_MAX_RATE]
        if pinned:
            return line
    if ci[CI_STEADY_CYCLES]:
        # DCQCN below its line rate either cuts (the cycle test's business) or climbs on its RP timer, by
        # 0.5 % a period once in hyper increase: within theta, and a skip would freeze the climb
        return 0
    if n < window:
        return 0
    lo, hi = float(fw[row, FW_RING_LO]), float(fw[row, FW_RING_HI])
    older, newer = float(fw[row, FW_RING_OLDER]), float(fw[row, FW_RING_NEWER])
    half = window // 2
    mean = (older + newer) / (2 * half)
    theta = cf[CF_THETA]
    # besides the paper's spread test, a trend test: a rate still converging slowly (HPCC's additive
    # increase, DCQCN's recovery) stays within theta over a window yet moves steadily; its two halves differ
    drift = abs(newer - older) / half
    if mean > 0 and (hi - lo) / mean < theta and drift / mean < theta / 10:
        return window
    return 0


@kernel
def _scan_window(fw, rate_ring, row, start, window):
    """The full window's half sums and extremes, read from its oldest sample (slot ``start``) on."""
    half = window // 2
    older, newer = 0, 0
    lo = hi = int(rate_ring[row, start])
    k = start
    for i in range(window):
        r = int(rate_ring[row, k])
        k = _wrap(k + 1, window)
        lo, hi = min(lo, r), max(hi, r)
        if i < half:
            older += r
        elif i >= window - half:
            newer += r
    fw[row, FW_RING_OLDER], fw[row, FW_RING_NEWER], fw[row, FW_RING_LO], fw[row, FW_RING_HI] = older, newer, lo, hi


@kernel
def _push_rate(fl, fw, rate_ring, f, row, pos, window, rate):
    """Write ``rate`` into ring slot ``pos`` (the oldest sample once the ring is full) and keep the window's half
    sums and extremes up to date: a window of 50 read at every sample of every flow was most of the sampler's
    cost (MoE-32x22B on 1024 GPUs: ~200 us per 1 us sample, 900 flows)."""
    n = fw[row, FW_RING_N]  # samples held before this one
    if n < window:
        rate_ring[row, pos] = rate
        if n == window - 1:
            _scan_window(fw, rate_ring, row, _wrap(pos + 1, window), window)
        return
    half = window // 2
    gone = int(rate_ring[row, pos])
    moved_older = int(rate_ring[row, _wrap(pos + half, window)])  # chronologically the half-th: joins the older half
    left_newer = int(rate_ring[row, _wrap(pos + window - half, window)])  # the newer half's oldest, which leaves it
    rate_ring[row, pos] = rate
    fw[row, FW_RING_OLDER] += moved_older - gone
    fw[row, FW_RING_NEWER] += rate - left_newer
    if gone == fw[row, FW_RING_LO] or gone == fw[row, FW_RING_HI]:
        _scan_window(fw, rate_ring, row, _wrap(pos + 1, window), window)
    else:
        fw[row, FW_RING_LO] = min(fw[row, FW_RING_LO], rate)
        fw[row, FW_RING_HI] = max(fw[row, FW_RING_HI], rate)


@kernel
def _mark_cycle(fl, fw, f, row, now, rate, previous):
    """DCQCN: record the start of a rate cycle, a cut after the rate rose (the cuts of one burst come every
    decrease check; the rate rises only on the RP timer, once the burst is over)."""
    if rate > previous:
        fw[row, FW_CYC_ROSE] = 1
    elif rate < previous and fw[row, FW_CYC_ROSE]:
        fw[row, FW_CYC_ROSE] = 0
        c = FW_CYC_MARKS + 3 * fw[row, FW_CYC_POS]
        fw[row, c] = now
        fw[row, c + 1] = fw[row, FW_SND_UNA]
        fw[row, c + 2] = fw[row, FW_SND_NXT]
        fw[row, FW_CYC_POS] = (fw[row, FW_CYC_POS] + 1) % CYCLE_MARKS
        fw[row, FW_CYC_N] = min(fw[row, FW_CYC_N] + 1, CYCLE_MARKS)


@kernel
def _mark(fw, row, back):
    """Column of the cycle start ``back`` starts before the newest one (0: the newest)."""
    return FW_CYC_MARKS + 3 * ((fw[row, FW_CYC_POS] - 1 - back) % CYCLE_MARKS)


@kernel
def _cycle_span(fl, ff, fw, ci, cf, parts, f, row, now):
    """DCQCN below its line rate: samples over which the flow repeats one rate cycle, 0 when it does not.

    Over the last ``CI_STEADY_CYCLES`` whole cycles (cut to cut), each cycle's goodput must be within theta of
    the others' and its length within 2 theta (a settled 2-to-1 incast's cycles last 1500-1900 us), the bytes
    in flight must hold still, and the cycle in progress must not have outlasted the longest. The cycles must
    have begun after the partition's last skip, since the marks do not move with it. Sets ``FF_GOODPUT`` to
    the goodput over those cycles."""
    cycles = ci[CI_STEADY_CYCLES]
    if cycles == 0 or fw[row, FW_CYC_N] <= cycles:
        return 0
    first, last = _mark(fw, row, cycles), _mark(fw, row, 0)
    if fw[row, first] <= parts[fl[f, FL_PART], PA_SKIP_START]:
        return 0
    short, long = now, 0
    slow, fast = 1e300, 0.0
    for i in range(cycles):
        a, b = _mark(fw, row, i + 1), _mark(fw, row, i)
        period = fw[row, b] - fw[row, a]
        goodput = (fw[row, b + 1] - fw[row, a + 1]) / period
        short, long = min(short, period), max(long, period)
        slow, fast = min(slow, goodput), max(fast, goodput)
    elapsed = fw[row, last] - fw[row, first]
    acked = fw[row, last + 1] - fw[row, first + 1]
    sent = fw[row, last + 2] - fw[row, first + 2]
    theta = cf[CF_THETA]
    if (
        (long - short) * cycles >= 2 * theta * elapsed
        or (fast - slow) * elapsed >= theta * acked
        or now - fw[row, last] > long
        or abs(sent - acked) > theta * acked + 2 * ci[CI_PAYLOAD]
    ):
        return 0
    ff[row, FF_GOODPUT] = acked / elapsed
    return (now - fw[row, first]) // ci[CI_STEADY_INTERVAL] + 1


@kernel
def _sample_flow(fl, ff, fw, ci, cf, rate_ring, seq_ring, parts, f, row, now):
    """Push one sample into slot ``row``'s ring and recompute the flow's steady verdict (FW_STEADY) and window
    goodput."""
    window = ci[CI_STEADY_WINDOW]
    pos = fw[row, FW_RING_POS]
    if ci[CI_STEADY_CYCLES] and fw[row, FW_RING_N] > 0:
        _mark_cycle(fl, fw, f, row, now, fw[row, FW_RATE], rate_ring[row, (pos - 1) % window])
    _push_rate(fl, fw, rate_ring, f, row, pos, window, fw[row, FW_RATE])
    seq_ring[row, pos, 0] = fw[row, FW_SND_UNA]
    seq_ring[row, pos, 1] = fw[row, FW_SND_NXT]
    fw[row, FW_RING_POS] = _wrap(pos + 1, window)
    n = min(fw[row, FW_RING_N] + 1, window)
    fw[row, FW_RING_N] = n
    fw[row, FW_STEADY] = 0
    fw[row, FW_CYC_STEADY] = 0
    span = _steady_span(fl, fw, ci, cf, rate_ring, f, row, n)
    if span > 0:
        # goodput over the newer half of the span: ACKs lag the sending rate by an RTT, so the older half
        # may still reflect the rate before the window began
        half = span // 2
        back = (pos - half) % window
        acked = fw[row, FW_SND_UNA] - seq_ring[row, back, 0]
        sent = fw[row, FW_SND_NXT] - seq_ring[row, back, 1]
        ff[row, FF_GOODPUT] = acked / (half * ci[CI_STEADY_INTERVAL])
        # the bytes in flight must hold still: while a queue drains, ACKs come faster than the flow sends,
        # and a skip at that goodput would outrun the flow (a TIMELY incast finished 27 % early)
        if abs(sent - acked) <= cf[CF_THETA] * acked + 2 * ci[CI_PAYLOAD]:
            fw[row, FW_STEADY] = span
            return
    span = _cycle_span(fl, ff, fw, ci, cf, parts, f, row, now)
    fw[row, FW_STEADY] = span
    fw[row, FW_CYC_STEADY] = span > 0


@kernel
def _last_quiet_tick(g, events, now, interval, wake):
    """The last tick of the sampler's grid before ``wake`` (the first end of a skip, every active flow being
    skipped) and before the next pending event: the ticks up to it would find every active flow frozen and the
    state as now, and do nothing. That tick is scheduled instead of the next one and goes on from there as any
    does, so every tick that samples runs at its time and, among events of its instant, in its order (the
    order of scheduling: the events pending then are older in both cases). GPT-7B's skipped all-reduces had
    ~170,000 such ticks, most of its Wormhole events."""
    limit = wake
    r = first(g, events)
    if r >= 0 and events[r, E_TIME] < limit:
        limit = events[r, E_TIME]
    return now + max(1, (limit - now - 1) // interval) * interval


@kernel
def steady_sample(g, events, fl, ff, fw, ci, cf, rate_ring, seq_ring, active, parts, now):
    """Sample every active flow of a partition that is not being skipped; then ``mark_candidates``, when a flow is
    steady (without one no partition is a candidate, and short flows, as in random traffic, are never steady)."""
    steady = False
    frozen = g[G_N_ACTIVE] > 0  # every active flow's partition is being skipped
    wake = 0  # then the first end of their skips
    for i in range(g[G_N_ACTIVE]):
        f = active[i]
        end = parts[fl[f, FL_PART], PA_SKIP_END]
        if end > now:
            wake = end if wake == 0 or end < wake else wake
        else:
            frozen = False
            if fw[fl[f, FL_SLOT], FW_SND_UNA] > 0:
                # frozen partitions keep their windows until the skip ends; a window starts once the ACK clock runs
                _sample_flow(fl, ff, fw, ci, cf, rate_ring, seq_ring, parts, f, fl[f, FL_SLOT], now)
        steady = steady or fw[fl[f, FL_SLOT], FW_STEADY] > 0
    interval = ci[CI_STEADY_INTERVAL]
    nxt = next_sample_time(g, events, now, interval)
    if nxt >= 0:
        push(g, events, _last_quiet_tick(g, events, now, interval, wake) if frozen else nxt, EV_STEADY_SAMPLE, 0, 0)
    return steady and mark_candidates(g, fl, fw, ci, parts, active, now)


@kernel
def mark_candidates(g, fl, fw, ci, parts, active, now):
    """Set PA_CANDIDATE from the flows' steady flags. True when a partition is a candidate, or may be once the
    layer above takes the flow log: a steady flow is not placed yet, or its partition lost a member (and may
    have split) before the flow's window began."""
    unplaced = parts.shape[0] - 1
    stale_steady = False
    for i in range(g[G_N_ACTIVE]):
        p = fl[active[i], FL_PART]
        parts[p, PA_FLOWS] = 0
        parts[p, PA_UNSTEADY] = 0
    for i in range(g[G_N_ACTIVE]):
        f = active[i]
        p = fl[f, FL_PART]
        if parts[p, PA_SKIP_END] > now:
            continue
        parts[p, PA_SKIP_END] = 0
        parts[p, PA_FLOWS] += 1
        span = fw[fl[f, FL_SLOT], FW_STEADY]
        window_start = now - (span - 1) * ci[CI_STEADY_INTERVAL]  # when the samples of the flow's verdict began
        parts[p, PA_UNSTEADY] += span == 0 or window_start < parts[p, PA_CHANGED_AT]
        if span > 0 and (p == unplaced or 0 < parts[p, PA_LEFT_AT] <= window_start):
            stale_steady = True
    found = stale_steady
    for i in range(g[G_N_ACTIVE]):
        p = fl[active[i], FL_PART]
        candidate = parts[p, PA_FLOWS] > 0 and parts[p, PA_UNSTEADY] == 0 and now >= parts[p, PA_RETRY_AT]
        parts[p, PA_CANDIDATE] = candidate
        found = found or candidate
    return found
