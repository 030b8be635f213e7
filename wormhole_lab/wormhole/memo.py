"""The memo database: an SQLite file mapping (configuration fingerprint, FCG key) to a transient's outcome.

Each entry holds the FCG (to confirm a hit by isomorphism), the convergence time, and per stored flow
the bytes a jump over the transient credits it (see the controller), its converged goodput and the
CCA state to resume from. Rows carry the engine version and a checksum over all their fields; the file
carries its schema version.

Trust: a file that cannot be read, fails SQLite's page-level check (a cut or scrambled file), or comes
from another schema is reported (``MemoWarning``) and not used: the run continues without memoization.
An entry whose checksum does not match, or that another engine version wrote, is skipped (counted in
``bad_entries``, reported once) and never used. A file that turns unreadable during the run is dropped
the same way. Writers use WAL mode, single-statement transactions and a busy timeout, so several
processes may share one file; when another writer holds the file locked for longer than the timeout,
lookups go on and this run's new entries are not stored (reported once). Commits are not synced to disk
one by one (``synchronous=NORMAL``): a power cut can lose the newest entries, which a later run stores
again, but cannot damage the file.

``MemoDB(None, ...)`` is a run's own memo (Wormhole mode's default): a fresh file in a temporary folder, removed
when the DB is closed at the run's end, so that a run reuses the patterns it saw itself and nothing else.

Each key is read from the file once per run and kept (with this run's own inserts) for the run's
later lookups, so entries that another process adds during the run are seen by the next run.
"""

import hashlib
import json
import sqlite3
import tempfile
import warnings
from pathlib import Path

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 10.0  # how long to wait for another writer's transaction before giving up on a write


class MemoWarning(UserWarning):
    """The memo DB (or an entry) is unusable; the run goes on without it."""


def _checksum(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _text(value) -> str:
    """A column read as bytes (so that a flipped byte cannot raise while decoding) as text; never raises."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def _cut_short(path: Path) -> str | None:
    """Why the file looks truncated, judging by its SQLite header, or None.

    SQLite reads missing bytes at the end of a file as zeros, so a file cut inside its last page can pass
    its own checks; the header's page size and page count tell. Skipped while a WAL or rollback journal
    exists: SQLite replays those on open, and the main file may legitimately lag behind until then."""
    try:
        size = path.stat().st_size
        if size == 0 or any(Path(f"{path}{s}").exists() for s in ("-wal", "-journal")):
            return None
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return None  # SQLite itself reports what is wrong
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or size % page:
        return f"its size ({size} B) is not a whole number of {page}-byte pages: the file was cut short"
    pages = int.from_bytes(head[28:32], "big")
    if head[24:28] == head[92:96] and pages * page > size:  # the header's page count is valid and too large
        return f"its header counts {pages} pages but the file holds {size // page}: the file was cut short"
    return None


# SQLite's error messages quote the damaged text (a scrambled schema), which Python may fail to decode:
# a UnicodeDecodeError then stands for the DatabaseError.
_DB_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def _locked(exc: Exception) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


class MemoDB:
    """``lookups``, ``hits``, ``misses`` and ``inserts`` count this run's use; ``bad_entries`` the entries
    skipped (checksum mismatch or another engine version); ``skipped_inserts`` the entries not stored
    because the file was locked or had become unusable. ``usable`` tells whether the file was trusted
    (it stays true after ``close()``). ``path`` None: a temporary file of this run's own, removed by ``close()``
    (``temporary`` is then True)."""

    def __init__(self, path, engine_version: str, timeout: float | None = None):
        self.temporary = path is None
        self._folder = tempfile.TemporaryDirectory(prefix="wormhole_lab_memo_") if self.temporary else None
        self.path = Path(self._folder.name) / "run.sqlite" if self.temporary else Path(path)
        self._final_bytes = None  # the size of a temporary DB when it was removed
        self.engine_version = engine_version
        self.lookups = self.hits = self.misses = self.inserts = self.bad_entries = 0
        self.foreign_entries = self.skipped_inserts = 0
        self.read_only = False  # set when another writer kept the file locked: lookups only
        self.conn = None
        self._cache: dict[tuple[str, str], list[tuple[str, dict]]] = {}
        self._usable = False
        self._warned_entries = False
        timeout = BUSY_TIMEOUT_S if timeout is None else timeout
        conn = None
        try:
            short = _cut_short(self.path)
            if short:
                raise sqlite3.DatabaseError(short)
            conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)  # autocommit statements
            check = conn.execute("PRAGMA quick_check").fetchone()[0]  # reads every page: a cut file fails here
            if check != "ok":
                problems = [line for line in check.splitlines() if not line.startswith("***")]
                raise sqlite3.DatabaseError(f"page check failed: {'; '.join(problems[:2])[:200]}")
            # commits append to the log without waiting for the disk (it is synced at checkpoints): a power cut may
            # lose the newest entries, never corrupt the file, and a fresh run's ~50 inserts cost no fsync each (set
            # first, so that turning a new file to WAL waits for none either)
            conn.execute("PRAGMA synchronous=NORMAL")
            if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA synchronous=FULL")  # without the log, NORMAL could leave a damaged file
            version = self._schema_version(conn)
            if version is None:
                conn.execute("BEGIN IMMEDIATE")  # serialise with other processes creating the same file
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, fingerprint TEXT, fcg_key TEXT, "
                    "graph TEXT, value TEXT, engine_version TEXT, checksum TEXT)"
                )
                conn.execute("CREATE INDEX IF NOT EXISTS by_key ON entries (fingerprint, fcg_key)")
                conn.execute("COMMIT")
                version = self._schema_version(conn)
            if version != str(SCHEMA_VERSION):
                self._warn(
                    f"has schema {version}, this version needs {SCHEMA_VERSION}; running without memoization "
                    "(use another file or clear it)"
                )
                conn.close()
                return
            if "entries" not in self._tables(conn):
                raise sqlite3.DatabaseError("it has no entries table")
            self.conn = conn
            self._usable = True
        except _DB_ERRORS as exc:
            if conn is not None:
                conn.close()
            if _locked(exc):
                self._warn(f"is locked by another writer ({exc}); running without memoization")
            else:
                self._warn(f"is unreadable ({exc}); running without memoization")

    @staticmethod
    def _tables(conn) -> set[str]:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _schema_version(self, conn) -> str | None:
        if "meta" not in self._tables(conn):
            return None
        row = conn.execute("SELECT CAST(value AS BLOB) FROM meta WHERE key='schema_version'").fetchone()
        return None if row is None else _text(row[0])

    def _warn(self, text: str) -> None:
        warnings.warn(f"memo DB {self.path} {text}", MemoWarning, stacklevel=4)

    def _drop(self, exc: Exception) -> None:
        """The file turned unreadable during the run: stop using it."""
        self.close()
        self._usable = False
        self._warn(f"became unreadable during the run ({exc}); continuing without memoization")

    @property
    def usable(self) -> bool:
        return self._usable

    def candidates(self, fingerprint: str, key: str) -> list[tuple[str, dict]]:
        """(graph json, value) of every intact entry under this key."""
        if (fingerprint, key) not in self._cache:
            self._cache[fingerprint, key] = self._read(fingerprint, key)
        return self._cache[fingerprint, key]

    def graphs(self, fingerprint: str) -> list[str]:
        """The FCG (json) of every entry under this fingerprint, unchecked: what cannot match them cannot match an
        intact entry either."""
        if self.conn is None:
            return []
        try:
            rows = self.conn.execute("SELECT CAST(graph AS BLOB) FROM entries WHERE fingerprint=?", (fingerprint,))
            return [_text(graph) for (graph,) in rows.fetchall()]
        except _DB_ERRORS as exc:
            self._drop(exc)
            return []

    def _read(self, fingerprint: str, key: str) -> list[tuple[str, dict]]:
        if self.conn is None:
            return []
        try:
            rows = self.conn.execute(
                "SELECT CAST(graph AS BLOB), CAST(value AS BLOB), CAST(engine_version AS BLOB), "
                "CAST(checksum AS BLOB) FROM entries WHERE fingerprint=? AND fcg_key=?",
                (fingerprint, key),
            ).fetchall()
        except _DB_ERRORS as exc:
            self._drop(exc)
            return []
        intact = []
        for raw in rows:
            graph, value, version, checksum = (_text(v) for v in raw)
            problem = None
            if checksum != _checksum(fingerprint, key, graph, value, version):
                problem = "failed its checksum"
            elif version != self.engine_version:
                problem = f"was written by engine version {version} (this is {self.engine_version})"
                self.foreign_entries += 1
            else:
                try:
                    decoded = json.loads(value)
                except ValueError:
                    problem = "does not hold valid JSON"
            if problem is not None:
                self.bad_entries += 1
                if not self._warned_entries:
                    self._warned_entries = True
                    self._warn(f"has an entry that {problem}; such entries are skipped, never used")
                continue
            intact.append((graph, decoded))
        return intact

    def insert(self, fingerprint: str, key: str, graph: str, value: dict) -> None:
        if self.conn is None or self.read_only:
            self.skipped_inserts += 1
            return
        text = json.dumps(value)
        checksum = _checksum(fingerprint, key, graph, text, self.engine_version)
        try:
            self.conn.execute(  # one statement in autocommit mode: its own atomic transaction
                "INSERT INTO entries (fingerprint, fcg_key, graph, value, engine_version, checksum) "
                "VALUES (?,?,?,?,?,?)",
                (fingerprint, key, graph, text, self.engine_version, checksum),
            )
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                self._drop(exc)
                self.skipped_inserts += 1
                return
            self.read_only = True
            self.skipped_inserts += 1
            self._warn(f"is locked by another writer ({exc}); this run's new entries are not stored")
            return
        except _DB_ERRORS as exc:
            self._drop(exc)
            self.skipped_inserts += 1
            return
        self.inserts += 1
        self._cache.setdefault((fingerprint, key), []).append((graph, json.loads(text)))

    def size_bytes(self) -> int:
        """The DB file plus its write-ahead log (SQLite folds the log into the file at checkpoints); for a
        temporary DB already removed, its size then."""
        if self._final_bytes is not None:
            return self._final_bytes
        wal = self.path.with_name(self.path.name + "-wal")
        return sum(p.stat().st_size for p in (self.path, wal) if p.exists())

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._folder is not None:
            self._final_bytes = self.size_bytes()
            self._folder.cleanup()
            self._folder = None
