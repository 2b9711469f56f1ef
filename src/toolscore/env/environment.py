"""The Environment runs tool calls against plugin state.

It owns everything a simulated world needs to be reproducible: the databases (restored by
``reset()``), the clock ("now"), the login session, and one seeded random generator per tool,
created lazily and discarded at every reset (so the n-th id a tool generates after a reset is
always the same). ``execute`` never raises for anything the model sends.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ArgumentsError, ToolCall, ToolResult, ToolSpec

NOT_LOGGED_IN = "User is not logged in"
PARSE_FAILED = "Failed to parse API call"


@dataclass
class Session:
    username: str
    token: str


class Snapshot:
    """Databases frozen as one pickle each, with their hashes once computed.

    Unpickling is ~6x faster than ``copy.deepcopy``, and only the databases a turn touched need
    restoring. A snapshot never changes, so the environments of a whole dataset can share one:
    :meth:`replace` gives a snapshot that differs in a few databases (a conversation's logged-in
    account) and shares every other pickle and hash, so building a sample's world neither copies
    nor re-hashes the databases it did not change.
    """

    def __init__(self, databases: dict[str, Any] | None = None) -> None:
        self.blobs: dict[str, bytes] = {
            name: pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL)
            for name, db in (databases or {}).items()}
        self.hashes: dict[str, str] = {}  # filled lazily by state_hash, shared by its users

    def load(self, name: str) -> Any:
        """A fresh copy of database ``name``."""
        return pickle.loads(self.blobs[name])

    def replace(self, databases: dict[str, Any]) -> Snapshot:
        """This snapshot with ``databases`` (name -> new content) replaced or added."""
        other = Snapshot()
        other.blobs = {**self.blobs, **Snapshot(databases).blobs}
        other.hashes = _SharedHashes(self.hashes, set(databases))
        return other


class _SharedHashes(dict):  # type: ignore[type-arg]
    """A snapshot's hash memo that reads and fills its parent's for the databases it shares."""

    def __init__(self, parent: dict[str, str], own: set[str]) -> None:
        super().__init__()
        self.parent, self.own = parent, own

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (name not in self.own and name in self.parent)

    def __getitem__(self, name: str) -> str:
        if dict.__contains__(self, name) or name in self.own:
            return dict.__getitem__(self, name)
        return self.parent[name]

    def __setitem__(self, name: str, value: str) -> None:
        if name in self.own:
            dict.__setitem__(self, name, value)
        else:
            self.parent[name] = value


@dataclass
class Checkpoint:
    """What :meth:`Environment.restore` needs to give a world back the state it had when
    :meth:`Environment.checkpoint` was taken: the databases changed since the reset (pickled),
    the login session and every tool's random generator."""

    blobs: dict[str, bytes]
    session: Session | None
    rngs: dict[str, Any]


class Environment:
    def __init__(
        self,
        plugins: Iterable[Plugin],
        databases: dict[str, Any] | None = None,
        now: datetime | None = None,
        seed: int = 489,
        strict: bool = False,
    ) -> None:
        self.plugins = list(plugins)
        # Which simulator the tools are: False, the reproduced one as it is (its own error
        # texts, the values it lets through); True, the corrected one (argument types checked,
        # clearer texts). Tools that have only one behaviour ignore it.
        self.strict = strict
        self.tools: dict[str, Tool] = {t.name: t for p in self.plugins for t in p.tools}
        self.now = now or datetime(2023, 1, 1)
        self.seed = seed
        self.initial_session: Session | None = None
        self._set_snapshot(databases or {})
        self._dbs: dict[str, Any] = {}
        self._touched: set[str] | None = None  # None: unknown, treat every database as changed
        self._assumed_touched: set[str] = set()  # touched before assume_hashes: reset drops
        self._known: dict[str, str] = {}
        self._restored: dict[str, bytes] = {}  # see restore
        self._lazy = True  # databases not in _dbs are loaded from the snapshot when asked for
        self.reset()

    # -- state -------------------------------------------------------------------------------
    # reset() runs before every evaluated turn and state_hash() after it, so both only redo the
    # databases a tool may have changed since the last reset (tools reach state through db()).
    # A database is loaded from its snapshot when first asked for, and a read-only tool marks it
    # changed only if it grew or shrank: ToolTalk's read-only tools write nothing but an empty
    # entry for a user they look up (``setdefault``), which changes the number of top-level
    # keys; tests/env/test_read_only_tools.py checks that on every ground-truth call. Handing
    # out the whole ``databases`` dict gives up that tracking until the next reset.
    @property
    def databases(self) -> dict[str, Any]:
        for name, blob in self._restored.items():
            self._dbs[name] = pickle.loads(blob)
        self._restored = {}
        if self._lazy:
            for name in self._initial.keys() - self._dbs.keys():
                self._dbs[name] = pickle.loads(self._initial[name])
        self._touched = None
        return self._dbs

    @databases.setter
    def databases(self, value: dict[str, Any]) -> None:
        self._dbs = value
        self._restored = {}
        self._touched = None
        self._lazy = False  # the given dict is the whole state until the next reset

    def reset(self) -> None:
        """Restore initial databases and session; forget every tool's random generator."""
        if self._touched is None:
            self._dbs = {}  # every database is reloaded from its snapshot when next asked for
        else:
            for name in self._touched | self._assumed_touched:
                self._dbs.pop(name, None)
        self._touched = set()
        self._restored = {}  # see restore
        self._known = {}  # see assume_hashes
        self._expected: tuple[dict[str, bytes], dict[str, str]] = ({}, {})  # see expect
        self._assumed_touched = set()
        self._lazy = True
        self._reads: dict[str, int] | None = None
        self.session: Session | None = _copy(self.initial_session)
        self._rngs: dict[str, random.Random] = {}

    def set_initial(self, databases: dict[str, Any] | Snapshot,
                    session: Session | None = None) -> None:
        """Make the given state (databases, or a :class:`Snapshot` of them) the one ``reset()``
        returns to, and reset to it."""
        self._set_snapshot(databases)
        self.initial_session = session
        self._touched = None
        self.reset()

    def _set_snapshot(self, databases: dict[str, Any] | Snapshot) -> None:
        snapshot = databases if isinstance(databases, Snapshot) else Snapshot(databases)
        self._initial = snapshot.blobs
        self._initial_hashes = snapshot.hashes

    def _source(self, name: str) -> bytes | None:
        """The pickle a database not loaded yet is loaded from (restored, else initial)."""
        blob = self._restored.pop(name, None)
        if blob is None and self._lazy:
            blob = self._initial.get(name)
        return blob

    def db(self, name: str) -> Any:
        data = self._dbs.get(name)
        if data is None:
            blob = self._source(name)
            data = self._dbs[name] = {} if blob is None else pickle.loads(blob)
            if blob is None and self._touched is not None:
                self._touched.add(name)  # a new database: reset() must drop it
        if self._touched is not None:
            if self._reads is None:
                self._touched.add(name)
            elif name not in self._reads:
                self._reads[name] = len(data)
        return data

    def checkpoint(self) -> Checkpoint:
        """This world's state, as far as it differs from its reset state."""
        changed = (self._dbs.keys() if self._touched is None
                   else (self._touched | self._assumed_touched) & self._dbs.keys())
        blobs = {name: pickle.dumps(self._dbs[name], protocol=pickle.HIGHEST_PROTOCOL)
                 for name in changed}
        blobs.update(self._restored)  # restored, never loaded: unchanged since
        return Checkpoint(blobs, _copy(self.session),
                          {name: rng.getstate() for name, rng in self._rngs.items()})

    def restore(self, checkpoint: Checkpoint) -> None:
        """Reset, then take the state of ``checkpoint`` (taken in a world built like this one:
        same plugins, same initial databases). Cheaper than replaying the calls that led
        there: the reference protocol starts each turn from the ground truth of every earlier
        turn. A database is unpickled only when a tool first asks for it."""
        self.reset()
        self._touched = set(checkpoint.blobs)  # reset() left it empty
        for name, blob in checkpoint.blobs.items():
            self._dbs.pop(name, None)  # (one a lookup read from the initial state)
            self._restored[name] = blob
        self.session = _copy(checkpoint.session)
        for name, state in checkpoint.rngs.items():
            self._rngs[name] = rng = random.Random(0)  # (no seed would read os.urandom)
            rng.setstate(state)

    def peek(self, name: str) -> Any:
        """Database ``name`` for a lookup that changes nothing in it (ToolTalk's session check,
        made by every tool): unlike :meth:`db`, it does not count the database as changed,
        so an action tool that only looked a user up leaves that database's hash alone. The
        caller must not modify what it gets; tests/env/test_turn_start.py replays every
        ground-truth call against a world that tracks nothing to hold ToolTalk's tools to it.
        """
        data = self._dbs.get(name)
        if data is None:
            blob = self._source(name)
            if blob is None:
                return self.db(name)  # a new database is created (and tracked) by db()
            data = self._dbs[name] = pickle.loads(blob)
        return data

    def rng(self, tool_name: str) -> random.Random:
        if tool_name not in self._rngs:
            self._rngs[tool_name] = random.Random(self.seed)
        return self._rngs[tool_name]

    def state_hash(self, databases: dict[str, str] | None = None) -> str:
        """A canonical hash of the databases and the session (key order does not matter);
        ``databases``: what :meth:`database_hashes` just returned, if the caller has it."""
        return _hash_json({"databases": self.database_hashes() if databases is None else databases,
                           "session": self.session.__dict__ if self.session else None})

    def database_hashes(self) -> dict[str, str]:
        """Each database's canonical hash, by name (what :meth:`state_hash` combines)."""
        parts = {}
        tracked = self._touched is not None
        names = (self._dbs.keys() | self._initial.keys() | self._restored.keys() if self._lazy
                 else self._dbs.keys())
        for name in sorted(names):
            if tracked and name not in self._touched:  # type: ignore[operator]
                if name in self._known:
                    parts[name] = self._known[name]
                    continue
                if name in self._initial and name not in self._assumed_touched:
                    if name not in self._initial_hashes:
                        data = self._dbs[name] if name in self._dbs else self._load(name)
                        self._initial_hashes[name] = _hash_json(data)
                    parts[name] = self._initial_hashes[name]
                    continue
            parts[name] = self._hash_database(name)
        return parts

    def _hash_database(self, name: str) -> str:
        restored = self._restored.get(name)  # a restored database is hashed without loading
        data = None if restored is not None else (
            self._dbs[name] if name in self._dbs else self._load(name))
        blobs, hashes = self._expected
        if name in hashes:
            blob = blobs.get(name, self._initial.get(name))
            mine = (restored if restored is not None
                    else pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
            if mine == blob:
                return hashes[name]
        return _hash_json(pickle.loads(restored) if restored is not None else data)

    def expect(self, blobs: dict[str, bytes], hashes: dict[str, str]) -> None:
        """Name a state this world may reach before its next reset: the databases of another
        world built like this one (same plugins, same initial databases), as the ``blobs`` of
        its :meth:`checkpoint` (a database it has no blob for is as initialised) and their
        ``hashes`` (its :meth:`database_hashes`).

        A changed database whose pickle is byte for byte the expected one has the expected
        hash: equal pickles are equal contents, types included, so their canonical JSON and
        hash are equal too. Comparing pickles costs a fifth of hashing; any other content is
        hashed as always. ToolTalk's protocol expects the ground truth's state after the turn,
        which a model that acts right reaches."""
        self._expected = (blobs, hashes)

    def assume_hashes(self, hashes: dict[str, str]) -> None:
        """Declare that every database now has the hash ``hashes`` gives it (as
        :meth:`database_hashes` of an equal world returned), so that :meth:`state_hash` re-hashes
        only what changes from here until the next reset.

        The reference protocol starts each turn by replaying the ground truth of the earlier
        turns, which touches the same databases every turn; the ground truth's own world already
        hashed that state (``final_state.TruthHashes``), so hashing it again after every turn
        was an eighth of the harness's CPU. The caller vouches for the equality; a wrong claim
        gives a wrong hash, which tests/env/test_turn_start.py guards against for ToolTalk.
        """
        if self._touched is None:  # the whole databases dict was handed out: nothing is known
            return
        self._known = dict(hashes)
        self._assumed_touched |= self._touched
        self._touched = set()

    def _load(self, name: str) -> Any:
        return pickle.loads(self._initial[name])

    # -- tools -------------------------------------------------------------------------------
    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        chosen = self.tools if names is None else {n: self.tools[n] for n in names}
        return [t.spec for t in chosen.values()]

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallRecord:
        """Execute by name with parsed arguments (None = unparseable). Never raises."""
        if arguments is None:
            return CallRecord(name, None, None, PARSE_FAILED)
        tool = self.tools.get(name)
        if tool is None:
            return CallRecord(name, arguments, None, f"API {name} not found")
        kwargs = dict(arguments)
        if tool.auth:
            if self.session is None:
                return CallRecord(name, arguments, None, NOT_LOGGED_IN)
            kwargs["session_token"] = self.session.token
        reads: dict[str, int] | None = None if tool.action else {}
        self._reads = reads
        try:
            tool.check_arguments(kwargs)
            response = tool.fn(self, **kwargs)
        except Exception as e:  # the model's input is at fault; record, never crash
            return CallRecord(name, kwargs, None, _exception_text(e))
        finally:
            self._reads = None
            if reads and self._touched is not None:
                self._touched.update(n for n, size in reads.items()
                                     if len(self._dbs.get(n, ())) != size)
        return CallRecord(name, kwargs, response, None)

    def execute(self, call: ToolCall) -> tuple[CallRecord, ToolResult]:
        """Execute a model's tool call; the record keeps the (session-injected) arguments."""
        try:
            arguments: dict[str, Any] | None = call.parse_arguments()
        except ArgumentsError:
            arguments = None
        record = self.call(call.name, arguments)
        return record, ToolResult(call.id, call.name, record.response, record.exception)


def _copy(session: Session | None) -> Session | None:
    return None if session is None else Session(session.username, session.token)


def _hash_json(value: Any) -> str:
    try:
        blob = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    except TypeError:  # keys of several types cannot be sorted (a user registered as 7)
        blob = json.dumps(_typed_keys(value), sort_keys=True, default=str,
                          separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _typed_keys(value: Any) -> Any:
    """``value`` with every key that is not text named with its type, so keys sort."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else f"<{type(k).__name__}> {k!r}": _typed_keys(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_typed_keys(v) for v in value]
    return value


def _exception_text(e: Exception) -> str:
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])
    return str(e) or type(e).__name__
