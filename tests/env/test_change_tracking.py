"""Change tracking at its edges: a read-only tool that adds an entry (ToolTalk's lookups
``setdefault`` one for an unknown user) still counts as a change, and a world whose databases
were never loaded hashes like one that loaded them all."""

from __future__ import annotations

from toolscore.env import Environment, Plugin, tool


@tool("Lookup")
def lookup(env: Environment, user: str) -> dict:
    """Reads a user's entries, creating an empty entry for a new user.

    Args:
        user: Whose.
    """
    return {"entries": env.db("Store").setdefault(user, {})}


@tool("Peek")
def peek(env: Environment, user: str) -> dict:
    """Reads a user's entries.

    Args:
        user: Whose.
    """
    return {"entries": env.db("Store").get(user)}


def make() -> Environment:
    return Environment([Plugin("KV", [lookup, peek], databases=("Store",))],
                       {"Store": {"ann": {"a": 1}}, "Other": {"x": [1, 2]}})


def test_a_read_that_adds_an_entry_is_a_change_and_is_undone_by_reset() -> None:
    env = make()
    initial = env.state_hash()
    env.call("Peek", {"user": "bo"})
    assert env.state_hash() == initial
    env.call("Lookup", {"user": "ann"})  # present: nothing added
    assert env.state_hash() == initial
    env.call("Lookup", {"user": "bo"})
    changed = env.state_hash()
    assert changed != initial
    untracked = make()
    untracked.databases["Store"]["bo"] = {}
    assert untracked.state_hash() == changed
    env.reset()
    assert env.state_hash() == initial and env.call("Peek", {"user": "bo"}).response == {
        "entries": None}


def test_unloaded_databases_hash_as_loaded_ones() -> None:
    lazy, loaded = make(), make()
    assert loaded.databases == {"Store": {"ann": {"a": 1}}, "Other": {"x": [1, 2]}}
    assert lazy.state_hash() == loaded.state_hash()
    loaded.reset()
    assert lazy.state_hash() == loaded.state_hash()
