"""The LLM judge: verdicts parsed robustly, unreadable ones retried then recorded as errors."""

from __future__ import annotations

import asyncio
from typing import Any

from toolscore.judges.llm import LLMJudge, PromptTemplate, majority, make_judge, parse_verdict
from toolscore.models.client import ModelClient
from toolscore.models.retry import RetryPolicy
from toolscore.testing.openai_server import FakeOpenAIServer, reply_to_completion
from toolscore.types import Message

LABELS = ("Solved", "Unsolved", "Unsure")
T = PromptTemplate("t", "sys {x}", 'Is {x} solved? Reply {{"status": ...}}', LABELS, key="status")


def test_parse_plain_fenced_prose_and_case() -> None:
    assert parse_verdict('{"status": "Solved", "reason": "r"}', LABELS, "status") == ("Solved",
                                                                                      "r")
    text = 'Let me think.\n```json\n{"Status": "un solved", "reason": "missing"}\n```\nDone.'
    assert parse_verdict(text, LABELS, "status") == ("Unsolved", "missing")
    assert parse_verdict('first {"status": "Unsure"} then {"status": "Solved"}', LABELS,
                         "status") == ("Solved", "")


def test_parse_errors_say_why() -> None:
    assert parse_verdict("", LABELS, "status") == "empty reply"
    assert parse_verdict("Solved!", LABELS, "status") == "no JSON object in reply"
    assert "not one of" in str(parse_verdict('{"status": "Maybe"}', LABELS, "status"))
    assert "no 'status' field" in str(parse_verdict('{"label": "Solved"}', LABELS, "status"))


def test_majority_ignores_errors_and_ties_are_none() -> None:
    assert majority(["A", "B", "A", None]) == "A"
    assert majority(["A", "B"]) is None
    assert majority([None, None]) is None


def _server(script: list[str]) -> FakeOpenAIServer:
    """Replies from ``script`` in order (the last one repeats)."""
    state = {"n": 0}

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        text = script[min(state["n"], len(script) - 1)]
        state["n"] += 1
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=7)

    return FakeOpenAIServer(responder)


def test_unparseable_reply_is_retried_with_a_correction_then_kept() -> None:
    with _server(["I think it is solved.", '{"status": "Solved", "reason": "ok"}']) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        v = asyncio.run(judge.judge(T, {"x": "q"}))
        second = srv.received[-1]["messages"]
    assert v.label == "Solved" and v.error is None
    assert v.raw == ["I think it is solved.", '{"status": "Solved", "reason": "ok"}']
    assert v.usage.calls == 2 and judge.usage.calls == 2 and v.usage.input_tokens == 14
    assert len(second) == 4 and "could not be read" in second[-1]["content"]


def test_persistently_unparseable_is_an_error_never_a_label() -> None:
    with _server(["nope"]) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        v = asyncio.run(judge.judge(T, {"x": "q"}))
    assert v.label is None and not v.ok
    assert v.error is not None and "unparseable verdict after 3 attempt(s)" in v.error
    assert v.raw == ["nope"] * 3
    assert v.to_dict()["raw"] == ["nope"] * 3


def test_infrastructure_failure_is_an_error_verdict() -> None:
    with FakeOpenAIServer(fault_plan={0: "400"}) as srv:
        from toolscore.models import get_model

        client = ModelClient(get_model("openai/fake", base_url=srv.base_url),
                             retry=RetryPolicy(max_attempts=1), role="judge")
        v = asyncio.run(LLMJudge(client).judge(T, {"x": "q"}))
    assert v.label is None and v.error is not None and v.error.startswith("infrastructure")


def test_votes_are_distinct_requests() -> None:
    with _server(['{"status": "Solved"}', '{"status": "Unsolved"}', '{"status": "Solved"}']) as s:
        judge = make_judge("openai/fake", base_url=s.base_url)
        vs = asyncio.run(judge.votes(T, {"x": "q"}, 3))
    assert [v.label for v in vs] == ["Solved", "Unsolved", "Solved"]
    assert [v.vote for v in vs] == [0, 1, 2]
    assert majority([v.label for v in vs]) == "Solved"
