"""On-disk cache of model replies, so a run is deterministic and free to repeat.

Re-running or resuming a run must give identical numbers at zero model cost, so every reply is
stored under a key that covers everything that determines it: the model's ``cache_identity()``
(provider, model id, base URL, weights file), the messages, the tools and the generation settings
(including ``epoch``, which separates repeated samples, and the oracle's ``script``). Secrets
are never part of a cache identity, so they never reach the key or the file.

SQLite in WAL mode is used because several processes (parallel runs, a resume while a report
reads) may share one cache file, and because a killed process must not corrupt it: each ``put``
is its own committed transaction, so at worst the reply being written is lost.

Entries never expire by default (a re-run replays them, which is what makes it free and
resumable). ``max_age_s`` (``--cache-expiry``, ``$TOOLSCORE_CACHE_EXPIRY``) makes older
entries misses: the model is asked again and the fresh reply replaces the old one.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

log = safe_logger("toolscore.models")  # endpoint text in warnings is shown, never obeyed

#: where an expiry comes from when a cache is opened without one (``--cache-expiry`` sets it,
#: so that every cache a run opens, in this process and its workers, honours it)
EXPIRY_ENV = "TOOLSCORE_CACHE_EXPIRY"
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


def parse_expiry(text: str, where: str = "--cache-expiry") -> float | None:
    """A cache expiry in seconds: a number with a unit (``90s``, ``30m``, ``12h``, ``7d``,
    ``2w``; a bare number is seconds), or ``never`` (None). A bad value is a one-line
    ValueError naming ``where``."""
    value = text.strip().lower()
    if value in ("never", "none", ""):
        return None
    unit = value[-1] if value[-1] in _UNITS else "s"
    number = value[:-1] if value[-1] in _UNITS else value
    try:
        seconds = float(number) * _UNITS[unit]
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{where} {text!r}: a duration such as 90s, 30m, 12h, 7d or 2w "
                         "(or never)")
    return seconds


def expiry_from_env() -> float | None:
    import os

    raw = os.environ.get(EXPIRY_ENV, "")
    return parse_expiry(raw, EXPIRY_ENV) if raw.strip() else None


#: Bumped when the key layout or the stored reply format changes; old entries then miss.
CACHE_VERSION = 1

T = TypeVar("T")


def canonical_json(obj: Any) -> str:
    """One text per value: sorted keys, no whitespace, UTF-8 kept (so hashes are stable)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def sha256_json(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


class ToolsMemo(Generic[T]):
    """Remembers a rendering (JSON text) of a tool list, so 28 schemas are not walked per call.

    A benchmark offers the same tools on every call of a sample (and usually of a run), and
    rendering them dominated the per-call CPU of the cache key and of the request body. The memo
    key is each tool's name, description and the *identity* of its parameters dict; the dicts are
    held, so an identity cannot be reused while its entry lives. A ToolSpec's schema is therefore
    treated as immutable once it has been offered to a model (ToolSpecs are built from a Tool's
    parameters and never edited in place); a new or replaced schema is a new entry.
    """

    def __init__(self, render: Callable[[list[ToolSpec]], T], size: int = 64):
        self._render = render
        self._size = size
        self._entries: OrderedDict[tuple[object, ...], tuple[T, list[object]]] = OrderedDict()
        # the same ToolSpec objects offered again (a benchmark that shares them between calls)
        # are found by their identities alone, without walking 28 names and descriptions;
        # ToolSpec is frozen, and each entry holds its specs, so an identity stays theirs
        self._by_specs: OrderedDict[tuple[int, ...], tuple[T, list[ToolSpec]]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, tools: list[ToolSpec]) -> T:
        ids = tuple(map(id, tools))
        with self._lock:
            found = self._by_specs.get(ids)
            if found is not None:
                self._by_specs.move_to_end(ids)
                return found[0]
        key = tuple((t.name, t.description, id(t.parameters)) for t in tools)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is None:
            entry = (self._render(tools), [t.parameters for t in tools])
        with self._lock:
            self._entries[key] = entry
            self._by_specs[ids] = (entry[0], list(tools))
            for memo in (self._entries, self._by_specs):
                while len(memo) > self._size:
                    memo.popitem(last=False)
        return entry[0]


#: ``canonical_json([t.to_dict() for t in tools])``, memoised per tool list.
canonical_tools: ToolsMemo[str] = ToolsMemo(
    lambda tools: canonical_json([t.to_dict() for t in tools]))


def cache_key(
    identity: dict[str, object],
    messages: list[Message],
    tools: list[ToolSpec],
    config: GenerateConfig,
) -> str:
    """The key of one request: sha256 of the canonical JSON of everything that shapes the reply,

        {"v": CACHE_VERSION, "model": identity, "messages": [m.to_dict() ...],
         "tools": [t.to_dict() ...], "config": config.to_dict()}

    The text is assembled from its parts in sorted-key order, which is byte for byte what
    ``canonical_json`` of that dict gives, so that the tools part can come from
    :data:`canonical_tools`. Messages are rendered per call (they change every call; ~2 us each).
    """
    # "script": null keeps the keys of 0.1.0 caches (whose configs carried the oracle's script,
    # always null for real models) valid.
    text = "".join((
        '{"config":', canonical_json({**config.to_dict(), "script": None}),
        ',"messages":', canonical_json([m.to_dict() for m in messages]),
        ',"model":', canonical_json(identity),
        ',"tools":', canonical_tools(tools),
        ',"v":', canonical_json(CACHE_VERSION), "}",
    ))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ResponseCache:
    """A key → :class:`Reply` store in one SQLite file.

    Calls are short and synchronous: they run on the event loop thread, which is what makes them
    safe for concurrent asyncio use (no two coroutines are inside a call at once); a lock also
    makes the object safe to share between threads. Other processes are handled by SQLite's
    WAL mode and a busy timeout.

    A cache is an optimisation, so its faults never stop a run: a file that cannot be opened
    (garbage, a directory, a wrong schema) leaves the cache off; a read-only file is opened for
    reading; an entry that cannot be read is a miss; a write that fails (disk full) keeps the
    answer uncached. Each kind of fault is said once, naming the file.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0,
                 max_age_s: float | None = None):
        self.path = Path(path)
        # entries older than this are misses (None: ``$TOOLSCORE_CACHE_EXPIRY``, else never)
        self.max_age_s = max_age_s if max_age_s is not None else expiry_from_env()
        self.expired = 0
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self.hits = 0
        self.misses = 0
        self.read_only = False
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._open_patiently(busy_timeout_s)
        except (sqlite3.Error, OSError) as e:
            self._conn = self._open_read_only(busy_timeout_s, e)

    def _open_patiently(self, busy_timeout_s: float) -> sqlite3.Connection:
        """:meth:`_open`, tried again while another process holds the file: switching to WAL
        and creating the table need a lock that SQLite's busy handler does not always wait
        for (several workers opening one new cache at once got "database is locked" and ran
        without a cache)."""
        deadline = time.monotonic() + busy_timeout_s
        pause = 0.01
        while True:
            try:
                return self._open(busy_timeout_s)
            except sqlite3.OperationalError as e:
                busy = "locked" in str(e) or "busy" in str(e)
                if not busy or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _open(self, busy_timeout_s: float) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=busy_timeout_s, check_same_thread=False,
                               isolation_level=None)  # autocommit: a statement, a transaction
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a killed process (only a power cut loses the tail).
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            conn.execute("SELECT key, reply FROM replies LIMIT 0")  # the schema we expect
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def _open_read_only(self, busy_timeout_s: float,
                        error: BaseException) -> sqlite3.Connection | None:
        """A cache shipped read-only still serves reads; anything else leaves it off."""
        if self.path.is_file():
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1",
                                       uri=True, timeout=busy_timeout_s,
                                       check_same_thread=False, isolation_level=None)
                conn.execute("SELECT key, reply FROM replies LIMIT 0")
                self.read_only = True
                self._warn("open", f"response cache {self.path} is read-only ({error}): "
                                   "cached replies are served, new ones are not stored")
                return conn
            except sqlite3.Error:
                pass
        self._warn("open", f"response cache {self.path} cannot be used ({error}); running "
                           "without a cache")
        return None

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", message)

    def get(self, key: str) -> Reply | None:
        if self._conn is None:
            self.misses += 1
            return None
        try:
            with self._lock:
                row = self._conn.execute("SELECT reply, created FROM replies WHERE key = ?",
                                         (key,)).fetchone()
            if (row is not None and self.max_age_s is not None
                    and float(row[1] or 0) < time.time() - self.max_age_s):
                self.expired += 1
                row = None
            reply = None if row is None else Reply.from_dict(json.loads(row[0]))
        # RecursionError: JSON nested deeper than the decoder goes, which is a damaged row
        # like any other (a sample must not fail for it)
        except (sqlite3.Error, ValueError, TypeError, KeyError, AttributeError,
                RecursionError) as e:
            self._warn("read", f"response cache {self.path}: an entry could not be read "
                               f"({type(e).__name__}: {e}); such entries are treated as misses")
            reply = None
        if reply is None:
            self.misses += 1
            return None
        self.hits += 1
        return reply

    def put(self, key: str, reply: Reply, *, model: str = "") -> None:
        """Store (or overwrite) one reply; committed before returning. A failed write is said
        once and otherwise ignored: the reply is still the answer."""
        if self._conn is None or self.read_only:
            return
        try:
            data = canonical_json(reply.to_dict())
            with self._lock:
                self._conn.execute("INSERT OR REPLACE INTO replies (key, model, reply, created) "
                                   "VALUES (?, ?, ?, ?)", (key, model, data, time.time()))
        except (sqlite3.Error, ValueError, UnicodeError) as e:
            self._warn("write", f"response cache {self.path}: a reply could not be stored "
                                f"({type(e).__name__}: {e}); answers are kept, uncached")

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        if self._conn is None:
            return 0
        try:
            with self._lock:
                return int(self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])
        except sqlite3.Error:
            return 0

    def close(self) -> None:
        if self._conn is not None:
            with self._lock:
                self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
