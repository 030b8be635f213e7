"""Looking after memo DB files: what they hold, merging several into one, emptying one."""

import sqlite3

import wormhole_lab
from wormhole_lab.wormhole.memo import SCHEMA_VERSION, MemoDB, _checksum, _text

_ROWS = (
    "SELECT fingerprint, fcg_key, CAST(graph AS BLOB), CAST(value AS BLOB), CAST(engine_version AS BLOB), "
    "CAST(checksum AS BLOB) FROM entries"
)


def _rows(db: MemoDB):
    """(fingerprint, key, graph, value, version, intact) for every entry."""
    for fingerprint, key, *raw in db.conn.execute(_ROWS):
        graph, value, version, checksum = (_text(v) for v in raw)
        yield fingerprint, key, graph, value, version, checksum == _checksum(fingerprint, key, graph, value, version)


def info(path) -> dict:
    """Entries (intact and not), engine versions, configurations and size of a memo DB."""
    db = MemoDB(path, wormhole_lab.__version__)
    if not db.usable:
        return {"path": str(path), "usable": 0}
    rows = list(_rows(db))
    versions: dict[str, int] = {}
    for row in rows:
        versions[row[4]] = versions.get(row[4], 0) + 1
    result = {
        "path": str(path),
        "usable": 1,
        "schema_version": SCHEMA_VERSION,
        "entries": len(rows),
        "intact": sum(r[5] for r in rows),
        "configurations": len({r[0] for r in rows}),
        "engine_versions": versions,
        "size_bytes": db.size_bytes(),
    }
    db.close()
    return result


def merge(target, sources) -> dict:
    """Copy the intact entries of ``sources`` into ``target``. An entry already there for the same
    configuration and FCG is a duplicate (same outcome) or a conflict (another outcome): the first one kept."""
    into = MemoDB(target, wormhole_lab.__version__)
    if not into.usable or into.read_only:
        raise OSError(f"memo DB {target} cannot be written")
    counts = {"added": 0, "duplicates": 0, "conflicts": 0, "bad": 0}
    for source in sources:
        src = MemoDB(source, wormhole_lab.__version__)
        if not src.usable:
            counts["bad"] += 1
            continue
        for fingerprint, key, graph, value, version, intact in list(_rows(src)):
            if not intact:
                counts["bad"] += 1
                continue
            existing = into.conn.execute(
                "SELECT CAST(value AS BLOB) FROM entries WHERE fingerprint=? AND fcg_key=? AND graph=?",
                (fingerprint, key, graph),
            ).fetchone()
            if existing is not None:
                counts["duplicates" if _text(existing[0]) == value else "conflicts"] += 1
                continue
            into.conn.execute(
                "INSERT INTO entries (fingerprint, fcg_key, graph, value, engine_version, checksum) "
                "VALUES (?,?,?,?,?,?)",
                (fingerprint, key, graph, value, version, _checksum(fingerprint, key, graph, value, version)),
            )
            counts["added"] += 1
        src.close()
    into.close()
    return counts


def clear(path) -> int:
    """Remove every entry (the file and its schema stay); returns how many were removed."""
    db = MemoDB(path, wormhole_lab.__version__)
    if not db.usable:
        raise OSError(f"memo DB {path} cannot be opened")
    try:
        removed = db.conn.execute("DELETE FROM entries").rowcount
        db.conn.execute("VACUUM")
    except sqlite3.DatabaseError as exc:
        raise OSError(f"memo DB {path}: {exc}") from None
    db.close()
    return removed
