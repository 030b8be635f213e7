"""The compiled bounds of a skip: room for a stored transient's bytes, contention between data paths, the first
completion, and the next known start on a partition's ports."""

import numpy as np

from wormhole_lab.engine import layout as L
from wormhole_lab.wormhole.skip_bounds import (
    NEVER,
    KnownStarts,
    has_room,
    next_known_start,
    no_shared_data_port,
    until_done,
)


def test_a_stored_transient_fits_only_flows_with_room_for_its_bytes_and_their_last_packets():
    fl = np.zeros((2, L.FL_N), dtype=np.int64)
    fw = np.zeros((2, L.FW_N), dtype=np.int64)
    fl[:, L.FL_SIZE], fl[:, L.FL_SLOT] = 100_000, [1, 0]
    fw[:, L.FW_SND_NXT] = [50_000, 10_000]
    flows = np.array([0, 1])
    assert has_room(fl, fw, flows, np.array([86_000, 46_000]), 4_000)
    assert not has_room(fl, fw, flows, np.array([86_000, 46_001]), 4_000)


def data_paths(paths: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """A flow table whose flow f sends its data through the ports ``paths[f]``, and the ports laid end to end."""
    fl = np.zeros((len(paths), L.FL_N), dtype=np.int64)
    fl[:, L.FL_PATH_BEGIN] = np.cumsum([0] + [len(p) for p in paths[:-1]])
    fl[:, L.FL_PATH_LEN] = [len(p) for p in paths]
    return fl, np.concatenate([np.array(p) for p in paths]).astype(np.int64)


def test_data_paths_that_share_no_port_are_uncontended():
    count = np.zeros(8, dtype=np.int64)
    fl, path_ports = data_paths([[1, 2], [3, 4], [5, 6]])
    assert no_shared_data_port(fl, path_ports, np.arange(3), count) and not count.any()
    fl, path_ports = data_paths([[1, 2], [3, 4], [5, 2]])
    assert not no_shared_data_port(fl, path_ports, np.arange(3), count) and not count.any()
    assert no_shared_data_port(fl, path_ports, np.arange(2), count)


def test_a_first_completion_too_far_to_count_in_picoseconds_is_never():
    fl = np.zeros((1, L.FL_N), dtype=np.int64)
    fl[0, L.FL_SIZE] = 10**12
    flows, sent = np.array([0]), np.zeros(1, dtype=np.int64)
    assert until_done(fl, flows, np.array([1e-9]), sent, 0) == NEVER  # 1e21 ps would wrap as an int64
    assert until_done(fl, flows, np.array([1.0]), sent, 0) == 10**12


def test_the_next_known_start_is_the_first_on_any_port_and_one_starting_now_counts_until_it_has_started():
    # port 0: flows 0 (at 100) and 1 (at 300); port 1: none; port 2: flow 2 (at 200)
    starts = KnownStarts(np.array([0, 2, 2, 3]), np.array([100, 300, 200]), np.array([0, 1, 2]))
    fl = np.zeros((3, L.FL_N), dtype=np.int64)
    fl[:, L.FL_STATE] = L.FS_PENDING
    assert next_known_start(starts, fl, np.array([0, 2]), 0) == 100
    assert next_known_start(starts, fl, np.array([0, 2]), 101) == 200
    assert next_known_start(starts, fl, np.array([0]), 101) == 300
    assert next_known_start(starts, fl, np.array([1]), 0) == NEVER
    assert next_known_start(starts, fl, np.array([0]), 100) == 100
    fl[0, L.FL_STATE] = L.FS_ACTIVE
    assert next_known_start(starts, fl, np.array([0]), 100) == 300
