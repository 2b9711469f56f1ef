"""Database snapshots shared by the environments of a dataset: a conversation's world built on
a shared snapshot is the world built from its own copy of the databases."""

from __future__ import annotations

from toolscore.env.environment import Environment, Snapshot
from toolscore.env.plugin import Plugin
from toolscore.env.tool import tool

DATABASES = {"Account": {"ann": {"email": "a@x"}}, "Alarm": {"a1": {"time": "07:00"}}}


def test_replace_shares_untouched_pickles_and_hashes() -> None:
    base = Snapshot(DATABASES)
    changed = base.replace({"Account": {"ann": {"email": "a@x", "session_token": "t"}}})
    assert changed.blobs["Alarm"] is base.blobs["Alarm"]
    assert changed.load("Account")["ann"]["session_token"] == "t"
    assert "session_token" not in base.load("Account")["ann"]
    changed.hashes["Alarm"] = "h-alarm"  # a shared database's hash lands in the parent
    changed.hashes["Account"] = "h-account"  # its own stays its own
    assert base.hashes == {"Alarm": "h-alarm"} and "Account" not in base.hashes
    assert changed.hashes["Account"] == "h-account" and "Account" in changed.hashes


@tool("AddAlarm", action=True)
def add_alarm(env: Environment, time: str) -> str:
    """Add an alarm."""
    env.db("Alarm")["a2"] = {"time": time}
    return "a2"


def test_environments_on_a_shared_snapshot_hash_as_on_their_own_copy() -> None:
    plugin = Plugin.from_tools("Alarm", [add_alarm], ["Alarm"])
    own = {"Account": {"ann": {"email": "a@x", "session_token": "t"}},
           "Alarm": dict(DATABASES["Alarm"])}
    shared = Snapshot(DATABASES).replace({"Account": own["Account"]})
    envs = [Environment([plugin]), Environment([plugin])]
    envs[0].set_initial(own)
    envs[1].set_initial(shared)
    assert envs[0].state_hash() == envs[1].state_hash()
    for env in envs:
        env.call("AddAlarm", {"time": "08:00"})
    assert envs[0].state_hash() == envs[1].state_hash()
    before = envs[1].state_hash()
    for env in envs:
        env.reset()
    assert envs[0].state_hash() == envs[1].state_hash() != before
    assert Snapshot(DATABASES).load("Alarm") == DATABASES["Alarm"]  # nothing leaked back
