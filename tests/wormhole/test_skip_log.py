import numpy as np

from wormhole_lab.wormhole.skip_log import END, SkipLog


def append(log, parts, start, flows_per_part, ports_per_part):
    flows = np.concatenate(flows_per_part).astype(np.int64)
    flow_offsets = np.cumsum([0, *map(len, flows_per_part)])
    ports = np.concatenate(ports_per_part).astype(np.int64)
    port_offsets = np.cumsum([0, *map(len, ports_per_part)])
    parts = np.asarray(parts, dtype=np.int64)
    log.append(parts, np.full(len(parts), start), start + 10 * (parts + 1), np.full(len(parts), start + 5), flows,
               flow_offsets, flows * 100, flows / 10, ports, port_offsets)  # fmt: skip


def test_a_batch_of_skips_reads_back_skip_by_skip_and_in_progress_by_partition():
    log = SkipLog(8)
    append(log, [3, 1], 0, [[7, 2], [5]], [[0, 1, 2], [4]])
    append(log, [6], 50, [[9, 8, 4]], [[6]])
    first, second, third = log.records()
    assert (first.part, first.start, first.end, first.memo_until) == (3, 0, 40, 5)
    assert first.flows.tolist() == [7, 2] and first.adv.tolist() == [700, 200] and first.ports.tolist() == [0, 1, 2]
    assert second.flows.tolist() == [5] and second.goodput.tolist() == [0.5] and second.ports.tolist() == [4]
    assert (third.part, third.start, third.end) == (6, 50, 120) and third.flows.tolist() == [9, 8, 4]
    assert sorted(log.active()) == [1, 3, 6] and log.n_active == 3
    assert log.active()[6].flows.tolist() == [9, 8, 4]
    flows, adv, sizes = log.flows_of(np.array([2, 0]))  # in the order asked for
    assert flows.tolist() == [9, 8, 4, 7, 2] and adv.tolist() == [900, 800, 400, 700, 200] and sizes.tolist() == [3, 2]


def test_ending_and_shortening_a_skip_and_growing_past_the_first_room():
    log = SkipLog(200)
    append(log, [3, 1], 0, [[7, 2], [5]], [[0], [4]])
    i = int(log.active_of[3])
    log.adv(i)[:] -= 50  # a skip-back's smaller credit, written in place
    log.row(i)[END] = 25
    log.end(np.array([3, 0]))  # partition 0 has no skip in progress: nothing changes for it
    assert log.n_active == 1 and log.active_of[3] == -1 and list(log.active()) == [1]
    assert log.skip(i).adv.tolist() == [650, 150] and log.skip(i).end == 25
    for k in range(100):  # past the 64 rows and values first made room for
        append(log, [10 + k], 100 + k, [[k, k + 1]], [[k]])
    assert len(log) == 102 and log.n_active == 101
    assert log.skip(i).adv.tolist() == [650, 150]  # what came before the growth is kept
    assert log.skip(101).flows.tolist() == [99, 100] and log.skip(101).start == 199
