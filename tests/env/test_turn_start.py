"""The reference protocol's shortcuts must never change a world or its hash.

Each turn of ToolTalk's reference protocol starts from reset + the ground truth of the earlier
turns. The runner restores that state from the ground truth's own world
(``Environment.checkpoint``/``restore``, kept by ``final_state.TruthHashes``) instead of
replaying the calls, and tells the world the database hashes that world computed
(``assume_hashes``), so that only what the model changes is hashed again. Here, for every
conversation and every assistant turn, a world started either way (replayed + assumed hashes,
restored + assumed hashes) must agree with a twin that replays and tracks nothing: right after
the start, after the turn's ground-truth calls (which must then equal the expected hash), and
after every other call of the conversation (ids drawn from the tools' random generators
included: their responses are compared too), and after a reset. A world told the ground
truth's end of the turn (``Environment.expect``) recognises it without hashing, and must give
the same hashes whether or not it reaches it.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooltalk import protocol
from toolscore.benchmarks.tooltalk.data import make_environment
from toolscore.benchmarks.tooltalk.final_state import TruthHashes, replay
from toolscore.env.environment import Environment


@pytest.fixture(scope="module")
def bench() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), embedder="hashing")


def _twin(bench: Any, conversation: Any, turns: list[Any], index: int) -> Environment:
    env = make_environment(conversation, bench.databases, bench.plugins)
    env.databases  # noqa: B018  (handing out the dict turns change tracking off until reset)
    for earlier in turns[:index]:
        if earlier.role == "assistant":
            replay(env, earlier.apis)
    return env


@pytest.mark.parametrize("start", ["replayed", "restored", "restored, end expected"])
def test_started_worlds_agree_with_a_replayed_untracked_twin(bench: Any, start: str) -> None:
    truth = TruthHashes()
    checked = actions = 0
    for sample in bench.samples():
        conv, turns = sample.data, sample.data.turns
        states = truth.states(sample.id, lambda c=conv: bench.environment(c), turns)
        env = make_environment(conv, bench.databases, bench.plugins)
        initial = env.state_hash()
        previous = None
        others = [c for t in turns if t.role == "assistant" for c in t.apis]
        for i in protocol.assistant_turns(turns):
            if previous is None or start == "replayed":
                protocol.start_turn(env, turns, i)
            else:
                env.restore(states[previous].checkpoint)
            if previous is not None:
                env.assume_hashes(states[previous].databases)
            if start.endswith("expected"):  # the ground truth's end of this turn
                env.expect(states[i].checkpoint.blobs, states[i].databases)
            twin = _twin(bench, conv, turns, i)
            assert env.state_hash() == twin.state_hash(), (sample.id, i, "start")
            assert env.session == twin.session, (sample.id, i)
            replay(env, turns[i].apis)
            replay(twin, turns[i].apis)
            assert env.state_hash() == twin.state_hash() == states[i].hash, (sample.id, i)
            # calls the turn does not make (a model's other choices): some change databases
            for call in others:
                got, want = env.call(call.name, call.arguments), twin.call(call.name,
                                                                           call.arguments)
                assert (got.response, got.exception) == (want.response, want.exception)
            assert env.state_hash() == twin.state_hash(), (sample.id, i, "other calls")
            actions += sum(bench.tools[c.name].action for c in others if c.name in bench.tools)
            checked += 1
            previous = i
        env.reset()
        assert env.state_hash() == initial, sample.id
    assert checked > 100 and actions > 100  # the data exercised both paths


def test_nothing_is_assumed_once_the_databases_are_handed_out(bench: Any) -> None:
    sample = next(s for s in bench.samples()
                  if sum(t.role == "assistant" for t in s.data.turns) > 1)
    conv = sample.data
    env = make_environment(conv, bench.databases, bench.plugins)
    env.databases  # noqa: B018  (tracking off: a claim cannot be honoured)
    env.assume_hashes({name: "not a hash" for name in env.database_hashes()})
    assert "not a hash" not in env.database_hashes().values()


def test_an_expected_database_is_recognised_only_by_an_equal_pickle() -> None:
    """The expected hash is taken only for a database whose pickle is the expected one (here
    a made-up hash shows when it is taken); equal values of other types (1, 1.0, True), and
    equal content in another key order, are hashed as always."""
    initial = {"Alarm": {"ann": {"a1": {"time": "06:00", "on": 1}}}}
    env = Environment([], initial)
    expected = Environment([], initial)
    expected.db("Alarm")["ann"]["a1"]["on"] = 0
    hashes = expected.database_hashes()
    blobs = expected.checkpoint().blobs
    for value, taken in [(0, True), (0.0, False), (False, False), (1, False)]:
        env.reset()
        env.expect(blobs, {**hashes, "Alarm": "made up"})
        env.db("Alarm")["ann"]["a1"]["on"] = value
        got = env.database_hashes()["Alarm"]
        if taken:
            assert got == "made up"
        else:
            fresh = Environment([], {"Alarm": env.db("Alarm")})  # hashes what it was given
            assert got == fresh.database_hashes()["Alarm"] != "made up"
    env.reset()
    env.expect(blobs, hashes)
    env.db("Alarm")["ann"] = {"a1": {"on": 0, "time": "06:00"}}  # same content, other order
    assert env.database_hashes() == hashes
    env.expect(blobs, {**hashes, "Alarm": "made up"})
    env.reset()  # forgets what was expected
    env.db("Alarm")["ann"]["a1"]["on"] = 0
    assert env.database_hashes() == hashes


def test_a_restored_world_loads_a_database_only_when_asked_and_loses_nothing() -> None:
    """restore() keeps each database as its pickle until a tool asks for it: hashing it,
    checkpointing it, peeking at it, handing out every database and resetting must all see
    the restored content (compared with a world that replayed the same change)."""
    initial = {"Alarm": {"ann": {"a1": {"time": "06:00"}}}, "Email": {"ann": {}}}
    source = Environment([], initial)
    source.db("Alarm")["ann"]["a2"] = {"time": "07:00"}
    source.db("Email")["bob"] = {}
    saved = source.checkpoint()
    want = source.database_hashes()
    for use in ["hash", "checkpoint", "peek", "db", "databases", "reset", "expect"]:
        env = Environment([], initial)
        env.peek("Alarm")  # the initial Alarm, read before the restore, must not survive it
        env.restore(saved)
        if use == "hash":
            assert env.database_hashes() == want and env.state_hash() == source.state_hash()
        elif use == "checkpoint":
            again = Environment([], initial)
            again.restore(env.checkpoint())
            assert again.databases == source.databases
        elif use == "peek":
            assert env.peek("Alarm") == source.peek("Alarm")
            assert env.database_hashes() == want
        elif use == "db":
            env.db("Email")["carol"] = {}
            assert env.databases["Email"] == {"ann": {}, "bob": {}, "carol": {}}
            assert env.databases["Alarm"] == source.databases["Alarm"]
        elif use == "databases":
            assert env.databases == source.databases
        elif use == "reset":
            env.reset()
            assert env.databases == initial
        else:
            env.expect(saved.blobs, {**want, "Alarm": "made up"})  # recognised unloaded
            assert env.database_hashes()["Alarm"] == "made up"
