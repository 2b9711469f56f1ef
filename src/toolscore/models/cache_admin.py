"""Looking after response caches: what one holds, merging several into one, pruning.

On a cluster every node keeps its own cache (SQLite must not live on a network file system),
so after a sweep the nodes' caches are merged into one, which makes every run of the sweep
repeatable from a single file. Merging is safe because a key is the hash of everything that
shaped the reply (:func:`~toolscore.models.cache.cache_key`): the same key means the same
request. Two different replies under one key mean a non-deterministic endpoint was cached
twice, or a corrupt file: that is reported and the target's reply is kept, never overwritten.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.models.cache import ResponseCache


class CacheError(ValueError):
    """A cache file that cannot be read (one line naming it)."""


def _connect(path: Path, *, write: bool = False) -> sqlite3.Connection:
    if not path.is_file() and not write:
        raise CacheError(f"{path}: no such cache file")
    if write:
        ResponseCache(path).close()  # creates the file with the current schema if needed
    try:
        conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        conn.execute("SELECT key, model, reply, created FROM replies LIMIT 0")
    except sqlite3.Error as e:
        raise CacheError(f"{path}: not a toolscore response cache ({e})") from None
    return conn


def info(path: str | Path) -> dict[str, Any]:
    """Entries, size on disk (with its WAL), models, oldest and newest entry."""
    path = Path(path)
    conn = _connect(path)
    try:
        count, oldest, newest = conn.execute(
            "SELECT COUNT(*), MIN(created), MAX(created) FROM replies").fetchone()
        models = dict(conn.execute(
            "SELECT model, COUNT(*) FROM replies GROUP BY model ORDER BY model").fetchall())
    finally:
        conn.close()
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.is_file())
    return {"path": str(path), "entries": count, "bytes": size, "models": models,
            "oldest": oldest, "newest": newest}


@dataclass
class MergeReport:
    """What a merge did: entries copied, already there (same reply), and conflicts (same key,
    another reply: kept as in the target) with their keys."""

    copied: int = 0
    same: int = 0
    conflicts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"copied": self.copied, "same": self.same, "conflicts": len(self.conflicts),
                "conflict_keys": self.conflicts[:20]}


def merge(target: str | Path, sources: list[str | Path]) -> MergeReport:
    """Copy into ``target`` every entry of ``sources`` it lacks (the target is created if
    missing); an entry whose key is there with another reply is a conflict, not copied."""
    report = MergeReport()
    dest = _connect(Path(target), write=True)
    try:
        for source in sources:
            src = _connect(Path(source))
            try:
                rows = src.execute("SELECT key, model, reply, created FROM replies")
                dest.execute("BEGIN")
                for key, model, reply, created in rows:
                    have = dest.execute("SELECT reply FROM replies WHERE key = ?",
                                        (key,)).fetchone()
                    if have is None:
                        dest.execute("INSERT INTO replies (key, model, reply, created) "
                                     "VALUES (?, ?, ?, ?)", (key, model, reply, created))
                        report.copied += 1
                    elif have[0] == reply:
                        report.same += 1
                    else:
                        report.conflicts.append(key)
                dest.execute("COMMIT")
            finally:
                src.close()
    finally:
        dest.close()
    return report


def prune(path: str | Path, *, older_than_days: float | None = None,
          max_bytes: int | None = None, now: float | None = None) -> dict[str, Any]:
    """Delete entries older than ``older_than_days``, then the oldest ones until the replies
    fit in ``max_bytes``; the file is then compacted. Returns entries removed and left."""
    if older_than_days is None and max_bytes is None:
        raise ValueError("prune needs --older-than DAYS or --max-size SIZE")
    path = Path(path)
    conn = _connect(path)
    removed = 0
    try:
        if older_than_days is not None:
            cut = (now if now is not None else time.time()) - older_than_days * 86400
            removed += conn.execute("DELETE FROM replies WHERE created < ?", (cut,)).rowcount
        if max_bytes is not None:
            total = 0
            keep_from = None
            for key, created, size in conn.execute(
                    "SELECT key, created, LENGTH(reply) + LENGTH(key) + LENGTH(model) "
                    "FROM replies ORDER BY created DESC, key"):
                total += size
                if total > max_bytes:
                    keep_from = (created, key)
                    break
            if keep_from is not None:
                removed += conn.execute(
                    "DELETE FROM replies WHERE created < ? OR (created = ? AND key >= ?)",
                    (keep_from[0], keep_from[0], keep_from[1])).rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        left = conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
    finally:
        conn.close()
    return {"path": str(path), "removed": removed, "entries": left}


def parse_size(text: str) -> int:
    """"500M", "2G", "10k", "1234" as bytes (a one-line ValueError otherwise)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (raw[:-1], raw[-1]) if raw and raw[-1] in units else (raw, "")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"--max-size {text!r}: expected a size like 500M or 2G") from None
    return int(value * units[unit])
