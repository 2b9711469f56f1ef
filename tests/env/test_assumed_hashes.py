"""``Environment.assume_hashes``: the reference protocol's shortcut must never change a hash.

Each turn of ToolTalk's reference protocol starts from reset + the ground truth of the earlier
turns, and the runner tells the world that this state has the database hashes the ground
truth's own world computed (``final_state.TruthHashes``), so that only what the model changes
is hashed again. Here, for every conversation and every assistant turn, the world that assumed
those hashes must give the same state hash as a twin that tracks nothing: right after the
start, after the turn's ground-truth calls (which must then equal the expected hash), after
further calls of the conversation that change other databases, and after a reset.
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


def test_assumed_hashes_agree_with_full_hashing(bench: Any) -> None:
    truth = TruthHashes()
    checked = actions = 0
    for sample in bench.samples():
        conv, turns = sample.data, sample.data.turns
        expected = truth.get(sample.id, lambda c=conv: bench.environment(c), turns)
        parts = truth.databases(sample.id)
        env = make_environment(conv, bench.databases, bench.plugins)
        initial = env.state_hash()
        previous = None
        others = [c for t in turns if t.role == "assistant" for c in t.apis]
        for i in protocol.assistant_turns(turns):
            protocol.start_turn(env, turns, i)
            if previous is not None:
                env.assume_hashes(parts[previous])
            twin = _twin(bench, conv, turns, i)
            assert env.state_hash() == twin.state_hash(), (sample.id, i, "start")
            replay(env, turns[i].apis)
            replay(twin, turns[i].apis)
            assert env.state_hash() == twin.state_hash() == expected[i], (sample.id, i)
            # calls the turn does not make (a model's other choices): some change databases
            replay(env, others)
            replay(twin, others)
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
