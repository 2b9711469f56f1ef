"""An agent under the free-running protocol reaches its tools and nothing else: a scripted
agent that makes a wrong call, then tries to reset (or end, or start afresh) its episode
through every address it was given, is refused everywhere and its mistake still counts. An
agent that fails a message after acting is played again, and the attempt thrown away stays
in the record with its calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from serve.scripted_agent import ScriptedAgent, Step
from support.data import dataset

pytest.importorskip("mcp")

from toolscore.benchmarks.registry import make_benchmark  # noqa: E402
from toolscore.benchmarks.tooltalk.protocol import assistant_turns  # noqa: E402
from toolscore.runs.api import evaluate  # noqa: E402


@pytest.fixture(scope="module")
def easy() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), split="easy", embedder="hashing")


def scripted_turns(bench: Any) -> tuple[list[list[tuple[str, dict[str, Any]]]], int,
                                        tuple[str, dict[str, Any]]]:
    """The first easy conversation's ground truth per prompted turn (as an MCP client sends
    it), the index of the first turn with an action, and a wrong version of that action."""
    conversation = bench.samples()[0].data
    turns = []
    for index in assistant_turns(conversation.turns):
        turns.append([(c.name, {k: v for k, v in (c.arguments or {}).items()
                                if k not in bench.tools[c.name].hidden})
                      for c in conversation.turns[index].apis])
    first = next(i for i, calls in enumerate(turns)
                 if any(bench.tools[n].action for n, _ in calls))
    name, arguments = next((n, a) for n, a in turns[first] if bench.tools[n].action)
    key = next(k for k, v in arguments.items() if isinstance(v, str))
    wrong = {**arguments, key: "07:30:00" if "time" in key else arguments[key] + " (changed)"}
    return turns, first, (name, wrong)


def run(agent: ScriptedAgent, out: Path) -> dict[str, Any]:
    with agent.running() as model:
        done = evaluate("tooltalk", model, data=dataset("tooltalk"), split="easy", limit=1,
                        embedder="hashing", protocol="free-running", out=out, cache=None,
                        max_concurrency=1)
    (record,) = done.records
    return record


def test_an_agent_cannot_erase_its_mistakes(easy: Any, tmp_path: Path) -> None:
    turns, first, wrong = scripted_turns(easy)

    def script(session: int, message: int) -> Step:
        calls = turns[message - 1]
        if message - 1 == first:
            return Step(calls=[wrong], erase=True, after=calls)
        return Step(calls=calls)

    agent = ScriptedAgent(script)
    record = run(agent, tmp_path / "run")
    assert record["status"] == "ok" and len(agent.sessions) == 1
    assert record["scores"]["bad_actions"] == 1 and record["scores"]["success"] is False
    assert agent.tried and all(status >= 400 for _, status in agent.tried), agent.tried
    assert record["scores"]["final_state_success"] is False  # the wrong action stayed
    calls = [(c["tool"], c["arguments"]) for c in record["output"]["calls"]]
    assert wrong[0] in [name for name, _ in calls]
    assert len(calls) == sum(map(len, turns)) + 1
    assert record["output"]["attempts"] == 1 and record["output"]["discarded_attempts"] == []


def test_a_failed_attempt_leaves_its_trace(easy: Any, tmp_path: Path) -> None:
    turns, first, wrong = scripted_turns(easy)

    def script(session: int, message: int) -> Step:
        if session == 1:
            return Step(calls=[wrong], fail=True)  # acts, then answers 503
        return Step(calls=turns[message - 1])

    agent = ScriptedAgent(script)
    record = run(agent, tmp_path / "run")
    assert len(agent.sessions) == 2 and record["status"] == "ok"
    output = record["output"]
    assert output["attempts"] == 2
    (discarded,) = output["discarded_attempts"]
    assert discarded["attempt"] == 1 and "HTTP 503" in discarded["ended_by"]
    assert [(c["tool"], {k: c["arguments"][k] for k in wrong[1]}) for c in discarded["calls"]
            ] == [wrong]
    assert discarded["episode"] != output["episode"]
    assert wrong not in [(c["tool"], c["arguments"]) for c in output["calls"]]


def test_attempts_that_all_fail_say_what_each_did(easy: Any, tmp_path: Path) -> None:
    _, _, wrong = scripted_turns(easy)
    agent = ScriptedAgent(lambda session, message: Step(calls=[wrong], fail=True))
    record = run(agent, tmp_path / "run")
    assert record["status"] == "error" and len(agent.sessions) == 3
    assert "HTTP 503" in record["error"]
    assert "tool calls made in each: 1, 1, 1" in record["error"]
