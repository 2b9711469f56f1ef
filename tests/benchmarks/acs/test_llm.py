"""The ACS LLM judge end to end against a fake OpenAI endpoint with scripted verdicts."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.cli import app
from toolscore.judges.acs_llm import (
    RETRY_PROMPT,
    AcsLLMJudge,
    JudgeVerdict,
    few_shot_plan,
    parse_verdict,
    pick_shots,
)
from toolscore.models import ModelClient, RetryPolicy, get_model
from toolscore.testing.openai_server import FakeOpenAIServer, text_responder

ACS = Path(os.environ.get("TOOLSCORE_DATA", "/work/shared/datasets")) / "acs" / "acs_dev.csv"
RETRY_HEAD = RETRY_PROMPT.split("(")[0]


def _row(rid: str, request: str, constraint: str, label: bool = True) -> AcsRow:
    return AcsRow(rid, request, f"response to {request}", constraint, label, "schedule")


def _answer(text: str, request: dict[str, Any]) -> dict[str, Any]:
    return text_responder(text)(request)


def scripted(request: dict[str, Any]) -> dict[str, Any]:
    """Verdicts keyed on the constraint; retries and votes visible in the request."""
    msgs = request["messages"]
    row = next(m["content"] for m in reversed(msgs) if m["content"].startswith("## User"))
    retried = msgs[-1]["content"].startswith(RETRY_HEAD)
    if "C-true" in row:
        return _answer('Sum is 2000.\n{"reasoning": "2000 = 2000", "satisfied": true}', request)
    if "C-false" in row:
        return _answer('```json\n{"reasoning": "1990 < 2000", "satisfied": "false"}\n```',
                       request)
    if "C-retry" in row:
        return _answer('{"satisfied": false}' if retried else "It looks fine to me.", request)
    if "C-garbage" in row:
        return _answer("I am not sure {maybe}.", request)
    if "C-vote" in row:
        verdict = "true" if request.get("seed", 0) % 2 == 0 else "false"
        return _answer(f'{{"satisfied": {verdict}}}', request)
    if "C-tie" in row:
        verdict = "true" if request.get("seed", 0) % 2 == 0 else "false"
        return _answer(f'{{"satisfied": {verdict}}}', request)
    raise RuntimeError("scripted failure")  # the fake server answers 500


def _client(srv: FakeOpenAIServer) -> ModelClient:
    return ModelClient(get_model("openai/fake", base_url=srv.base_url), cache=None,
                       retry=RetryPolicy(max_attempts=2, base_delay=0.01, budget_s=5),
                       timeout=10, role="judge")


def _judge_rows(rows: list[AcsRow], **options: Any) -> tuple[list[JudgeVerdict], int]:
    with FakeOpenAIServer(scripted) as srv:
        judge = AcsLLMJudge(_client(srv), **options)
        out = asyncio.run(judge.judge_all([(r, []) for r in rows]))
        return out, srv.requests


def test_parse_verdict_is_robust_but_never_guesses() -> None:
    assert parse_verdict('x {"a": {"b": 1}} then {"reasoning": "ok {}", "satisfied": true}')[0]
    assert parse_verdict('{"satisfied": "no"}')[0] is False
    assert parse_verdict('{"verdict": "unsatisfied"}')[0] is False
    assert parse_verdict('{"reasoning": "cut off, "satisfied": false')[0] is False  # loose
    for bad in ("", None, "satisfied", '{"satisfied": "maybe"}', '{"other": true}'):
        label, _, error = parse_verdict(bad)
        assert label is None and error


def test_llm_judge_end_to_end_with_retries_abstentions_and_errors() -> None:
    rows = [_row("1", "req A", "C-true"), _row("2", "req A", "C-false"),
            _row("3", "req B", "C-retry"), _row("4", "req B", "C-garbage"),
            _row("5", "req C", "C-boom")]
    out, served = _judge_rows(rows, parse_retries=2)
    by = {v.row_id: v for v in out}
    assert by["1"].label is True and by["1"].reason == "2000 = 2000"
    assert by["2"].label is False
    # unreadable once, asked again with the parse error, then readable
    assert by["3"].label is False and len(by["3"].votes[0].raw) == 2
    # unreadable on every attempt: an abstention with all raw answers kept, not a guess
    v4 = by["4"]
    assert v4.label is None and v4.abstained and not v4.error
    assert v4.votes[0].raw == ["I am not sure {maybe}."] * 3
    assert "unreadable after 3 attempt(s)" in v4.votes[0].error
    # infrastructure failure: an error, not an abstention
    assert by["5"].label is None and not by["5"].abstained and "infrastructure" in by["5"].error
    assert served == 1 + 1 + 2 + 3 + 2  # row 5: two attempts by the client's retry policy
    json.dumps([v.to_dict() for v in out])


def test_votes_take_the_majority_and_ties_abstain() -> None:
    rows = [_row("1", "req A", "C-vote"), _row("2", "req B", "C-tie")]
    three, _ = _judge_rows(rows[:1], votes=3, temperature=0.7)
    assert three[0].label is True and [v.label for v in three[0].votes] == [True, False, True]
    assert three[0].reason.startswith("2/3 votes")
    two, _ = _judge_rows(rows[1:], votes=2, temperature=0.7)
    assert two[0].label is None and "tie" in two[0].reason


def _synthetic(n_requests: int = 10) -> list[AcsRow]:
    return [_row(f"{q}-{c}", f"request {q}", f"constraint {c}", label=(q + c) % 2 == 0)
            for q in range(n_requests) for c in range(4)]


def test_few_shot_examples_never_share_a_request_with_the_judged_row() -> None:
    rows = _synthetic()
    plan = few_shot_plan(rows, 3, seed=5)
    assert [r for r, _ in plan] == rows
    for row, shots in plan:
        assert len(shots) == 3
        assert all(s.request != row.request for s in shots)
    assert few_shot_plan(rows, 3, seed=5) == plan  # seeded
    assert len({tuple(s.row_id for s in ex) for _, ex in plan}) == 2  # one set per fold
    shots = pick_shots(rows, 4, seed=1)
    assert [s.label for s in shots] == [True, False, True, False]
    assert len({s.request for s in shots}) == 4
    judge = AcsLLMJudge(ModelClient(get_model("oracle")), shots=shots)
    with pytest.raises(ValueError, match="shares its request"):
        asyncio.run(judge.judge(next(r for r in rows if r.request == shots[0].request)))
    msgs = judge.messages(rows[0], shots[:2])
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(msgs[2].content or "") == {"satisfied": shots[0].label}


@pytest.mark.skipif(not ACS.is_file(), reason="ACS dev data not present")
def test_cli_few_shot_llm_judge_on_dev_rows(tmp_path: Path) -> None:
    from toolscore.benchmarks.acs.data import load_rows

    rows = {r.row_id: r for r in load_rows(ACS)}
    out = tmp_path / "verdicts.jsonl"
    with FakeOpenAIServer(text_responder('{"satisfied": true}')) as srv:
        res = CliRunner().invoke(app, [
            "judge-agreement", "--judge", "openai/fake", "--base-url", srv.base_url,
            "--data", str(ACS), "--shots", "2", "--shot-reasons", "--limit", "8",
            "--resamples", "20", "--no-cache", "--out", str(out), "--json"])
        received = list(srv.received)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["rows"] == 8 and doc["errors"] == 0 and doc["abstentions"] == 0
    assert doc["report"]["overall"]["metrics"]["predicted_pos_rate"]["value"] == 1.0
    assert len(received) == 8
    for req in received:
        assert [m["role"] for m in req["messages"]] == ["system"] + ["user", "assistant"] * 2 + [
            "user"]
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        row = rows[rec["row_id"]]
        assert rec["votes"][0]["raw"] == ['{"satisfied": true}']
        assert len(rec["shots"]) == 2
        for sid in rec["shots"]:
            assert (rows[sid].request, rows[sid].response) != (row.request, row.response)


def test_few_shot_plan_refuses_when_the_other_half_is_too_small() -> None:
    with pytest.raises(ValueError, match="too few rows"):
        few_shot_plan(_synthetic(1), 2)
    with pytest.raises(ValueError, match="too few rows"):
        few_shot_plan(_synthetic(2), 5)
    assert few_shot_plan(_synthetic(1), 0)[0][1] == []
