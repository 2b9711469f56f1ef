"""The ACS LLM judge (the one LLM judge with ACS's template) against a fake OpenAI endpoint with
scripted verdicts, and the few-shot plan."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.data import ROOT as _DATA_ROOT
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, text_responder

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.benchmarks.acs.prompt import (
    RETRY_PROMPT,
    SYSTEM_PROMPT,
    TEMPLATE,
    as_bool,
    example_answer,
    variables,
)
from toolscore.benchmarks.acs.shots import check_shots, few_shot_plan, pick_shots
from toolscore.cli import app
from toolscore.judges.llm import LLMJudge, Verdict, decide
from toolscore.models import ModelClient, RetryPolicy, get_model
from toolscore.types import GenerateConfig

ACS = _DATA_ROOT / "acs" / "acs_dev.csv"
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
    if "C-vote" in row or "C-tie" in row:
        verdict = "true" if request.get("seed", 0) % 2 == 0 else "false"
        return _answer(f'{{"satisfied": {verdict}}}', request)
    raise RuntimeError("scripted failure")  # the fake server answers 500


def _client(srv: FakeOpenAIServer) -> ModelClient:
    return ModelClient(get_model("openai/fake", base_url=srv.base_url), cache=None,
                       retry=RetryPolicy(max_attempts=2, base_delay=0.01, budget_s=5),
                       timeout=10, role="judge")


def _judge_rows(rows: list[AcsRow], votes: int = 1, temperature: float = 0.0
                ) -> tuple[list[list[Verdict]], int]:
    with FakeOpenAIServer(scripted) as srv:
        judge = LLMJudge(_client(srv), config=GenerateConfig(temperature=temperature,
                                                             max_tokens=2048, seed=0))

        async def main() -> list[list[Verdict]]:
            return list(await asyncio.gather(*(judge.votes(TEMPLATE, variables(r), votes)
                                               for r in rows)))

        return asyncio.run(main()), srv.requests


def test_parse_verdict_is_robust_but_never_guesses() -> None:
    def label(text: str | None) -> bool | None:
        parsed = TEMPLATE.parse(text)
        return as_bool(parsed[0]) if isinstance(parsed, tuple) else None

    assert label('x {"a": {"b": 1}} then {"reasoning": "ok {}", "satisfied": true}') is True
    assert TEMPLATE.parse('{"reasoning": "ok {}", "satisfied": true}') == ("true", "ok {}")
    assert label('{"satisfied": "no"}') is False
    assert label('{"verdict": "unsatisfied"}') is False
    assert label('{"is_constraint_satisfied": 1}') is True
    assert label('{"reasoning": "cut off, "satisfied": false') is False  # loose
    # an object's own verdict wins over one quoted inside it
    assert label('{"reasoning": {"satisfied": true}, "satisfied": false}') is False
    for bad in ("", None, "satisfied", '{"satisfied": "maybe"}', '{"other": true}'):
        parsed = TEMPLATE.parse(bad)
        assert isinstance(parsed, str) and parsed


def test_llm_judge_end_to_end_with_retries_abstentions_and_errors() -> None:
    rows = [_row("1", "req A", "C-true"), _row("2", "req A", "C-false"),
            _row("3", "req B", "C-retry"), _row("4", "req B", "C-garbage"),
            _row("5", "req C", "C-boom")]
    out, served = _judge_rows(rows)
    by = {r.row_id: v for r, v in zip(rows, out, strict=True)}
    assert decide(by["1"]) == ("true", "2000 = 2000")
    assert decide(by["2"])[0] == "false"
    # unreadable once, asked again with the parse error, then readable
    assert decide(by["3"])[0] == "false" and len(by["3"][0].raw) == 2
    # unreadable on every attempt: an abstention with all raw answers kept, not a guess
    v4 = by["4"][0]
    assert v4.label is None and not v4.infra
    assert v4.raw == ["I am not sure {maybe}."] * 3
    assert "unparseable verdict after 3 attempt(s)" in (v4.error or "")
    assert decide(by["4"])[0] is None and decide(by["4"])[1].startswith("abstained: ")
    # infrastructure failure: flagged as such, not an abstention
    assert by["5"][0].label is None and by["5"][0].infra
    assert (by["5"][0].error or "").startswith("infrastructure")
    assert served == 1 + 1 + 2 + 3 + 2  # row 5: two attempts by the client's retry policy
    json.dumps([v.to_dict() for vs in out for v in vs])


def test_the_reask_names_the_parse_error() -> None:
    with FakeOpenAIServer(scripted) as srv:
        judge = LLMJudge(_client(srv))
        asyncio.run(judge.judge(TEMPLATE, variables(_row("3", "req B", "C-retry"))))
        second = srv.received[-1]["messages"]
    assert second[0]["content"] == SYSTEM_PROMPT
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[-1]["content"] == RETRY_PROMPT.format(error="no JSON object in reply")


def test_votes_take_the_majority_and_ties_abstain() -> None:
    rows = [_row("1", "req A", "C-vote"), _row("2", "req B", "C-tie")]
    (three,), _ = _judge_rows(rows[:1], votes=3, temperature=0.7)
    assert [as_bool(v.label) for v in three] == [True, False, True]
    label, reason = decide(three)
    assert label == "true" and reason.startswith("2/3 votes")
    (two,), _ = _judge_rows(rows[1:], votes=2, temperature=0.7)
    label, reason = decide(two)
    assert label is None and "tie" in reason


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
        check_shots(row, shots)
    assert few_shot_plan(rows, 3, seed=5) == plan  # seeded
    assert len({tuple(s.row_id for s in ex) for _, ex in plan}) == 2  # one set per fold
    shots = pick_shots(rows, 4, seed=1)
    assert [s.label for s in shots] == [True, False, True, False]
    assert len({s.request for s in shots}) == 4
    with pytest.raises(ValueError, match="shares its request"):
        check_shots(next(r for r in rows if r.request == shots[0].request), shots)
    turns = [m for s in shots[:2] for m in TEMPLATE.example(variables(s),
                                                             example_answer(s.label))]
    msgs = TEMPLATE.render(variables(rows[0]), turns)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(msgs[2].content or "") == {"satisfied": shots[0].label}
    assert json.loads(example_answer(False, "1990 < 2000")) == {"reasoning": "1990 < 2000",
                                                                 "satisfied": False}


@needs("acs")
def test_cli_few_shot_llm_judge_on_dev_rows(tmp_path: Path) -> None:
    from toolscore.benchmarks.acs.data import load_rows

    rows = {r.row_id: r for r in load_rows(ACS)}
    out = tmp_path / "run"
    with FakeOpenAIServer(text_responder('{"satisfied": true}')) as srv:
        res = CliRunner().invoke(app, [
            "judge-agreement", "--judge", "openai/fake", "--base-url", srv.base_url,
            "--data", str(ACS), "--shots", "2", "--shot-reasons", "--limit", "8",
            "--resamples", "20", "--no-cache", "--out", str(out), "--json"])
        received = list(srv.received)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["rows"] == 8 and doc["errors"] == 0 and doc["abstentions"] == 0
    assert doc["judge"] == "openai/fake" and doc["shots"] == 2
    assert doc["report"]["overall"]["metrics"]["predicted_pos_rate"]["value"] == 1.0
    assert len(received) == 8
    for req in received:
        assert [m["role"] for m in req["messages"]] == ["system"] + ["user", "assistant"] * 2 + [
            "user"]
    for line in (out / "samples.jsonl").read_text().splitlines():
        rec = json.loads(line)
        row = rows[rec["id"]]
        assert rec["output"]["votes"][0]["raw"] == ['{"satisfied": true}']
        assert rec["usage_by_role"].keys() == {"judge"}
        assert len(rec["output"]["shots"]) == 2
        for sid in rec["output"]["shots"]:
            assert (rows[sid].request, rows[sid].response) != (row.request, row.response)


def test_few_shot_plan_refuses_when_the_other_half_is_too_small() -> None:
    with pytest.raises(ValueError, match="too few rows"):
        few_shot_plan(_synthetic(1), 2)
    with pytest.raises(ValueError, match="too few rows"):
        few_shot_plan(_synthetic(2), 5)
    assert few_shot_plan(_synthetic(1), 0)[0][1] == []
