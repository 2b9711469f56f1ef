"""The final-state check: did the assistant leave the world as the ground truth would have?

Call matching judges each call; it cannot see that two wrong calls cancelled out, or that a call
it counted as "bad planning" changed nothing. So, like tau2-bench's database check, the world
the assistant left is compared with a fresh world in which the ground-truth calls were replayed:
equal state hashes (every database and the login session, key order ignored) pass; otherwise
the record keeps a small diff (which database, which key paths, expected and found values) so a
reader sees what differs.

What is compared, per protocol:

* reference protocol (each assistant turn starts from reset + the ground truth of earlier
  turns): after each turn, the state the model's calls of that turn produced against the state
  after the ground truth up to and including that turn, both from the same reset. The
  conversation passes when every turn matches (rule ``each turn``).
* free-running protocol (the agent's calls accumulate): the state at the end of the episode
  against reset + every ground-truth call of the conversation (rule ``end of conversation``);
  per-turn hashes are kept as diagnostics.

Ids and timestamps that tools create come from a per-tool random generator re-seeded at every
reset and from the conversation's fixed clock, so replaying the same calls gives the same state.
This is an extra metric: call-level scores do not read it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EACH_TURN = "each turn"
END_OF_CONVERSATION = "end of conversation"
MAX_DIFFS = 20  # entries kept per compared state: a reader needs the first few, not all
MAX_VALUE = 240  # characters of one shown value
_MISSING = "<absent>"


def replay(env: Any, calls: list[Any]) -> None:
    """Execute ground-truth calls (``ToolTalk`` API records) in ``env``, in order."""
    for call in calls:
        env.call(call.name, call.arguments)


@dataclass
class TruthState:
    """The ground truth's world after one assistant turn: its state hash, each database's hash
    and a checkpoint to restore it from (``Environment.checkpoint``)."""

    hash: str
    databases: dict[str, str]
    checkpoint: Any


class TruthHashes:
    """The ground truth's state hash after each assistant turn, per conversation, computed once.

    The ground truth's world depends on the conversation only, not on the model or the epoch,
    so replaying it for every sample cost a second world, its tool calls and its hashes per
    turn (a sixth of the harness's CPU per model call) to get the same hashes again. The world
    is rebuilt only when a turn's state differs and the diff is needed (:func:`check_turn`).
    The whole state after each turn is kept too (:meth:`states`): the reference protocol starts
    every turn from the ground truth of the earlier turns, which is restored from it rather
    than replayed call by call, with its database hashes known.
    """

    def __init__(self) -> None:
        self._states: dict[str, dict[int, TruthState]] = {}

    def get(self, key: str, make_world: Callable[[], Any], turns: list[Any]) -> dict[int, str]:
        """Turn index -> expected hash for the conversation ``key`` (``turns`` its turns)."""
        return {i: state.hash for i, state in self.states(key, make_world, turns).items()}

    def states(self, key: str, make_world: Callable[[], Any], turns: list[Any]
               ) -> dict[int, TruthState]:
        """Turn index -> the ground truth's world after that assistant turn."""
        states = self._states.get(key)
        if states is None:
            world, states = make_world(), {}
            for i, turn in enumerate(turns):
                if turn.role == "assistant":
                    replay(world, turn.apis)
                    parts = world.database_hashes()
                    states[i] = TruthState(world.state_hash(parts), parts, world.checkpoint())
                    world.assume_hashes(parts)  # the next turn re-hashes only what it changes
            self._states[key] = states
        return states


def check_turn(found: Any, found_hash: str, expected_hash: str,
               make_world: Callable[[], Any], turns: list[Any], index: int) -> dict[str, Any]:
    """:func:`compare` for the world ``found`` after assistant turn ``index`` (its hash
    already known) and the ground truth's, whose world is replayed only for a diff."""
    out: dict[str, Any] = {"state_hash": found_hash, "expected_hash": expected_hash,
                           "match": found_hash == expected_hash}
    if not out["match"]:
        world = make_world()
        for turn in turns[:index + 1]:
            if turn.role == "assistant":
                replay(world, turn.apis)
        out["diff"] = state_diff(state_of(found), state_of(world))
    return out


def state_of(env: Any) -> dict[str, Any]:
    """Everything :meth:`Environment.state_hash` covers, as one JSON-like value."""
    session = env.session.__dict__ if getattr(env, "session", None) else None
    return {"databases": env.databases, "session": session}


def compare(found: Any, expected: Any) -> dict[str, Any]:
    """Compare the worlds ``found`` (the assistant's) and ``expected`` (the ground truth's):
    their hashes and, when they differ, a bounded diff."""
    got, want = found.state_hash(), expected.state_hash()
    out: dict[str, Any] = {"state_hash": got, "expected_hash": want, "match": got == want}
    if got != want:
        out["diff"] = state_diff(state_of(found), state_of(expected))
    return out


def state_diff(found: dict[str, Any], expected: dict[str, Any],
               limit: int = MAX_DIFFS) -> dict[str, Any]:
    """Differences as ``{"entries": [{database, path, expected, found}], "more": n}``: the
    path is the key path inside that database (rows of ToolTalk databases sit two levels down:
    user, then id), ``database`` is ``"(session)"`` for the login session."""
    entries: list[dict[str, Any]] = []
    total = 0
    dbs_found = found.get("databases") or {}
    dbs_expected = expected.get("databases") or {}
    for name in sorted(set(dbs_found) | set(dbs_expected), key=str):
        for path, want, got in _walk(dbs_expected.get(name, _MISSING),
                                     dbs_found.get(name, _MISSING), ()):
            total += 1
            if len(entries) < limit:
                entries.append(_entry(str(name), path, want, got))
    if _canonical(found.get("session")) != _canonical(expected.get("session")):
        total += 1
        if len(entries) < limit:
            entries.append(_entry("(session)", (), expected.get("session"), found.get("session")))
    return {"entries": entries, "more": total - len(entries)}


def _walk(want: Any, got: Any, path: tuple[str, ...]) -> Any:
    """(path, expected, found) for every differing leaf or subtree, dicts descended into."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got), key=str):
            yield from _walk(want.get(key, _MISSING), got.get(key, _MISSING), (*path, str(key)))
        return
    if _canonical(want) != _canonical(got):
        yield path, want, got


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def _short(value: Any) -> Any:
    if value == _MISSING:
        return None
    text = value if isinstance(value, str) else _canonical(value)
    return text if len(text) <= MAX_VALUE else f"{text[:MAX_VALUE]}… ({len(text)} chars)"


def _entry(database: str, path: tuple[str, ...], want: Any, got: Any) -> dict[str, Any]:
    kind = "added" if want == _MISSING else "removed" if got == _MISSING else "changed"
    return {"database": database, "path": "/".join(path), "change": kind,
            "expected": _short(want), "found": _short(got)}


def stored_success(output: dict[str, Any]) -> bool | None:
    """Final-state success from a stored output (None: the output has no final-state check,
    e.g. a run recorded before it existed, or a world served by an external MCP server)."""
    check = output.get("final_state")
    if not isinstance(check, dict):
        return None
    if check.get("rule") == EACH_TURN:
        turns = output.get("turns") or []
        return bool(turns) and all(t.get("state_hash") == t.get("expected_state_hash")
                                   for t in turns)
    return check.get("state_hash") == check.get("expected_hash")
