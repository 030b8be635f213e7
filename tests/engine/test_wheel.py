"""The event queue pops in (time, sequence number) order, like a sorted list, whatever the times' spread."""

import heapq

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.engine import wheel

WINDOW_PS = wheel.N_BUCKETS << wheel.BUCKET_SHIFT


def _take(g, events):
    r = wheel.first(g, events)
    row = tuple(int(x) for x in events[r, : L.E_B + 1])
    wheel.take(g, events, r)
    return row


def test_pushes_and_reserved_sequence_numbers_pop_as_a_sort_would():
    """Equal times, several times per bucket (1 ps apart), inserts under earlier reserved numbers, events far
    beyond the window and long idle jumps, interleaved with pops, against heapq on (time, seq)."""
    rng = np.random.default_rng(7)
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 4096)
    model, reserved, now = [], [], 0
    for step in range(6000):
        op = rng.random()
        if op < 0.45 or not model:
            spread = rng.choice([0, 1, 3000, 1_100_000, 3 * WINDOW_PS, 50 * WINDOW_PS])
            t = now + int(rng.integers(0, spread + 1))
            seq = int(g[L.G_SEQ])
            wheel.push(g, events, t, 1, step, 0)
            heapq.heappush(model, (t, seq, 1, step, 0))
        elif op < 0.55:
            reserved.append((int(g[L.G_SEQ]), now + int(rng.integers(0, 2000))))  # as port.transmit does
            g[L.G_SEQ] += 1
        elif op < 0.65 and reserved:
            seq, t = reserved.pop(int(rng.integers(len(reserved))))
            if t >= now:  # the transmitter is still busy
                wheel.insert(g, events, t, seq, 2, step, 1)
                heapq.heappush(model, (t, seq, 2, step, 1))
        else:
            row = heapq.heappop(model)
            assert _take(g, events) == row
            now = row[0]
    while model:
        assert _take(g, events) == heapq.heappop(model)
    assert wheel.first(g, events) == -1
    assert g[L.G_PENDING] == g[L.G_WHEEL_COUNT] == g[L.G_OVERFLOW] == 0


def test_an_event_before_the_window_pops_first():
    """Pushed earlier than the wheel's base (before the clock), it still comes before every later event."""
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 64)
    for t in (5_000_000, 5_000_000, 9_000_000, 5 * WINDOW_PS):
        wheel.push(g, events, t, 0, t, 0)
    assert _take(g, events)[0] == 5_000_000  # the base moves to that bucket
    wheel.push(g, events, 1_000, 0, 0, 0)
    wheel.push(g, events, 4_000_000, 0, 0, 0)
    assert [_take(g, events)[0] for _ in range(5)] == [1_000, 4_000_000, 5_000_000, 9_000_000, 5 * WINDOW_PS]


def test_relink_after_edited_times_and_discarded_rows():
    """What offset_partitions (times moved, forward or back) and isolate_partition (rows dropped) do."""
    rng = np.random.default_rng(3)
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 2048)
    g[L.G_NOW] = 2 * WINDOW_PS
    for i in range(1500):
        wheel.push(g, events, int(g[L.G_NOW] + rng.integers(0, 3 * WINDOW_PS)), 0, i, 0)
    live = [r for r in range(wheel.TABLE_ROWS, events.shape[0]) if events[r, L.E_KIND] != L.EV_NONE]
    for r in live[::3]:
        events[r, L.E_TIME] += int(rng.integers(-WINDOW_PS, 5 * WINDOW_PS))
    for r in live[1::7]:
        wheel.discard(g, events, r)
    wheel.relink(g, events)
    expected = [tuple(int(x) for x in row) for row in wheel.pending(events)]
    assert len(expected) == g[L.G_PENDING] == 1500 - len(live[1::7])
    assert [_take(g, events) for _ in expected] == expected


def test_the_queue_grows_without_losing_an_event():
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 16)
    times = np.random.default_rng(5).integers(0, 4 * WINDOW_PS, size=200)
    for i, t in enumerate(times):
        if wheel.free_rows(g, events) == 0:
            events = wheel.grown(g, events)
        wheel.push(g, events, int(t), 0, i, 0)
    assert events.shape[0] - wheel.TABLE_ROWS == 256
    assert [_take(g, events)[3] for _ in times] == list(np.lexsort((np.arange(200), times)))


def test_events_scheduled_from_python_pop_as_if_pushed():
    """``schedule`` writes rows without a kernel call; ``link_scheduled`` links them in. Whether the free list is a
    new queue's run of rows or scattered by earlier pops, the order is what pushes in that order would give."""
    rng = np.random.default_rng(11)
    times = rng.integers(0, 3 * WINDOW_PS, 300)
    for scatter in (False, True):
        g = np.zeros(L.G_N, dtype=np.int64)
        events = wheel.new_events(g, 1024)
        model = []
        if scatter:  # pops put rows back on the free list out of order
            for i, t in enumerate(rng.permutation(200)):
                wheel.push(g, events, int(t) * 7919, 3, i, 0)
            for _ in range(150):
                _take(g, events)
            model = [tuple(int(x) for x in row[: L.E_B + 1]) for row in wheel.pending(events)]
            heapq.heapify(model)
        seq = int(g[L.G_SEQ])
        wheel.schedule(g, events, times, 5, np.arange(len(times)))
        assert g[L.G_UNLINKED] == 1 and g[L.G_PENDING] == len(model) + len(times)
        for i, t in enumerate(times.tolist()):
            heapq.heappush(model, (t, seq + i, 5, i, 0))
        wheel.link_scheduled(g, events)
        while model:
            assert _take(g, events) == heapq.heappop(model)
        assert wheel.first(g, events) == -1 and g[L.G_UNLINKED] == 0


def test_times_edited_in_place_pop_as_a_sort_would():
    """What offset_partitions does: ``pending_rows`` lists every pending event once (wheel, then overflow heap),
    the heap's edited rows are requeued and the wheel's moved, forward and back, across the window's edge both
    ways, with the wheel's base moved on by earlier pops. The queue then pops as a sort of the edited times."""
    rng = np.random.default_rng(13)
    g = np.zeros(L.G_N, dtype=np.int64)
    events = wheel.new_events(g, 4096)
    for i in range(3000):
        wheel.push(g, events, int(rng.integers(0, 4 * WINDOW_PS)), 0, i, 0)
    for _ in range(800):
        g[L.G_NOW] = _take(g, events)[0]
    scratch = np.full(int(g[L.G_PENDING]), -1, dtype=np.int64)
    in_wheel = wheel.pending_rows(g, events, scratch)
    assert in_wheel == g[L.G_WHEEL_COUNT] and len(scratch) - in_wheel == g[L.G_OVERFLOW] > 0
    live = [r for r in range(wheel.TABLE_ROWS, events.shape[0]) if events[r, L.E_KIND] != L.EV_NONE]
    assert sorted(scratch.tolist()) == live
    now = int(g[L.G_NOW])

    def shifted(r):
        return max(now, int(events[r, L.E_TIME]) + int(rng.integers(-WINDOW_PS, 2 * WINDOW_PS)))

    heap_rows = scratch[in_wheel:]
    for r in heap_rows[::2]:
        events[r, L.E_TIME] = shifted(r)
    wheel.requeue_overflow(g, events, heap_rows)
    for r in scratch[:in_wheel:2]:
        wheel.move(g, events, r, shifted(r))
    expected = [tuple(int(x) for x in row) for row in wheel.pending(events)]
    assert len(expected) == 2200 and g[L.G_WHEEL_COUNT] + g[L.G_OVERFLOW] == 2200
    assert [_take(g, events) for _ in expected] == expected
    assert wheel.first(g, events) == -1
