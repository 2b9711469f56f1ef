"""Property: ``Environment.execute`` never raises for anything the model sends, on ToolTalk's
tools (a small world of our own) and on the demo's: every call ends as a response or an
exception text, the world's state can still be hashed, and the call can be stored."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from properties.strategies import FUZZ, argument_texts, json_values, texts
from support.tooltalk import toy_env

from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooltalk.data import make_environment
from toolscore.benchmarks.tooltalk.protocol import stored_call
from toolscore.env.environment import Environment
from toolscore.types import ToolCall


def _demo_env() -> Environment:
    bench = make_benchmark("demo", embedder="hashing")
    (sample, *_) = bench.samples()
    return make_environment(sample.data, bench.databases, bench.plugins)


ENVS = {"tooltalk": toy_env(), "demo": _demo_env()}


def _calls(env: Environment) -> st.SearchStrategy[ToolCall]:
    """Calls to real tools with their real parameter names (and others), plus unknown tools."""
    names = sorted(env.tools)
    keys = sorted({k for t in env.tools.values() for k in t.parameters.get("properties", {})})
    arguments = st.one_of(
        st.dictionaries(st.sampled_from(keys) | texts, json_values, max_size=5).map(json.dumps),
        argument_texts)
    return st.builds(ToolCall, st.just("c1"), st.sampled_from(names) | texts, arguments)


def _check(env: Environment, calls: list[ToolCall]) -> None:
    env.reset()
    for call in calls:
        record, result = env.execute(call)
        # an exception text, or none and a response: the model's mistake is recorded
        assert record.exception is None or isinstance(record.exception, str)
        assert record.exception is None or record.response is None
        assert isinstance(result.content(), str)
        json.dumps(stored_call(record, call.arguments), ensure_ascii=False,
                   default=str).encode("utf-8")
    assert len(env.state_hash()) == 64


@pytest.mark.parametrize("world", sorted(ENVS))
def test_execute_never_raises(world: str) -> None:
    env = ENVS[world]

    @FUZZ
    @given(calls=st.lists(_calls(env), min_size=1, max_size=4))
    def run(calls: list[ToolCall]) -> None:
        _check(env, calls)

    run()


