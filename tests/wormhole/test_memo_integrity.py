"""Memo DB integrity: a damaged, foreign or locked file is detected, reported and never used; several
processes writing one file at once do not corrupt it.

Every damaged-file run must (a) finish, (b) say so (a MemoWarning, and the memo_* attributes), and
(c) never use a bad entry: its FCTs equal the memo-off run exactly when the whole file is dropped, and
stay within 1 % of it when only single entries are skipped (hits on entries stored during the run
itself are allowed and are what the 1 % is for).
"""

import json
import multiprocessing
import random
import sqlite3
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so that spawned children can import memo_workers

import memo_workers  # noqa: E402
from memo_workers import ENGINE_VERSION, rounds_scenario, run_with_memo  # noqa: E402

import wormhole_lab  # noqa: E402
from wormhole_lab.wormhole import memo as memo_module  # noqa: E402
from wormhole_lab.wormhole.controller import config_fingerprint  # noqa: E402
from wormhole_lab.wormhole.memo import MemoDB, MemoWarning, _checksum  # noqa: E402

SPAWN = multiprocessing.get_context("spawn")
PAGE = 4096


@pytest.fixture(scope="module")
def scenario():
    return rounds_scenario()


@pytest.fixture(scope="module")
def memo_off(scenario):
    return run_with_memo(scenario, None)["fct"].values


@pytest.fixture(scope="module")
def good_db(scenario, tmp_path_factory) -> bytes:
    """The bytes of a memo DB filled by one run of the scenario (WAL checkpointed into the main file)."""
    path = tmp_path_factory.mktemp("good") / "memo.sqlite"
    ds = run_with_memo(scenario, str(path))
    assert ds.attrs["memo_usable"] == 1 and ds.attrs["memo_inserts"] >= 1
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    return path.read_bytes()


def run_recorded(scenario, path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MemoWarning)
        ds = run_with_memo(scenario, str(path))
    return ds, [str(w.message) for w in caught if issubclass(w.category, MemoWarning)]


def write(tmp_path, data: bytes, name="memo.sqlite") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def assert_dropped(ds, said, memo_off, match: str):
    """The whole file was rejected: reported, nothing looked up, results exactly those without memo."""
    assert said and any(match in text for text in said), said
    assert ds.attrs["memo_usable"] == 0
    assert ds.attrs["memo_hits"] == 0 and ds.attrs["memo_inserts"] == 0
    np.testing.assert_array_equal(ds["fct"].values, memo_off)


# --- truncated files --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keep",
    [0.0, 100 / PAGE, 0.5, 3.0, 4.0 + 100 / PAGE, -1],
    ids=["empty", "100-bytes", "half-page", "3-pages", "mid-last-page", "last-byte-cut"],
)
def test_a_truncated_db_is_detected_and_not_used(scenario, memo_off, good_db, tmp_path, keep):
    n = len(good_db) - 1 if keep == -1 else int(keep * PAGE)
    assert n < len(good_db)
    ds, said = run_recorded(scenario, write(tmp_path, good_db[:n]))
    if n == 0:  # an empty file is a new, empty DB: fine to use, nothing to distrust
        assert not said and ds.attrs["memo_usable"] == 1
        return
    assert_dropped(ds, said, memo_off, "unreadable")


# --- flipped bytes ----------------------------------------------------------------------------------------


def _structure_offsets(size: int) -> dict[str, int]:
    offsets = {"magic": 0, "page-size": 16}
    for page in range(1, size // PAGE):
        offsets[f"page{page + 1}-type"] = page * PAGE
        offsets[f"page{page + 1}-cell-pointer"] = page * PAGE + 9
    return offsets


def test_flipped_bytes_in_the_file_structure_are_detected(scenario, memo_off, good_db, tmp_path):
    for name, offset in _structure_offsets(len(good_db)).items():
        data = bytearray(good_db)
        data[offset] ^= 0xFF
        ds, said = run_recorded(scenario, write(tmp_path, bytes(data), f"{name}.sqlite"))
        assert_dropped(ds, said, memo_off, "unreadable")


def test_flipped_bytes_in_the_schema_text_are_detected(scenario, memo_off, good_db, tmp_path):
    """SQLite quotes a damaged schema in its error message, undecodable when the flip made invalid UTF-8."""
    index_sql = good_db.find(b"CREATE INDEX by_key")
    assert index_sql > 0
    for offset in (good_db.find(b"by_key"), index_sql + 20, index_sql + 26, good_db.find(b"CREATE TABLE entries") + 13):
        data = bytearray(good_db)
        data[offset] ^= 0x80
        ds, said = run_recorded(scenario, write(tmp_path, bytes(data), f"schema-{offset}.sqlite"))
        assert_dropped(ds, said, memo_off, "unreadable")


@pytest.mark.parametrize("flip", ["digit", "invalid-utf8"])
def test_a_flipped_byte_in_an_entry_fails_its_checksum_and_is_never_used(scenario, memo_off, good_db, tmp_path, flip):
    data = bytearray(good_db)
    at = data.find(b'"t_conv": ') + len(b'"t_conv": ')
    assert at > 100
    # '5' -> '9' style: still valid JSON, a different convergence time if it were used
    data[at] = data[at] ^ 0x0C if flip == "digit" else 0xFF
    path = write(tmp_path, bytes(data))
    db = MemoDB(path, wormhole_lab.__version__)
    row = db.conn.execute("SELECT fingerprint, fcg_key FROM entries ORDER BY id LIMIT 1").fetchone()
    with pytest.warns(MemoWarning, match="failed its checksum"):
        assert db.candidates(*row) == []
    assert db.bad_entries == 1
    db.close()
    ds, said = run_recorded(scenario, path)
    assert any("failed its checksum" in text for text in said), said
    assert ds.attrs["memo_usable"] == 1 and ds.attrs["memo_bad_entries"] > 0
    assert np.abs(ds["fct"].values / memo_off - 1).max() < 0.01


def test_random_bit_flips_never_crash_and_never_leak_into_results(scenario, good_db, tmp_path):
    pristine, _ = run_recorded(scenario, write(tmp_path, good_db, "pristine.sqlite"))
    rng = random.Random(20240611)
    outcomes = {"reported": 0, "harmless": 0}
    for offset in rng.sample(range(len(good_db)), 40):
        data = bytearray(good_db)
        data[offset] ^= 1 << rng.randrange(8)
        ds, said = run_recorded(scenario, write(tmp_path, bytes(data)))
        if said:
            outcomes["reported"] += 1
        else:  # a bit nobody reads (free space, unused header fields): the run is the pristine one
            np.testing.assert_array_equal(ds["fct"].values, pristine["fct"].values, err_msg=f"offset {offset}")
            outcomes["harmless"] += 1
    assert sum(outcomes.values()) == 40


# --- other versions ---------------------------------------------------------------------------------------


def test_a_db_of_another_schema_version_is_not_used(scenario, memo_off, good_db, tmp_path):
    path = write(tmp_path, good_db)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    ds, said = run_recorded(scenario, path)
    assert_dropped(ds, said, memo_off, "has schema 0")


def test_entries_of_another_engine_version_are_skipped(scenario, memo_off, good_db, tmp_path):
    """Rows rewritten as if another engine version had stored them, with a valid checksum: still not used."""
    path = write(tmp_path, good_db)
    conn = sqlite3.connect(path)
    for row_id, fingerprint, key, graph, value in conn.execute(
        "SELECT id, fingerprint, fcg_key, graph, value FROM entries"
    ).fetchall():
        conn.execute(
            "UPDATE entries SET engine_version = '0.0.0-other', checksum = ? WHERE id = ?",
            (_checksum(fingerprint, key, graph, value, "0.0.0-other"), row_id),
        )
    conn.commit()
    conn.close()
    ds, said = run_recorded(scenario, path)
    assert any("engine version 0.0.0-other" in text for text in said), said
    assert ds.attrs["memo_usable"] == 1 and ds.attrs["memo_bad_entries"] > 0
    assert np.abs(ds["fct"].values / memo_off - 1).max() < 0.01


def rewritten(tmp_path, good_db, change) -> Path:
    """A copy of ``good_db`` whose every entry's value went through ``change`` (in place) and got its checksum anew."""
    path = write(tmp_path, good_db)
    conn = sqlite3.connect(path)
    for row_id, fingerprint, key, graph, value, version in conn.execute(
        "SELECT id, fingerprint, fcg_key, graph, value, engine_version FROM entries"
    ).fetchall():
        value = json.loads(value)
        change(value)
        value = json.dumps(value)
        conn.execute(
            "UPDATE entries SET value = ?, checksum = ? WHERE id = ?",
            (value, _checksum(fingerprint, key, graph, value, version), row_id),
        )
    conn.commit()
    conn.close()
    return path


def test_an_entry_with_a_valid_checksum_but_cca_state_of_another_shape_stops_the_run_with_its_file(
    scenario, good_db, tmp_path
):
    """A row rewritten with one CCA value too few per flow and its checksum made anew: the compiled restore does
    not check bounds, so the run says which file holds it rather than writing past a flow's row."""

    def one_value_too_few(value):
        for entry in value["flows"]:
            entry["int"] = entry["int"][:-1]

    path = rewritten(tmp_path, good_db, one_value_too_few)
    with pytest.raises(ValueError, match=f"memo DB {path}: an entry holds CCA state of shape"):
        run_with_memo(scenario, str(path))


def test_an_entry_with_a_valid_checksum_but_a_flow_too_few_stops_the_run_with_its_file(scenario, good_db, tmp_path):
    """A row rewritten with one stored flow fewer than its FCG has vertices, its checksum made anew: a hit is taken in
    compiled code that trusts an entry to hold a flow per member, so the run names the file instead."""
    path = rewritten(tmp_path, good_db, lambda value: value["flows"].pop())
    with pytest.raises(ValueError, match=f"memo DB {path}: an entry holds [0-9]+ flows for an FCG of"):
        run_with_memo(scenario, str(path))


# --- locked by another writer -----------------------------------------------------------------------------


@pytest.mark.parametrize("wal", [True, False], ids=["wal", "rollback-journal"])
def test_a_db_locked_by_another_writer_is_detected(scenario, memo_off, tmp_path, monkeypatch, wal, check_memo_file):
    path = tmp_path / "memo.sqlite"
    MemoDB(path, ENGINE_VERSION).close()  # an empty DB with the schema: the run will want to insert
    ready, release = SPAWN.Event(), SPAWN.Event()
    locker = SPAWN.Process(target=memo_workers.hold_lock, args=(str(path), wal, ready, release))
    locker.start()
    try:
        assert ready.wait(60), "the locking process did not start"
        monkeypatch.setattr(memo_module, "BUSY_TIMEOUT_S", 0.3)
        ds, said = run_recorded(scenario, path)
    finally:
        release.set()
        locker.join(60)
    assert locker.exitcode == 0
    assert any("locked by another writer" in text for text in said), said
    assert ds.attrs["memo_inserts"] == 0 and ds.attrs["memo_hits"] == 0
    np.testing.assert_array_equal(ds["fct"].values, memo_off)
    if wal:  # readable while locked: used for lookups, new entries not stored
        assert ds.attrs["memo_usable"] == 1
    else:  # a rollback-journal lock blocks readers too
        assert ds.attrs["memo_usable"] == 0
    assert check_memo_file(path) == 0  # the other writer's pending row was rolled back, nothing half-written


def test_a_lock_taken_during_the_run_skips_inserts_without_failing(tmp_path, monkeypatch, check_memo_file):
    """Another writer locks the file after it was opened: lookups go on, new entries are dropped, once reported."""
    path = tmp_path / "memo.sqlite"
    db = MemoDB(path, ENGINE_VERSION, timeout=0.3)
    db.insert("fp", "before", "{}", {"t_conv": 1, "flows": []})
    ready, release = SPAWN.Event(), SPAWN.Event()
    locker = SPAWN.Process(target=memo_workers.hold_lock, args=(str(path), True, ready, release))
    locker.start()
    try:
        assert ready.wait(60), "the locking process did not start"
        with pytest.warns(MemoWarning, match="locked by another writer"):
            db.insert("fp", "during", "{}", {"t_conv": 2, "flows": []})
        db.insert("fp", "during-2", "{}", {"t_conv": 3, "flows": []})  # no second wait, no second warning
        assert db.read_only and db.skipped_inserts == 2 and db.inserts == 1
        assert [v["t_conv"] for _, v in db.candidates("fp", "before")] == [1]  # reading still works
    finally:
        release.set()
        locker.join(60)
        db.close()
    assert locker.exitcode == 0 and db.usable
    assert check_memo_file(path) == 1


# --- concurrent writers -----------------------------------------------------------------------------------


def test_concurrent_writers_in_several_processes_do_not_corrupt_the_db(tmp_path, check_memo_file):
    path = str(tmp_path / "memo.sqlite")
    workers, count = 4, 150
    start, results = SPAWN.Event(), SPAWN.Queue()
    procs = [
        SPAWN.Process(target=memo_workers.insert_many, args=(path, w, count, start, results)) for w in range(workers)
    ]
    for p in procs:
        p.start()
    start.set()
    reports = [results.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for worker, inserted, bad, found, said in reports:
        assert inserted == 2 * count and bad == 0 and not said, (worker, inserted, bad, said)
        assert found > 0  # lookups saw the other processes' committed rows
    assert check_memo_file(path) == workers * 2 * count


def test_concurrent_simulations_share_one_db(scenario, memo_off, tmp_path, check_memo_file):
    path = str(tmp_path / "memo.sqlite")
    start, results = SPAWN.Event(), SPAWN.Queue()
    procs = [SPAWN.Process(target=memo_workers.simulate, args=(path, start, results)) for _ in range(3)]
    for p in procs:
        p.start()
    start.set()
    reports = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for fct, memo, said, _ in reports:
        assert not said and memo["memo_usable"] == 1, (memo, said)
        assert np.abs(np.asarray(fct) / memo_off - 1).max() < 0.01
    assert check_memo_file(path) == sum(memo["memo_inserts"] for _, memo, _, _ in reports)
    # the memo DB's own fingerprint of this configuration is what every process used
    conn = sqlite3.connect(path)
    assert {r[0] for r in conn.execute("SELECT DISTINCT fingerprint FROM entries")} == {
        config_fingerprint(scenario.config)
    }
    conn.close()


def test_inserts_wait_for_no_disk_sync_and_are_seen_by_another_connection_at_once(tmp_path):
    """WAL with synchronous=NORMAL: a commit is not an fsync (a fresh run inserts ~50 entries, one commit each),
    and what it wrote is in the file for every other reader right away."""
    path = tmp_path / "memo.sqlite"
    db = MemoDB(path, "v")
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    db.insert("fp", "key", "{}", {"t_conv": 1, "flows": []})
    other = MemoDB(path, "v")
    assert other.candidates("fp", "key") == [("{}", {"t_conv": 1, "flows": []})]
    other.close()
    db.close()
