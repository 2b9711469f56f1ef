"""What the Environment's change tracking assumes of read-only tools, checked on ToolTalk's.

The Environment re-hashes and restores only the databases a turn may have changed, and counts a
database read by a read-only tool (``action=False``) as changed only when its number of
top-level keys moved (ToolTalk's lookups ``setdefault`` an empty entry for a user they do not
know yet). Here every read-only tool of every plugin is called with the ground-truth arguments
used for it anywhere in the released data, in the world of every conversation at the start of
every assistant turn and after every ground-truth action, and after each call the tracked hash
must equal the hash of a twin world that tracks nothing; a reset must give back the initial
hash. A read-only tool that edited a row in place would fail here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooltalk.data import make_environment
from toolscore.env.environment import Environment

ARGUMENT_SETS = 2  # per read-only tool: the conversation's own first, then the dataset's


@pytest.fixture(scope="module")
def bench() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), embedder="hashing")


def _ground_truth_arguments(bench: Any) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for sample in bench.samples():
        for turn in sample.data.turns:
            for call in getattr(turn, "apis", None) or []:
                args = call.arguments or {}
                found.setdefault(call.name, {})[json.dumps(args, sort_keys=True)] = args
    return {name: list(sets.values()) for name, sets in found.items()}


def _untracked(bench: Any, conversation: Any) -> Environment:
    env = make_environment(conversation, bench.databases, bench.plugins)
    env.databases  # noqa: B018  (handing out the dict turns change tracking off until reset)
    return env


def _probe(env: Environment, twin: Environment, where: str, read_only: list[str],
           arguments: dict[str, list[dict[str, Any]]], exercised: set[str]) -> int:
    """Every read-only tool with its argument sets in both worlds; the hashes must agree."""
    checked = 0
    for name in read_only:
        for args in arguments.get(name, [])[:ARGUMENT_SETS]:
            got = env.call(name, args)
            twin.call(name, args)
            if got.exception is None:
                exercised.add(name)
            assert env.state_hash() == twin.state_hash(), (where, name, args)
            checked += 1
    return checked


def test_read_only_tools_change_nothing_the_tracking_misses(bench: Any) -> None:
    read_only = sorted(t.name for p in bench.plugins for t in p.tools if not t.action)
    assert len(read_only) >= 9  # every plugin's lookups, from FindAlarms to HistoricWeather
    dataset_args = _ground_truth_arguments(bench)
    exercised: set[str] = set()
    checked = 0
    for sample in bench.samples():
        conv = sample.data
        env = make_environment(conv, bench.databases, bench.plugins)
        twin = _untracked(bench, conv)
        initial = twin.state_hash()
        own = {c.name: c.arguments or {} for t in conv.turns for c in getattr(t, "apis", [])}
        arguments = {name: ([own[name]] if name in own else []) + dataset_args.get(name, [])
                     for name in read_only}
        for turn in conv.turns:
            if turn.role != "assistant":
                continue
            checked += _probe(env, twin, sample.id, read_only, arguments, exercised)
            for call in turn.apis:
                env.call(call.name, call.arguments)
                twin.call(call.name, call.arguments)
                if env.tools[call.name].action:  # a read left the world as it was probed
                    checked += _probe(env, twin, sample.id, read_only, arguments, exercised)
        env.reset()
        assert env.state_hash() == initial, sample.id
    assert checked > 1000
    # every read-only tool the data uses answered (not only raised) somewhere
    assert exercised == set(read_only) & set(dataset_args)
