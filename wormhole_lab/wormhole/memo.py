"""The memo database: an SQLite file mapping (configuration fingerprint, FCG key) to a transient's outcome.

Each entry holds the FCG (to confirm a hit by isomorphism), the convergence time, and per stored flow
the bytes it sent during the transient, its converged goodput and the CCA state to resume from. Rows
carry a checksum; the file carries its schema version. A file that cannot be read, or comes from another
schema, is reported and not used: the run continues without memoization, never with doubtful entries.
Writers use WAL mode and a busy timeout, so several processes may share one file.
"""

import hashlib
import json
import sqlite3
import warnings
from pathlib import Path

SCHEMA_VERSION = 1


class MemoWarning(UserWarning):
    """The memo DB (or an entry) is unusable; the run goes on without it."""


def _checksum(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class MemoDB:
    """``lookups``, ``hits``, ``misses`` and ``inserts`` count this run's use."""

    def __init__(self, path, engine_version: str):
        self.path = Path(path)
        self.engine_version = engine_version
        self.lookups = self.hits = self.misses = self.inserts = self.bad_entries = 0
        self.conn = None
        try:
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
            if version != str(SCHEMA_VERSION):
                warnings.warn(
                    f"memo DB {self.path} has schema {version}, this version needs {SCHEMA_VERSION}; "
                    "running without memoization (use another file or clear it)",
                    MemoWarning,
                    stacklevel=3,
                )
                conn.close()
                return
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, fingerprint TEXT, fcg_key TEXT, "
                "graph TEXT, value TEXT, engine_version TEXT, checksum TEXT)"
            )
            conn.execute("CREATE INDEX IF NOT EXISTS by_key ON entries (fingerprint, fcg_key)")
            conn.commit()
            self.conn = conn
        except sqlite3.DatabaseError as exc:
            warnings.warn(
                f"memo DB {self.path} is unreadable ({exc}); running without memoization", MemoWarning, stacklevel=3
            )

    @property
    def usable(self) -> bool:
        return self.conn is not None

    def candidates(self, fingerprint: str, key: str) -> list[tuple[str, dict]]:
        """(graph json, value) of every intact entry under this key."""
        self.lookups += 1
        rows = self.conn.execute(
            "SELECT graph, value, engine_version, checksum FROM entries WHERE fingerprint=? AND fcg_key=?",
            (fingerprint, key),
        ).fetchall()
        intact = []
        for graph, value, version, checksum in rows:
            if version != self.engine_version or checksum != _checksum(fingerprint, key, graph, value, version):
                self.bad_entries += 1
                continue
            intact.append((graph, json.loads(value)))
        return intact

    def insert(self, fingerprint: str, key: str, graph: str, value: dict) -> None:
        text = json.dumps(value)
        checksum = _checksum(fingerprint, key, graph, text, self.engine_version)
        with self.conn:
            self.conn.execute(
                "INSERT INTO entries (fingerprint, fcg_key, graph, value, engine_version, checksum) "
                "VALUES (?,?,?,?,?,?)",
                (fingerprint, key, graph, text, self.engine_version, checksum),
            )
        self.inserts += 1

    def size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
