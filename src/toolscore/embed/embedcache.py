"""The persistent embedding cache: a text's vector is computed once per embedder, ever.

Scoring compares free-text arguments by embedding them; the same texts (a conversation's
ground truth, a model's recurring phrasings) come back in every run, rescoring and epoch, and
embedding them again cost more than the whole harness. SQLite rows keyed by (embedder name,
sha256 of the text), float32 blobs, shared by processes (WAL) and forks (one connection each).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def text_key(text: str) -> str:
    """The cache key of a text; a lone surrogate (a rescored file may hold one) is hashed as
    is rather than breaking the scorer, and every valid text keeps its key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """Persistent embeddings: SQLite rows keyed by (embedder name, sha256 of the text), vectors
    stored as float32 blobs. ``path=":memory:"`` gives a throwaway cache.
    """

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._write_warned = False
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        self._pid = os.getpid()
        db = sqlite3.connect(self.path, check_same_thread=False)
        if self.path != ":memory:":
            # Write-ahead log, synced at checkpoints only: every scored sample commits its new
            # vectors, and a sync per commit cost more than the embedding. A crash may lose the
            # last vectors (recomputed next time), never corrupt the file.
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.OperationalError:  # another process holds it: keep its mode
                pass
        with db:  # a new connection, not shared yet (a caller may hold the lock)
            db.execute("CREATE TABLE IF NOT EXISTS embeddings (embedder TEXT NOT NULL, "
                       "key TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (embedder, key))")
        return db

    @property
    def db(self) -> sqlite3.Connection:
        """This process's connection: a forked worker (:mod:`toolscore.runs.workers`) opens its
        own, as SQLite requires (one used on both sides of a fork can corrupt the file). The
        inherited one is left alone: closing it could drop the parent's locks. A throwaway
        in-memory cache starts empty in the worker."""
        if self._pid != os.getpid():
            self._db = self._connect()
        return self._db

    def get_many(self, embedder: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those texts that have one, by text."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        items = list(keys)
        with self._lock:
            for start in range(0, len(items), 500):
                chunk = items[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self.db.execute(
                    f"SELECT key, vector FROM embeddings WHERE embedder = ? AND key IN ({marks})",
                    [embedder, *chunk]).fetchall()
                for key, blob in rows:
                    found[keys[key]] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors; a write that fails (a full disk, a file size limit, a read-only
        file) leaves them uncached, said once: the cache is an optimisation and must never
        turn a sample into an error."""
        rows = [(embedder, text_key(t), np.asarray(v, dtype=np.float32).tobytes())
                for t, v in vectors.items()]
        with self._lock:
            try:
                db = self.db
                with db:
                    db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
            except sqlite3.Error as e:
                if not self._write_warned:
                    self._write_warned = True
                    logging.getLogger("toolscore").warning(
                        "embedding cache %s: vectors not stored (%s); computing them again "
                        "when needed", self.path, e)

    def __len__(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        if self._pid == os.getpid():
            self._db.close()
