"""ToolEval's pass rate in the reference mode (the default), branch by branch, against a judge
that answers function calls over HTTP (see ``conftest.py``): what the judge is asked and shown,
the decision procedure, the printed rule (a 2-2 tie passes), the denominator (queries with no
answer and queries outside the test ids are not counted), judge errors (the reference stops;
here the query is left out and counted) and the run scored from its records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore import evaluate
from toolscore.benchmarks.tooleval.benchmark import ToolEvalBenchmark
from toolscore.benchmarks.tooleval.passrate import (
    ERROR,
    FAIL,
    PASS,
    UNSURE,
    Judgement,
    QueryResult,
    coin,
    judge_once,
    majority_pass,
    printed_pass,
    query_pass,
    summarize,
)
from toolscore.judges.llm import make_judge
from toolscore.runs.api import score
from toolscore.types import GenerateConfig, Message, ToolCall

KEY = ("S", "1")


# -- the printed rule and the label ------------------------------------------------------------
@pytest.mark.parametrize(("outcomes", "passed"), [
    ([PASS, PASS, FAIL, FAIL], True),  # 2-2: failed <= passed, a tie passes
    ([PASS, FAIL, FAIL, FAIL], False),
    ([PASS, PASS, PASS, FAIL], True),
    ([FAIL, FAIL, FAIL, FAIL], False),
    ([PASS], True), ([FAIL], False),
    ([PASS, PASS, PASS, ERROR], None),  # a judge error: the reference run would stop
])
def test_printed_rule(outcomes: list[str], passed: bool | None) -> None:
    assert printed_pass(outcomes, 0, KEY) is passed


def test_unsure_votes_are_the_same_coins_in_the_rule_and_the_label() -> None:
    outcomes = [PASS, UNSURE, UNSURE, FAIL]
    for seed in range(30):
        flips = [coin(seed, *KEY, i) for i in (1, 2)]
        passes = 1 + sum(flips)
        assert printed_pass(outcomes, seed, KEY) is (4 - passes <= passes)
        label = coin(seed, *KEY, "tie") if passes == 2 else passes > 2
        assert majority_pass(outcomes, seed, KEY, any_error=True) is label
    # a 2-2 tie passes in the printed rate, but the label (what the win rate reads) is a coin
    ties = [query_pass([PASS, PASS, FAIL, FAIL], s, KEY, "reference") for s in range(40)]
    assert {p for p, _ in ties} == {True} and {lab for _, lab in ties} == {True, False}
    assert query_pass([PASS, FAIL, ERROR], 0, KEY, "reference") == (None, None)
    # the stable mode skips an errored vote and takes the majority
    assert query_pass([PASS, PASS, ERROR], 0, KEY, "stable") == (True, True)


def _result(qid: str, outcomes: list[str], why: str = "judged") -> QueryResult:
    r = QueryResult("S", qid, [Judgement(o, why=why) for o in outcomes])
    r.passed, r.label = query_pass(outcomes, 0, r.key, "reference")
    return r


def test_reference_denominator_leaves_out_unanswered_and_judge_errors() -> None:
    rs = [_result("a", [PASS, PASS, FAIL, FAIL]), _result("b", [FAIL] * 4),
          _result("c", [FAIL] * 4, why="no answer"), _result("d", [PASS, ERROR, PASS, PASS]),
          _result("e", [FAIL] * 4, why="no Finish call")]
    s = summarize(rs, 4, "reference")
    assert (s["queries"], s["unanswered"], s["errors"], s["evaluated"], s["passed"]) == \
        (5, 1, 1, 3, 1)
    assert s["pass_rate"] == pytest.approx(1 / 3)
    for r in rs:
        r.passed, r.label = query_pass([j.outcome for j in r.judgements], 0, r.key, "stable")
    stable = summarize(rs, 4, "stable")  # no answer is a failure, an errored vote is skipped
    tied = coin(0, "S", "a", "tie")  # there a 2-2 tie is a coin
    assert (stable["evaluated"], stable["unanswered"], stable["passed"]) == (5, 1, 1 + tied)


# -- what the judge is asked, and each branch of one judgement --------------------------------
def test_function_calls_with_enums_at_the_reference_temperature(scripted: Any, sample_of: Any,
                                                                evaluator: Any) -> None:
    s = sample_of("1", "it is 42 #unsure", query="weather? #unsolvable")
    with FakeOpenAIServer(scripted) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url,
                           config=GenerateConfig(temperature=0.2, max_tokens=512))
        j = asyncio.run(judge_once(judge, s, 0))
    assert (j.outcome, j.answer_status, j.task_status) == (PASS, "Unsolved", "Unsolvable")
    first, second, task = scripted.requests
    for r, fn, key in ((first, "check_answer_status", "answer_status"),
                       (second, "parse_answer_status", "answer_status"),
                       (task, "check_task_solvable", "task_status")):
        assert r["tool_choice"] == {"type": "function", "function": {"name": fn}}
        # the release's sampling fields, whatever the judge's own config says; no seed
        assert (r["temperature"], r["max_tokens"], "seed" in r) == (0.2, 1000, False)
        [tool] = r["tools"]
        params = tool["function"]["parameters"]
        assert params["properties"][key]["enum"] == \
            evaluator[fn].function["parameters"]["properties"][key]["enum"]
        assert list(params["properties"]) == [key, "reason"]  # the reason comes after
        assert params["required"] == [key, "reason"]
        [message] = r["messages"]  # one user message, no system prompt
        assert message["role"] == "user"
    # the first look sees the raw final_answer string, the second the whole record as JSON,
    # the task the query and its tools as JSON, each in the release's own question
    assert first["messages"][0]["content"] == evaluator["check_answer_status"].text.format(
        query=s.query, answer=s.answer.final_answer)
    assert second["messages"][0]["content"] == evaluator["parse_answer_status"].text.format(
        query=s.query, answer=json.dumps(s.answer.as_record()))
    assert task["messages"][0]["content"] == evaluator["check_task_solvable"].text.format(
        task=json.dumps({"query": s.query, "available_tools": s.available_tools}))


@pytest.mark.parametrize(("text", "query", "outcome", "asked"), [
    ("#solved", "", PASS, ["check_answer_status"]),
    ("plain", "", FAIL, ["check_answer_status", "check_task_solvable"]),
    ("plain", "#unsure-task", UNSURE, ["check_answer_status", "check_task_solvable"]),
    ("plain", "#unsolvable", PASS, ["check_answer_status", "check_task_solvable"]),
    ("#unsure #later-solved", "", PASS, ["check_answer_status", "parse_answer_status"]),
    ("#unsure", "", FAIL, ["check_answer_status", "parse_answer_status",
                           "check_task_solvable"]),
    ("#unsure #still-unsure", "", UNSURE, ["check_answer_status", "parse_answer_status",
                                           "check_task_solvable"]),
    ("#unsure #still-unsure", "#unsure-task", UNSURE,
     ["check_answer_status", "parse_answer_status", "check_task_solvable"]),
    ("#unsure #still-unsure", "#unsolvable", PASS,
     ["check_answer_status", "parse_answer_status", "check_task_solvable"]),
])
def test_each_branch_of_one_judgement(scripted: Any, sample_of: Any, text: str, query: str,
                                      outcome: str, asked: list[str]) -> None:
    with FakeOpenAIServer(scripted) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        j = asyncio.run(judge_once(judge, sample_of("1", text, query=f"q {query}"), 0))
    assert j.outcome == outcome
    assert [r["tools"][0]["function"]["name"] for r in scripted.requests] == asked


def test_judge_free_branches_and_strict(scripted: Any, sample_of: Any) -> None:
    with FakeOpenAIServer(scripted) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        assert asyncio.run(judge_once(judge, sample_of("1", None))).why == "no answer"
        unfinished = asyncio.run(judge_once(judge, sample_of("2", "#solved", finish=False)))
        assert (unfinished.outcome, unfinished.why) == (FAIL, "no Finish call")
        assert scripted.requests == []
        gave_up = sample_of("3", "x", query="q #unsolvable", give_up=True)
        j = asyncio.run(judge_once(judge, gave_up))
        assert (j.outcome, j.why) == (PASS, "gave up")  # the reference's known defect
        assert [r["tools"][0]["function"]["name"] for r in scripted.requests] == [
            "check_task_solvable"]
        assert asyncio.run(judge_once(judge, gave_up, strict=True)).outcome == FAIL


def test_an_unusable_call_is_asked_again_afresh_then_an_error(sample_of: Any) -> None:
    replies = {"n": 0}

    def flaky(request: dict[str, Any]) -> dict[str, Any]:
        replies["n"] += 1
        args = "{not json" if replies["n"] == 1 else json.dumps({"answer_status": "Solved"})
        call = ToolCall("c", "check_answer_status", args)  # broken arguments, then valid
        return reply_to_completion(Message(role="assistant", tool_calls=[call]))

    seen: list[dict[str, Any]] = []

    def broken(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return reply_to_completion(Message(role="assistant", content='{"answer_status": '
                                                                     '"Solved"}'))

    def outside(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        call = ToolCall("c", "check_answer_status", json.dumps({"answer_status": "maybe"}))
        return reply_to_completion(Message(role="assistant", tool_calls=[call]))

    with FakeOpenAIServer(flaky) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        j = asyncio.run(judge_once(judge, sample_of("1", "x"), 0))
    [v] = j.verdicts
    assert j.outcome == PASS and v.ok and len(v.raw) == 2 and "{not json" in v.raw[0]
    with FakeOpenAIServer(broken) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        j = asyncio.run(judge_once(judge, sample_of("1", "x"), 0))
    [v] = j.verdicts
    assert (j.outcome, j.why) == (ERROR, "judge error")
    assert v.error == ("unparseable verdict after 3 attempt(s): no call of "
                       "check_answer_status")
    # each retry is the same question afresh (no correction turn), a new cache entry
    assert [len(r["messages"]) for r in seen] == [1, 1, 1]
    # a label outside the enum is not asked again: the reference's run stops there
    seen.clear()
    with FakeOpenAIServer(outside) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        j = asyncio.run(judge_once(judge, sample_of("1", "x"), 0))
    assert (j.outcome, len(seen)) == (ERROR, 1)


# -- a run: test ids, the denominator, judge errors, rescoring --------------------------------
def write_answers(tmp_path: Path, to_converted: Any, sample_of: Any) -> tuple[Path, Path]:
    samples = [sample_of("1", "#solved"), sample_of("2", "plain"),
               sample_of("3", "plain", query="q #unsolvable"), sample_of("4", None),
               sample_of("5", "#broken"), sample_of("6", "#solved"),
               sample_of("7", "x", finish=False)]
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "G1_tool.json").write_text(json.dumps(to_converted(samples)))
    ids = tmp_path / "test_ids"
    ids.mkdir()  # query 6 is not a test query; 9 has no answer entry at all
    (ids / "G1_tool.json").write_text(json.dumps({q: "" for q in "1234579"}))
    return answers, ids


def test_reference_run_end_to_end(tmp_path: Path, scripted: Any, sample_of: Any,
                                  to_converted: Any) -> None:
    answers, ids = write_answers(tmp_path, to_converted, sample_of)
    with FakeOpenAIServer(scripted) as srv:
        run = evaluate("tooleval", "openai/fake", base_url=srv.base_url, cache=None,
                       out=tmp_path / "run", answers=answers, test_ids=ids, votes=4)
    assert {r["tools"][0]["function"]["name"] for r in scripted.requests} == {
        "check_answer_status", "check_task_solvable"}
    assert {r["temperature"] for r in scripted.requests} == {0.2}
    m = run.metrics
    by = {r["output"]["query_id"]: r["scores"] for r in run.records}
    assert set(by) == set("123457")  # 6 is outside the test ids
    assert [by[q]["passed"] for q in "123457"] == [True, False, True, None, None, False]
    assert [by[q]["answered"] for q in "123457"] == [True, True, True, False, True, True]
    overall = m["overall"]
    # 4 has no answer (not counted), 5 is a judge error (left out, counted)
    assert (overall["queries"], overall["unanswered"], overall["errors"],
            overall["evaluated"], overall["passed"]) == (6, 1, 1, 4, 2)
    assert overall["pass_rate"] == 0.5
    assert m["mode"] == "reference" and m["questions"] == ["reference"]
    lines = ToolEvalBenchmark.summary_lines(m)
    assert any("ToolBench's evaluator, release: " in line and "function-calling" in line
               for line in lines)
    assert any("reference run would have stopped" in line for line in lines)
    assert any("without an answer: not counted" in line for line in lines)
    assert run.config.benchmark_config["temperature"] == 0.2
    # rescoring from the records alone: identical, and the other rule on the same verdicts
    before = (run.path / "scores.json").read_text()
    assert score(run.path).metrics == json.loads(before)
    stable = score(run.path, mode="stable").metrics
    assert stable["overall"]["evaluated"] == 5  # no answer = a failure there
    assert any("answered the reference questions" in line
               for line in ToolEvalBenchmark.summary_lines(stable))


def test_missing_test_id_file_is_one_line(tmp_path: Path, sample_of: Any,
                                          to_converted: Any) -> None:
    answers, _ = write_answers(tmp_path, to_converted, sample_of)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty/G1_tool.json: field '\(file\)': no test-id "
                                         "file for G1_tool"):
        evaluate("tooleval", "openai/fake", base_url="http://127.0.0.1:9/v1", cache=None,
                 out=tmp_path / "run", answers=answers, test_ids=tmp_path / "empty")


def test_a_configured_judge_template_goes_before_the_question(scripted: Any,
                                                               sample_of: Any) -> None:
    """The reference sends no system prompt; a judge configuration's template is the user's
    deviation, sent as one and named by the verdicts' judge id."""
    with FakeOpenAIServer(scripted) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url)
        judge.system, judge.judge_id = "Grade strictly.", "strict-judge"
        j = asyncio.run(judge_once(judge, sample_of("1", "#solved"), 0))
    [request] = scripted.requests
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][0]["content"] == "Grade strictly."
    assert {v.judge for v in j.verdicts} == {"strict-judge"}
