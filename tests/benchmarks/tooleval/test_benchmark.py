"""The tooleval benchmark in the one pipeline: a run judged by a scripted judge over HTTP gives
the numbers of ``pass_rate``, is rescored from its records alone, resumes judging only what is
missing, records a persistent judge failure as an errored sample, and checks its answers before
the first judge call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore import evaluate
from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.tooleval.data import load_answers
from toolscore.benchmarks.tooleval.passrate import pass_rate
from toolscore.judges.llm import make_judge
from toolscore.records import RunStore
from toolscore.runs.api import resume, score
from toolscore.types import Message

pytestmark = needs("tooleval")
SUBSETS = ["G1_tool", "G2_category"]
PER_SUBSET = 9


def converted() -> Path:
    from support.data import dataset

    return dataset("tooleval") / "converted" / "gpt-3.5-turbo_CoT"


def varied(request: dict[str, Any]) -> dict[str, Any]:
    """A judge whose verdicts differ between votes (the request's seed is the vote), so the
    reference rule's coin flips and ties and the stable rule's spread are all exercised:
    answer -> Solved if it has a digit (Unsure on odd votes), else Unsure; the second look ->
    Unsolved; task -> Unsolvable for "weather", Unsure on odd votes when the query length is
    even, else Solvable."""
    user = request["messages"][1]["content"]
    odd = int(request.get("seed") or 0) % 2 == 1
    query = user.split("\n\n")[1]
    if "every step" in user:
        key, label = "answer_status", "Unsolved"
    elif '"answer_status"' in user:
        answer = user.split("Final answer given to the user:\n")[1].split("\n\nRules:")[0]
        digit = any(ch.isdigit() for ch in answer)
        key, label = "answer_status", "Solved" if digit and not odd else "Unsure"
    else:
        key = "task_status"
        label = ("Unsolvable" if "weather" in query.lower() else
                 "Unsure" if odd and len(query) % 2 == 0 else "Solvable")
    text = f'{{"reason": "scripted", "{key}": "{label}"}}'
    return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=7)


def run_tooleval(srv: FakeOpenAIServer, out: Path, **options: Any) -> Any:
    options = {"answers": converted(), "subset": SUBSETS, "per_subset": PER_SUBSET,
               "votes": 4, "mode": "stable", **options}
    return evaluate("tooleval", "openai/fake", base_url=srv.base_url, out=out, cache=None,
                    **options)


def old_report(srv: FakeOpenAIServer, **kw: Any) -> dict[str, Any]:
    samples = load_answers(converted(), SUBSETS, PER_SUBSET)
    judge = make_judge("openai/fake", base_url=srv.base_url)
    return asyncio.run(pass_rate(judge, samples, votes=4, mode="stable", **kw)).report()


def test_run_gives_the_numbers_of_pass_rate(tmp_path: Path) -> None:
    with FakeOpenAIServer(varied) as srv:
        want = old_report(srv, seed=3)
        want_strict = old_report(srv, seed=3, strict=True)
        run = run_tooleval(srv, tmp_path / "run", seed=3)
    got = run.metrics
    assert got["overall"] == want["overall"] and got["subsets"] == want["subsets"]
    assert got["overall"]["queries"] == 2 * PER_SUBSET
    # the run exercised what the rules are about: unsure outcomes and a spread over votes
    outcomes = [o for r in run.records for o in r["scores"]["votes"]]
    assert "unsure" in outcomes and got["overall"]["stable"]["std"] > 0
    assert (got["votes"], got["seed"], got["mode"]) == (4, 3, "stable")
    # the judge's tokens are the judge's, counted per record
    assert {role for r in run.records for role in r["usage_by_role"]} == {"judge"}
    assert got["usage"]["calls"] == sum(r["usage"]["calls"] for r in run.records) > 0
    # strict from the stored verdicts alone: the numbers of a strict pass_rate, no model
    strict = score(run.path, strict=True)
    assert strict.metrics["overall"] == want_strict["overall"]
    assert strict.metrics["mode"] == "stable, strict"
    assert json.loads((run.path / "scores.json").read_text())["mode"] == "stable"


def test_rescoring_from_records_is_identical(tmp_path: Path) -> None:
    with FakeOpenAIServer(varied) as srv:
        run = run_tooleval(srv, tmp_path / "run")
        served = srv.requests
    before = (run.path / "scores.json").read_text()
    records = (run.path / "samples.jsonl").read_text()
    again = score(run.path)  # the server is gone: any model call would fail
    assert (run.path / "scores.json").read_text() == before
    assert (run.path / "samples.jsonl").read_text() == records
    assert again.metrics == json.loads(before) and served > 0


def test_resume_judges_only_the_missing_samples(tmp_path: Path) -> None:
    with FakeOpenAIServer(varied) as srv:
        full = run_tooleval(srv, tmp_path / "run")
        before = (full.path / "scores.json").read_text()
        lines = (full.path / "samples.jsonl").read_text().splitlines(keepends=True)
        kept, dropped = lines[::2], lines[1::2]
        (full.path / "samples.jsonl").write_text("".join(kept))
        needed = sum(json.loads(x)["usage"]["calls"] for x in dropped)
        served = srv.requests
        resumed = resume(full.path)
        assert srv.requests - served == needed > 0  # no cache: every call reached the judge
    assert resumed.summary is not None
    assert (resumed.summary["run_now"], resumed.summary["skipped"]) == (len(dropped), len(kept))
    assert (full.path / "scores.json").read_text() == before


def test_a_persistent_judge_failure_is_an_errored_sample_retried_on_resume(
        tmp_path: Path) -> None:
    with FakeOpenAIServer(varied, fault_plan={0: "400"}) as srv:  # every first attempt fails
        run = run_tooleval(srv, tmp_path / "run", votes=1)
        judged = [r for r in run.records if r["status"] == "ok"]
        failed = [r for r in run.records if r["status"] == "error"]
        assert failed and all(r["error"].startswith("infrastructure") for r in failed)
        assert all(r["output"]["judgements"][0]["why"] == "no Finish call" for r in judged)
        overall = run.metrics["overall"]
        assert run.metrics["errors"] == len(failed) == overall["errors"]
        assert overall["error_causes"] == {"infrastructure": len(failed)}
        assert overall["evaluated"] == len(judged)
        resumed = resume(run.path)  # the second sighting of each request gets through
    assert resumed.metrics["errors"] == 0
    assert resumed.metrics["overall"]["evaluated"] == 2 * PER_SUBSET


def test_bad_answers_fail_in_one_line_before_any_judge_call(tmp_path: Path) -> None:
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "G1_tool.json").write_text(json.dumps(
        {"7": {"query": "q", "available_tools": [], "answer": {
            "final_answer": "", "answer_details": [{"role": "robot", "message": "",
                                                    "next": []}]}}}))
    with FakeOpenAIServer(varied) as srv:
        with pytest.raises(ValueError) as e:
            evaluate("tooleval", "openai/fake", base_url=srv.base_url, cache=None,
                     out=tmp_path / "run", answers=tmp_path / "answers")
        assert srv.requests == 0
    assert str(e.value).endswith("G1_tool.json: record 7: field 'answer.answer_details': "
                                 "unknown role 'robot'")
    assert not RunStore(tmp_path / "run").exists()
    with pytest.raises(ValueError, match="option 'votes': must be at least 1"):
        make_benchmark("tooleval", answers=tmp_path / "answers", votes=0)


def test_a_record_reads_as_query_answer_and_verdicts(tmp_path: Path) -> None:
    with FakeOpenAIServer(varied) as srv:
        run = run_tooleval(srv, tmp_path / "run", votes=1)
    bench = make_benchmark("tooleval", answers=converted(), subset=SUBSETS, mode="stable")
    record = next(r for r in run.records if r["output"]["finished"])
    view = bench.record_view(record)
    roles = [m["role"] for m in view["messages"]]
    assert roles[:2] == ["user", "assistant"] and set(roles[2:]) == {"judge"}
    assert view["messages"][0]["content"] == record["output"]["query"]
    assert "answer_status" in view["messages"][2]["content"]
    assert view["summary"].startswith(("pass", "fail"))
    rows = type(bench).headline_rows(run.metrics)
    assert set(rows) == {*SUBSETS, "overall"}
    assert rows["overall"]["stable_mean"] == run.metrics["overall"]["stable"]["mean"]
    lines = type(bench).summary_lines(run.metrics)
    assert any("toolscore's own wording" in line for line in lines)
