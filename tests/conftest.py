"""Shared fixtures: small scenarios that run in well under a second once the kernels are compiled."""

import json
import sqlite3
from pathlib import Path

import pytest

from wormhole_lab.engine.presets import preset
from wormhole_lab.simulation import Scenario
from wormhole_lab.topology.builders import star
from wormhole_lab.workload.flows import make_flows
from wormhole_lab.wormhole.memo import _checksum

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def incast():
    """``incast(n, size, cca, **config_changes)``: hosts 1..n send ``size`` bytes to host 0 at t=0 on one switch."""

    def make(n: int = 8, size: int = 1_000_000, cca: str = "dcqcn", **changes) -> Scenario:
        topo = star(n + 1)
        flows = make_flows(list(range(1, n + 1)), [0] * n, [size] * n, 0)
        return Scenario(topo, flows, preset(cca).with_(**changes), name=f"{n}-to-1 incast")

    return make


def _check_memo_file(path) -> int:
    """The memo DB passes SQLite's full integrity check and every entry's checksum; returns the entry count."""
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = conn.execute("SELECT fingerprint, fcg_key, graph, value, engine_version, checksum FROM entries").fetchall()
    conn.close()
    for fingerprint, key, graph, value, version, checksum in rows:
        assert checksum == _checksum(fingerprint, key, graph, value, version)
        json.loads(value)
    return len(rows)


@pytest.fixture
def check_memo_file():
    """``check_memo_file(path)``: assert the memo DB file is intact; returns how many entries it holds."""
    return _check_memo_file
