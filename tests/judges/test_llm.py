"""The one LLM judge: verdicts parsed robustly (labels, JSON booleans, other spellings, a loose
reading where asked for), unreadable ones re-asked then recorded as errors, votes and shots."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore.judges.llm import (
    LLMJudge,
    PromptTemplate,
    Verdict,
    decide,
    majority,
    make_judge,
    parse_verdict,
)
from toolscore.models.client import ModelClient
from toolscore.models.limits.retry import RetryPolicy
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


# -- options of the one judge: boolean labels, other spellings, loose reading, shots ----------
YES_NO = PromptTemplate("yn", "sys", "Is {x} ok?", ("true", "false"), key="ok",
                        aliases={"true": ("yes",), "false": ("no", "not ok")},
                        other_keys=("verdict",), loose=True,
                        correction="Unreadable ({error}); reply {{\"{key}\": {labels}}}.")


def test_json_booleans_spellings_and_other_keys_are_labels() -> None:
    assert YES_NO.parse('{"ok": true, "reasoning": "fine"}') == ("true", "fine")
    assert YES_NO.parse('{"OK": "Not OK"}') == ("false", "")
    assert YES_NO.parse('{"verdict": "yes"}') == ("true", "")
    assert "ok=0 is not one of" in str(YES_NO.parse('{"ok": 0}'))  # 0 is only its text
    # booleans are not labels of a template that does not list them
    assert "not one of" in str(parse_verdict('{"status": true}', LABELS, "status"))


def test_the_last_complete_verdict_wins_and_an_object_outranks_what_it_quotes() -> None:
    assert YES_NO.parse('{"ok": true} on reflection {"ok": false}') == ("false", "")
    assert YES_NO.parse('{"reason": {"ok": true}, "ok": false}')[0] == "false"
    assert parse_verdict('{"answer": {"status": "Solved"}}', LABELS, "status") == ("Solved", "")


def test_loose_reading_only_where_asked_for() -> None:
    cut = '{"reason": "cut off, "ok": false'
    assert YES_NO.parse(cut) == ("false", "")
    plain = replace(YES_NO, loose=False)
    assert plain.parse(cut) == "no JSON object in reply"
    assert isinstance(YES_NO.parse('{"ok": "maybe"}'), str)


def test_shots_go_between_system_and_question_and_the_reask_names_the_error() -> None:
    shots = YES_NO.example({"x": "a"}, '{"ok": true}')
    with _server(["hmm", '{"ok": "no"}']) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        v = asyncio.run(judge.judge(YES_NO, {"x": "b"}, shots=shots))
        first, second = (r["messages"] for r in srv.received)
    assert v.label == "false" and v.raw == ["hmm", '{"ok": "no"}']
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert first[1]["content"] == "Is a ok?" and first[-1]["content"] == "Is b ok?"
    assert second[:4] == first and second[-1]["content"] == (
        'Unreadable (no JSON object in reply); reply {"ok": true, false}.')


def test_decide_tallies_votes_and_abstains_on_ties_or_nothing_readable() -> None:
    def v(label: str | None, reason: str = "", error: str | None = None) -> Verdict:
        return Verdict("t", label, reason, error=error)

    assert decide([v("A", "first A"), v("B"), v("A", "second A")]) == ("A", "2/3 votes; first A")
    assert decide([v("A", "only")]) == ("A", "only")
    assert decide([v("A"), v("B")]) == (None, "abstained: votes tie (A 1, B 1)")
    assert decide([v(None, error="unparseable")]) == (None, "abstained: unparseable")
    assert decide([]) == (None, "abstained: no votes")


def test_votes_stop_at_an_infrastructure_failure_and_flag_it() -> None:
    with FakeOpenAIServer(fault_plan={0: "400"}) as srv:
        from toolscore.models import get_model

        client = ModelClient(get_model("openai/fake", base_url=srv.base_url),
                             retry=RetryPolicy(max_attempts=1), role="judge")
        vs = asyncio.run(LLMJudge(client).votes(T, {"x": "q"}, 3))
    assert len(vs) == 1 and vs[0].infra and not vs[0].ok
    assert "infra" not in vs[0].to_dict()  # the stored shape is unchanged


def test_make_judge_counts_usage_as_the_judge() -> None:
    from toolscore.models.accounting import usage_ledger

    with _server(['{"status": "Solved"}']) as srv, usage_ledger() as ledger:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        asyncio.run(judge.judge(T, {"x": "q"}))
    assert set(ledger.by_role) == {"judge"} and judge.client.role == "judge"
