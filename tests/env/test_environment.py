"""The Environment restores and hashes only what tools touched (the results must be the same as
restoring and hashing everything), and words argument errors as the tool asks."""

from __future__ import annotations

from dataclasses import replace

from toolscore.env import Environment, Plugin, tool


@tool("Put", action=True)
def put(env: Environment, key: str, value: str) -> dict:
    """Stores a value.

    Args:
        key: Where.
        value: What.
    """
    env.db("Store")[key] = value
    return {"stored": key}


@tool("Get")
def get(env: Environment, key: str) -> dict:
    """Reads a value.

    Args:
        key: Where.
    """
    return {"value": env.db("Store").get(key)}


def make() -> Environment:
    return Environment([Plugin("KV", [put, get], databases=("Store",))],
                       {"Store": {"a": "1"}, "Other": {"x": [1, 2]}})


def test_reset_restores_touched_databases_and_drops_new_ones() -> None:
    env = make()
    initial = env.state_hash()
    env.call("Put", {"key": "b", "value": "2"})
    env.db("Scratch")["tmp"] = 1  # a database that did not exist initially
    assert env.state_hash() != initial
    env.reset()
    assert env.state_hash() == initial
    assert env.databases == {"Store": {"a": "1"}, "Other": {"x": [1, 2]}}


def test_direct_writes_through_databases_are_restored_too() -> None:
    env = make()
    initial = env.state_hash()
    env.databases["Other"]["x"].append(3)  # bypasses db(): tracking is given up
    assert env.state_hash() != initial
    env.reset()
    assert env.state_hash() == initial and env.databases["Other"] == {"x": [1, 2]}


def test_reads_do_not_change_the_hash_and_hash_ignores_key_order() -> None:
    env = make()
    initial = env.state_hash()
    env.call("Get", {"key": "a"})
    assert env.state_hash() == initial
    reordered = Environment([], {"Other": {"x": [1, 2]}, "Store": {"a": "1"}})
    assert reordered.state_hash() == initial


def test_tool_rngs_restart_after_reset() -> None:
    env = make()
    first = [env.rng("Put").random() for _ in range(3)]
    env.reset()
    assert [env.rng("Put").random() for _ in range(3)] == first


def test_binding_errors_are_pythons_own_unless_the_tool_names_its_callable() -> None:
    """A simulator being reproduced may name its callable in argument errors (ToolTalk:
    ``Put.call()``); without a label the text is Python's own for the function."""
    env = make()
    assert env.call("Put", {"key": "b"}).exception == (
        "put() missing 1 required positional argument: 'value'")
    assert env.call("Put", {"key": "b", "value": "2", "extra": 1}).exception == (
        "put() got an unexpected keyword argument 'extra'")
    labelled = Environment([Plugin("KV", [replace(put, call_label="Put.call")])], {"Store": {}})
    before = labelled.state_hash()
    assert labelled.call("Put", {}).exception == (
        "Put.call() missing 2 required positional arguments: 'key' and 'value'")
    assert labelled.call("Put", {"value": "1", "extra": 1, "more": 2}).exception == (
        "Put.call() got an unexpected keyword argument 'extra'")
    assert labelled.call("Put", {"key": "k", "value": "v", "env": None}).exception == (
        "Put.call() got an unexpected keyword argument 'env'")  # not a duplicate
    assert labelled.state_hash() == before
    assert labelled.call("Put", {"key": "k", "value": "v"}).response == {"stored": "k"}
