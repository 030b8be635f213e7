"""Code that test_memo_integrity.py runs in other processes (multiprocessing, spawn): it must be importable
by name in the child, so it lives in this module (not collected by pytest) rather than in the test file."""

import sqlite3
import time
import warnings
from dataclasses import replace

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario, Simulation
from wormhole_lab.telemetry import Telemetry
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.memo import MemoDB, MemoWarning
from wormhole_lab.wormhole.settings import WormholeConfig

ENGINE_VERSION = "workers-test"


def rounds_scenario(rounds: int = 6, size: int = 4_000_000) -> Scenario:
    """A 2-to-1 incast repeated ``rounds`` times, each round starting when the previous one finished."""
    src, dst, sizes, deps = [], [], [], []
    for r in range(rounds):
        for k in (1, 2):
            src.append(k)
            dst.append(0)
            sizes.append(size)
            deps.append(tuple(range(2 * (r - 1), 2 * r)) if r else ())
    flows = make_flows(src, dst, sizes, 0, deps=deps)
    return Scenario(star(3), flows, preset("dctcp"), name="2-to-1 rounds", telemetry=Telemetry.off())


def run_with_memo(scenario: Scenario, memo):
    return Simulation(replace(scenario, wormhole=WormholeConfig(memo=memo)), mode="wormhole").run()


def hold_lock(path: str, journal_wal: bool, ready, release) -> None:
    """Open ``path``, take an exclusive write transaction with a pending insert, and hold it until ``release``."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={'WAL' if journal_wal else 'DELETE'}")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute(
        "INSERT INTO entries (fingerprint, fcg_key, graph, value, engine_version, checksum) "
        "VALUES ('held', 'held', '{}', '{}', 'held', 'held')"
    )
    ready.set()
    release.wait(120)
    conn.execute("ROLLBACK")
    conn.close()


def insert_many(path: str, worker: int, count: int, start, results) -> None:
    """Insert ``count`` entries (distinct keys, some shared ones), looking some up in between."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MemoWarning)
        db = MemoDB(path, ENGINE_VERSION)
        start.wait(60)
        found = 0
        for i in range(count):
            value = {"t_conv": 1000 + i, "flows": [{"bytes": i * worker, "int": [worker, i], "float": [0.5, i / 7]}]}
            db.insert("fp", f"w{worker}-{i}", f'{{"graph": {i}}}', value)
            db.insert("fp", f"shared-{i % 5}", '{"graph": "shared"}', value)
            found += len(db.candidates("fp", f"shared-{(i + worker) % 5}"))
        db.close()
    results.put((worker, db.inserts, db.bad_entries, found, [str(w.message) for w in caught]))


def simulate(path: str, start, results) -> None:
    """Run the rounds scenario with the shared memo DB; report FCTs and the memo attributes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MemoWarning)
        scenario = rounds_scenario()
        Simulation(scenario, mode="packet").run()  # load the kernels before the race starts
        start.wait(120)
        t0 = time.perf_counter()
        ds = run_with_memo(scenario, path)
    memo = {k: v for k, v in ds.attrs.items() if k.startswith("memo_")}
    results.put((ds["fct"].values.tolist(), memo, [str(w.message) for w in caught], time.perf_counter() - t0))
