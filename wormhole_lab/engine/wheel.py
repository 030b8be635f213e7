"""Event queue: a timing wheel of 1,024 ps buckets over the next ~4 us, and a heap for the events beyond it.

Events pop in (time, sequence number) order, exactly as from a sorted list. Nearly every event is a packet's
arrival (a link delay ahead) or a transmitter's completion (a serialisation ahead): they land in the wheel,
where a push is an append to its bucket's list and a pop takes a list's head, instead of a heap's sift of
~log4(8,600) = 6.5 levels of unpredictable comparisons. Timers, flow starts and samples further ahead wait in
an overflow heap and move to the wheel when its window reaches them.

Everything lives in one int64 array ``events`` (state.py allocates it, ``grown`` enlarges it):

- rows ``0 .. BUCKET_ROWS - 1``: the bucket table, 4 buckets a row, each as (first, last) row of its list
  (-1 when empty). Bucket ``b`` holds the events of times ``[b << BUCKET_SHIFT, (b + 1) << BUCKET_SHIFT)``;
  its cell is ``b mod N_BUCKETS``. The wheel holds the buckets ``G_WHEEL_BASE .. + N_BUCKETS - 1``.
- the next ``COUNT_ROWS`` rows: the number of events in each group of 64 consecutive cells, so that finding
  the next event after a gap skips empty groups (at most 64 counts and 128 cells read, instead of up to 4,096
  empty cells when few events are pending).
- rows from ``TABLE_ROWS``: one event each (E_TIME ... E_B), linked into its bucket in (time, seq) order by
  E_NEXT/E_PREV, or in the overflow heap, or free (E_KIND = EV_NONE, chained by E_NEXT from G_EVENT_FREE).
- column E_HEAP of the event rows, read as one more array: the overflow heap, a 4-ary min-heap of row numbers,
  its i-th entry at row ``TABLE_ROWS + i``.

Invariants (they make the wheel's first non-empty bucket from the base hold the earliest events): the base is
at most the bucket of the earliest pending event, except that an event pushed earlier than the base (earlier
than every pending event, e.g. before the clock) is kept in the base's bucket, ahead of the later ones; every
overflow event lies beyond the window: when a pop moves the base on, the overflow events it reaches move to the
wheel at once, before anything else can be pushed there.

Readers: ``first`` (the earliest event's row, which the loop reads and then passes to ``take``), ``rows``
(every row that may hold an event, for scans: skip EV_NONE), ``relink`` after editing times or discarding rows,
``pending_rows`` (the pending rows alone) with ``requeue_overflow`` and ``move`` to edit times in place,
``pending`` from Python.
"""

import numpy as np

from wormhole_lab.engine.jit import kernel
from wormhole_lab.engine.layout import (
    E_A,
    E_B,
    E_HEAP,
    E_KIND,
    E_N,
    E_NEXT,
    E_PREV,
    E_SEQ,
    E_TIME,
    EV_NONE,
    G_EVENT_FREE,
    G_NOW,
    G_OVERFLOW,
    G_PENDING,
    G_SEQ,
    G_UNLINKED,
    G_WHEEL_BASE,
    G_WHEEL_COUNT,
)

BUCKET_SHIFT = 10  # 1,024 ps: one 1 ns tick of the reference's clock per bucket, or two
N_BUCKETS = 4096  # the window, ~4.2 us: a link delay plus serialisation, DCQCN's 1 and 4 us timers
BUCKETS_PER_ROW = E_N // 2
BUCKET_ROWS = N_BUCKETS // BUCKETS_PER_ROW
GROUP = 64
COUNT_ROWS = N_BUCKETS // GROUP // E_N
TABLE_ROWS = BUCKET_ROWS + COUNT_ROWS
ARITY = 4


@kernel
def _before(events, r, s):
    """Row r's event pops before row s's."""
    t, u = events[r, E_TIME], events[s, E_TIME]
    return t < u or (t == u and events[r, E_SEQ] < events[s, E_SEQ])


@kernel
def _cell(b):
    """Table row and column of bucket b's first row (its last is the next column)."""
    slot = b & (N_BUCKETS - 1)
    return slot // BUCKETS_PER_ROW, 2 * (slot % BUCKETS_PER_ROW)


@kernel
def _count(events, b, change):
    """Add ``change`` to the event count of bucket b's group of cells."""
    group = (b & (N_BUCKETS - 1)) // GROUP
    events[BUCKET_ROWS + group // E_N, group % E_N] += change


@kernel
def _link(g, events, r, b):
    """Put row r in bucket b after the events that pop before it (walking back from the last: usually none)."""
    row, col = _cell(b)
    p = events[row, col + 1]
    while p >= 0 and _before(events, r, p):
        p = events[p, E_PREV]
    nxt = events[p, E_NEXT] if p >= 0 else events[row, col]
    events[r, E_PREV] = p
    events[r, E_NEXT] = nxt
    if p >= 0:
        events[p, E_NEXT] = r
    else:
        events[row, col] = r
    if nxt >= 0:
        events[nxt, E_PREV] = r
    else:
        events[row, col + 1] = r
    _count(events, b, 1)
    g[G_WHEEL_COUNT] += 1


@kernel
def _unlink(g, events, r):
    """Take wheel row r out of its bucket's list (it stays allocated); returns the bucket."""
    b = max(events[r, E_TIME] >> BUCKET_SHIFT, g[G_WHEEL_BASE])
    row, col = _cell(b)
    p, n = events[r, E_PREV], events[r, E_NEXT]
    if p >= 0:
        events[p, E_NEXT] = n
    else:
        events[row, col] = n
    if n >= 0:
        events[n, E_PREV] = p
    else:
        events[row, col + 1] = p
    _count(events, b, -1)
    g[G_WHEEL_COUNT] -= 1
    return b


@kernel
def _overflow_push(g, events, r):
    i = g[G_OVERFLOW]
    g[G_OVERFLOW] = i + 1
    while i > 0:
        parent = (i - 1) // ARITY
        p = events[TABLE_ROWS + parent, E_HEAP]
        if not _before(events, r, p):
            break
        events[TABLE_ROWS + i, E_HEAP] = p
        i = parent
    events[TABLE_ROWS + i, E_HEAP] = r


@kernel
def _overflow_pop(g, events):
    """Remove the overflow heap's earliest entry (its row stays allocated)."""
    n = g[G_OVERFLOW] - 1
    g[G_OVERFLOW] = n
    if n == 0:
        return
    last = events[TABLE_ROWS + n, E_HEAP]
    i = 0
    while True:
        child = ARITY * i + 1
        if child >= n:
            break
        best = events[TABLE_ROWS + child, E_HEAP]
        for c in range(child + 1, min(child + ARITY, n)):
            s = events[TABLE_ROWS + c, E_HEAP]
            if _before(events, s, best):
                best, child = s, c
        if not _before(events, best, last):
            break
        events[TABLE_ROWS + i, E_HEAP] = best
        i = child
    events[TABLE_ROWS + i, E_HEAP] = last


@kernel
def _place(g, events, r):
    """Queue row r: in the wheel if its bucket is in the window (an earlier one counts as the base's)."""
    base = g[G_WHEEL_BASE]
    b = max(events[r, E_TIME] >> BUCKET_SHIFT, base)
    if b < base + N_BUCKETS:
        _link(g, events, r, b)
    else:
        _overflow_push(g, events, r)


@kernel
def insert(g, events, time, seq, kind, a, b):
    """Schedule an event under a sequence number taken earlier (``g[G_SEQ]`` is not advanced). The caller
    guarantees a free row (the kernel checks ``free_rows`` before each event)."""
    r = g[G_EVENT_FREE]
    g[G_EVENT_FREE] = events[r, E_NEXT]
    g[G_PENDING] += 1
    events[r, E_TIME] = time
    events[r, E_SEQ] = seq
    events[r, E_KIND] = kind
    events[r, E_A] = a
    events[r, E_B] = b
    _place(g, events, r)


@kernel
def push(g, events, time, kind, a, b):
    """Schedule an event after every event scheduled so far at the same time."""
    seq = g[G_SEQ]
    g[G_SEQ] = seq + 1
    insert(g, events, time, seq, kind, a, b)


def schedule(g: np.ndarray, events: np.ndarray, times, kind: int, ids) -> None:
    """Python side: ``push(times[i], kind, ids[i], 0)`` for each i, in order. The rows are written here and linked
    into the wheel by ``link_scheduled`` when a run loop starts: calling a kernel from Python loads its own compiled
    code from the cache, 0.3 s of a small run's start."""
    times, ids = np.asarray(times, dtype=np.int64), np.asarray(ids, dtype=np.int64)
    n, head = len(times), int(g[G_EVENT_FREE])
    if n > events.shape[0] - TABLE_ROWS - g[G_PENDING]:
        raise ValueError(f"no room for {n} events (state.py sizes the queue)")
    rows = head + np.arange(n)
    if n and not (rows[-1] < events.shape[0] and np.array_equal(events[rows[:-1], E_NEXT], rows[1:])):
        rows[0] = head  # the free list is not one run of rows (a new queue's is): follow it
        for i in range(1, n):
            rows[i] = events[rows[i - 1], E_NEXT]
    r = events[rows[-1], E_NEXT] if n else head
    g[G_EVENT_FREE] = r
    events[rows, E_TIME] = times
    events[rows, E_SEQ] = g[G_SEQ] + np.arange(n)
    events[rows, E_KIND] = kind
    events[rows, E_A] = ids
    events[rows, E_B] = 0
    g[G_SEQ] += n
    g[G_PENDING] += n
    g[G_UNLINKED] = 1


@kernel
def link_scheduled(g, events):
    """Link in the events Python scheduled (``schedule``); the run loops call it on entry (a test in ``first``
    would cost a branch per event: ~7 % of fat_perm64's kernel)."""
    if g[G_UNLINKED]:
        relink(g, events)


@kernel
def first(g, events):
    """Row of the earliest pending event (-1 when none). Read it, then remove it with ``take``."""
    if g[G_WHEEL_COUNT] == 0:
        return events[TABLE_ROWS, E_HEAP] if g[G_OVERFLOW] > 0 else -1
    b = g[G_WHEEL_BASE]
    while True:
        group = (b & (N_BUCKETS - 1)) // GROUP
        if events[BUCKET_ROWS + group // E_N, group % E_N] == 0:
            b += GROUP - b % GROUP  # an empty group: on to the next one
            continue
        row, col = _cell(b)
        r = events[row, col]
        if r >= 0:
            return r
        b += 1


@kernel
def _free(g, events, r):
    events[r, E_KIND] = EV_NONE
    events[r, E_NEXT] = g[G_EVENT_FREE]
    g[G_EVENT_FREE] = r
    g[G_PENDING] -= 1


@kernel
def take(g, events, r):
    """Remove the earliest event, row r from ``first``. When that moves the base on, the overflow events the
    window now reaches join the wheel."""
    base = g[G_WHEEL_BASE]
    if g[G_WHEEL_COUNT] > 0:
        b = _unlink(g, events, r)
    else:
        b = events[r, E_TIME] >> BUCKET_SHIFT
        _overflow_pop(g, events)
    _free(g, events, r)
    if b > base:
        g[G_WHEEL_BASE] = b
        while g[G_OVERFLOW] > 0:
            o = events[TABLE_ROWS, E_HEAP]
            bo = events[o, E_TIME] >> BUCKET_SHIFT
            if bo >= b + N_BUCKETS:
                break
            _overflow_pop(g, events)
            _link(g, events, o, bo)


@kernel
def free_rows(g, events):
    """Events that can still be scheduled before the array must grow."""
    return events.shape[0] - TABLE_ROWS - g[G_PENDING]


@kernel
def rows(events):
    """Every row that can hold an event: scans skip those whose E_KIND is EV_NONE."""
    return range(TABLE_ROWS, events.shape[0])


@kernel
def pending_rows(g, events, out):
    """Write the rows of the pending events into ``out`` (room for ``g[G_PENDING]``), the wheel's first, then
    the overflow heap's; returns how many are the wheel's. Rows Python scheduled must be linked already
    (``link_scheduled``). Reads the wheel's non-empty groups of cells, not every row of the table."""
    n = 0
    b = g[G_WHEEL_BASE]
    while n < g[G_WHEEL_COUNT]:
        group = (b & (N_BUCKETS - 1)) // GROUP
        if events[BUCKET_ROWS + group // E_N, group % E_N] == 0:
            b += GROUP - b % GROUP
            continue
        row, col = _cell(b)
        r = events[row, col]
        while r >= 0:
            out[n] = r
            n += 1
            r = events[r, E_NEXT]
        b += 1
    for i in range(g[G_OVERFLOW]):
        out[n + i] = events[TABLE_ROWS + i, E_HEAP]
    return n


@kernel
def move(g, events, r, time):
    """Give wheel row r (one of ``pending_rows``' first ones) another time, in its place in the queue's order."""
    _unlink(g, events, r)
    events[r, E_TIME] = time
    _place(g, events, r)


@kernel
def requeue_overflow(g, events, heap_rows):
    """Queue the overflow heap's rows (``pending_rows``' last ones) again once their times were edited: those the
    wheel's window now reaches join it. Wheel rows are moved after this, so that none is pushed to a heap that is
    being rebuilt."""
    g[G_OVERFLOW] = 0
    for r in heap_rows:
        _place(g, events, r)


@kernel
def discard(g, events, r):
    """Drop row r's event; ``relink`` must follow before the queue is used."""
    _free(g, events, r)


@kernel
def relink(g, events):
    """Rebuild the wheel and the overflow heap from the rows' times (edited, or rows discarded), from the
    bucket of the clock."""
    for row in range(TABLE_ROWS):
        for c in range(E_N):
            events[row, c] = -1 if row < BUCKET_ROWS else 0
    g[G_WHEEL_COUNT] = 0
    g[G_OVERFLOW] = 0
    g[G_UNLINKED] = 0
    g[G_WHEEL_BASE] = g[G_NOW] >> BUCKET_SHIFT
    for r in rows(events):
        if events[r, E_KIND] != EV_NONE:
            _place(g, events, r)


def new_events(g: np.ndarray, capacity: int) -> np.ndarray:
    """An empty queue with room for ``capacity`` events (Python side; sets g's queue fields)."""
    events = np.full((TABLE_ROWS + capacity, E_N), -1, dtype=np.int64)
    events[BUCKET_ROWS:TABLE_ROWS] = 0
    events[TABLE_ROWS:, E_KIND] = EV_NONE
    g[G_PENDING] = g[G_WHEEL_COUNT] = g[G_OVERFLOW] = g[G_WHEEL_BASE] = 0
    g[G_EVENT_FREE] = -1
    _chain_free(g, events, TABLE_ROWS)
    return events


def _chain_free(g: np.ndarray, events: np.ndarray, begin: int) -> None:
    """Put rows begin.. (the last ones) at the front of the free list."""
    events[begin:-1, E_NEXT] = np.arange(begin + 1, events.shape[0])
    events[-1, E_NEXT] = g[G_EVENT_FREE]
    g[G_EVENT_FREE] = begin


def grown(g: np.ndarray, events: np.ndarray) -> np.ndarray:
    """A copy with twice the event rows (row numbers, so every link, stay valid)."""
    old = events.shape[0]
    more = np.full((old - TABLE_ROWS, E_N), -1, dtype=np.int64)
    more[:, E_KIND] = EV_NONE
    out = np.concatenate([events, more])
    _chain_free(g, out, old)
    return out


def pending(events: np.ndarray) -> np.ndarray:
    """The pending events as rows (E_TIME ... E_B), in the order they pop."""
    body = events[TABLE_ROWS:]
    live = body[body[:, E_KIND] != EV_NONE, : E_B + 1]
    return live[np.lexsort((live[:, E_SEQ], live[:, E_TIME]))]
