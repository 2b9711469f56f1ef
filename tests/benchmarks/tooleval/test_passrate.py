"""Pass rate: the decision table, the stable mode's aggregation, and a stable-mode run over
released answers with a scripted JSON judge served over HTTP (malformed verdicts included). The
reference mode is tested in ``test_reference_mode.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.data import ROOT as _DATA_ROOT
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore.benchmarks.tooleval.data import Answer, Sample, Step, load_converted
from toolscore.benchmarks.tooleval.passrate import (
    ERROR,
    FAIL,
    PASS,
    UNSURE,
    Judgement,
    QueryResult,
    coin,
    decide,
    judge_once,
    majority_pass,
    pass_rate,
    summarize,
)
from toolscore.judges.llm import make_judge
from toolscore.types import Message

DATA = _DATA_ROOT / "tooleval"
G1_TOOL = DATA / "converted" / "gpt-3.5-turbo_CoT" / "G1_tool.json"
needs_data = needs("tooleval")


@pytest.mark.parametrize(("answer", "task", "outcome"), [
    ("Solved", None, PASS), ("Solved", "Solvable", PASS),
    ("Unsolved", "Solvable", FAIL), ("Unsolved", "Unsure", UNSURE),
    ("Unsolved", "Unsolvable", PASS),
    ("Unsure", "Solvable", UNSURE), ("Unsure", "Unsure", UNSURE), ("Unsure", "Unsolvable", PASS),
])
def test_decision_table(answer: str, task: str | None, outcome: str) -> None:
    assert decide(answer, task) == outcome


def test_decision_needs_a_task_status_unless_solved() -> None:
    with pytest.raises(ValueError):
        decide("Unsolved", None)


def test_majority_label_coins_and_errors() -> None:
    key = ("G1_tool", "1")
    assert majority_pass([PASS, PASS, FAIL], 0, key) is True
    assert majority_pass([FAIL, FAIL, PASS, ERROR], 0, key) is False
    assert majority_pass([ERROR, ERROR], 0, key) is None
    assert majority_pass([PASS, PASS, ERROR], 0, key, any_error=True) is None
    # unsure judgements are coin flips, seeded by (seed, subset, query, judgement)
    flips = [coin(3, *key, i) for i in range(3)]
    expected = sum([True, *flips[1:]]) * 2 > 3
    assert majority_pass([PASS, UNSURE, UNSURE], 3, key) is expected
    # a tied majority is a coin flip too
    assert majority_pass([PASS, FAIL], 5, key) is coin(5, *key, "tie")
    assert coin(1, "a") == coin(1, "a")
    assert {coin(s, "x") for s in range(40)} == {True, False}


def _result(qid: str, outcomes: list[str], seed: int = 0) -> QueryResult:
    r = QueryResult("S", qid, [Judgement(o) for o in outcomes])
    r.passed = majority_pass(outcomes, seed, r.key)
    return r


def test_stable_rule_mean_and_std_by_hand() -> None:
    # rep 0: (1 + 1) / 2 = 1.0; rep 1: (0 + 0.5) / 2 = 0.25; mean 0.625, pstdev 0.375
    rs = [_result("a", [PASS, FAIL]), _result("b", [PASS, UNSURE])]
    s = summarize(rs, 2)
    assert s["stable"]["per_repetition"] == [1.0, 0.25]
    assert s["stable"]["mean"] == pytest.approx(0.625)
    assert s["stable"]["std"] == pytest.approx(0.375)


def test_errors_leave_the_denominator_no_answer_stays() -> None:
    rs = [_result("a", [PASS, PASS, PASS]), _result("b", [ERROR, ERROR, ERROR]),
          _result("c", [FAIL, FAIL, FAIL]), _result("d", [PASS, ERROR, PASS])]
    s = summarize(rs, 3)
    assert (s["queries"], s["evaluated"], s["errors"], s["passed"]) == (4, 3, 1, 2)
    assert s["pass_rate"] == pytest.approx(2 / 3)
    # rep 1: a=1, c=0 (b, d errored) -> 0.5; reps 0 and 2: a=1, c=0, d=1 -> 2/3
    assert s["stable"]["per_repetition"] == pytest.approx([2 / 3, 0.5, 2 / 3])


# -- a scripted judge over HTTP ---------------------------------------------------------------
def verdict(key: str, label: str) -> str:
    return f'{{"reason": "scripted", "{key}": "{label}"}}'


class Judge:
    """Answers by rule, so the expected outcome of every query can be derived by hand:
    answer -> Solved when the final answer has a digit, else Unsure; second look -> Unsolved;
    task -> Unsolvable when the query mentions "weather", else Solvable. Queries listed in
    ``garbled`` get malformed replies (``always``: every time; else only the first attempt)."""

    def __init__(self, garbled: tuple[str, ...] = (), always: bool = False):
        self.garbled, self.always = garbled, always
        self.requests = 0

    def label(self, user: str) -> str:
        query = user.split("\n\n")[1]
        if "the whole path" in user or "every step" in user:
            return verdict("answer_status", "Unsolved")
        if '"answer_status"' in user:
            answer = user.split("Final answer given to the user:\n")[1].split("\n\nRules:")[0]
            good = any(ch.isdigit() for ch in answer)
            return verdict("answer_status", "Solved" if good else "Unsure")
        return verdict("task_status", "Unsolvable" if "weather" in query.lower() else "Solvable")

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        msgs = request["messages"]
        user = msgs[1]["content"]
        text = self.label(user)
        if any(g in user for g in self.garbled) and (self.always or len(msgs) == 2):
            text = "I believe the answer is solved."  # no JSON at all
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=5)


def expected(s: Sample) -> str:
    a = s.answer
    if a is None or not a.finished:
        return FAIL
    if not a.gave_up and any(ch.isdigit() for ch in a.text.strip()):
        return PASS
    return PASS if "weather" in s.query.lower() else FAIL


@needs_data
def test_pass_rate_end_to_end_on_released_answers() -> None:
    samples = load_converted(G1_TOOL, limit=40)
    script = Judge()
    with FakeOpenAIServer(script) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        result = asyncio.run(pass_rate(judge, samples, votes=3, seed=0, mode="stable"))
    want = {s.query_id: expected(s) == PASS for s in samples}
    assert {r.query_id: r.passed for r in result.results} == want
    rep = result.report()
    overall = rep["overall"]
    assert overall["queries"] == 40 and overall["errors"] == 0
    assert overall["pass_rate"] == pytest.approx(sum(want.values()) / 40)
    assert overall["stable"]["std"] == 0.0  # a deterministic judge agrees with itself
    assert rep["usage"]["calls"] == script.requests == judge.usage.calls
    for r in result.results:  # every judged verdict kept its raw output
        assert all(v.raw and v.ok for j in r.judgements for v in j.verdicts)


@needs_data
def test_malformed_verdicts_are_retried_then_recorded_as_errors() -> None:
    samples = [s for s in load_converted(G1_TOOL) if s.answer and s.answer.finished
               and not s.answer.gave_up][:4]
    flaky, broken = samples[0].query[:60], samples[1].query[:60]
    with FakeOpenAIServer(Judge(garbled=(flaky,))) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        ok = asyncio.run(pass_rate(judge, samples, votes=1, mode="stable"))
    first = ok.results[0].judgements[0].verdicts[0]
    assert first.ok and len(first.raw) == 2 and first.raw[0].startswith("I believe")
    with FakeOpenAIServer(Judge(garbled=(broken,), always=True)) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        bad = asyncio.run(pass_rate(judge, samples, votes=3, mode="stable"))
    r = bad.results[1]
    assert r.passed is None and [j.outcome for j in r.judgements] == [ERROR] * 3
    v = r.judgements[0].verdicts[0]
    assert v.label is None and "unparseable" in (v.error or "") and len(v.raw) == 3
    overall = bad.report()["overall"]
    assert (overall["queries"], overall["evaluated"], overall["errors"]) == (4, 3, 1)
    assert overall["error_causes"] == {"unparseable verdict after 3 attempt(s)": 3}


def test_no_finish_and_no_answer_fail_without_a_judge_and_strict_give_up() -> None:
    calls = {"n": 0}

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        return reply_to_completion(Message(role="assistant",
                                           content=verdict("task_status", "Unsolvable")))

    finish = Step("tool", name="Finish", arguments='{"return_type": "give_up_and_restart"}')
    give_up = Sample("1", "q", [], Answer("m", '{"return_type": "give_up_and_restart"}',
                                          [Step("user", "q"), finish]))
    no_finish = Sample("2", "q", [], Answer("m", "", [Step("user", "q"), Step("tool", name="f")]))
    with FakeOpenAIServer(responder) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        assert asyncio.run(judge_once(judge, Sample("3", "q", [], None))).why == "no answer"
        assert asyncio.run(judge_once(judge, no_finish)).outcome == FAIL
        assert calls["n"] == 0
        ref = asyncio.run(judge_once(judge, give_up, mode="stable"))
        assert (ref.outcome, ref.answer_status, ref.task_status) == (PASS, "Unsolved",
                                                                     "Unsolvable")
        assert calls["n"] == 1  # only the task was judged
        assert asyncio.run(judge_once(judge, give_up, strict=True, mode="stable")).outcome == FAIL
        assert calls["n"] == 1


@needs_data
def test_rescoring_from_the_cache_is_identical_and_free(tmp_path: Path) -> None:
    from toolscore.models.cache import ResponseCache

    samples = load_converted(G1_TOOL, limit=15)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    with FakeOpenAIServer(Judge()) as srv:
        first = asyncio.run(pass_rate(make_judge("openai/fake", base_url=srv.base_url,
                                                 cache=cache), samples, votes=3,
                                       mode="stable"))
        served = srv.requests
        again = asyncio.run(pass_rate(make_judge("openai/fake", base_url=srv.base_url,
                                                 cache=cache), samples, votes=3,
                                       mode="stable"))
        assert srv.requests == served  # nothing new reached the judge
    a, b = first.report(), again.report()
    assert a["overall"] == b["overall"]
    assert a["usage"]["calls"] == served and b["usage"]["calls"] == 0
    assert b["usage"]["cached_calls"] == served
