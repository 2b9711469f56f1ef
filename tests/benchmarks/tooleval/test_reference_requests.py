"""Does toolscore's reference mode send the judge what ToolBench's own tooleval sends, and
decide what it decides? Against the recordings of ``tests/fixtures/tooleval_requests``
(made by its ``make_fixtures.py``: the reference run on the same answers with the same scripted
judge), request by request, in the order the reference sent them.

Asked for the legacy ``functions`` request shape (``call_api``), toolscore's requests are the
reference's; asked for ``tools`` (what ``auto`` sends to an endpoint other than OpenAI's), the
API's framing is the one difference: the comparison reads both in the legacy shape and counts
the framing apart. The model name is the user's choice and is not compared.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer
from support.testing.tooleval_judge import ScriptedToolEvalJudge, differences
from support.tooleval_release import write_release

from toolscore.benchmarks.tooleval.data import load_converted
from toolscore.benchmarks.tooleval.passrate import FAIL, PASS, UNSURE, pass_rate
from toolscore.benchmarks.tooleval.release import load_evaluator
from toolscore.benchmarks.tooleval.winrate import CANDIDATE, REFERENCE, TIE
from toolscore.benchmarks.tooleval.winrate_reference import compare_rounds
from toolscore.judges.llm import make_judge
from toolscore.types import GenerateConfig

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tooleval_requests"
SUBSETS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category",
           "G3_instruction")
MODELS = ("ref_model", "cand_model")
ALLOWED = {"functions": set(), "tools": {"api shape"}}  # by the request shape asked for


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads((FIXTURES / "reference.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_evaluator(write_release(tmp_path_factory.mktemp("tooleval")))


def answers(model: str) -> list[Any]:
    return [s for subset in SUBSETS
            for s in load_converted(FIXTURES / "answers" / model / f"{subset}.json")]


def compare_requests(reference: list[dict[str, Any]],
                     ours: list[dict[str, Any]]) -> Counter[str]:
    """Differing requests per category, in arrival order; a missing or extra request counts
    in every category."""
    counts: Counter[str] = Counter()
    for a, b in zip(reference, ours, strict=False):
        counts.update(differences(a, b))
    if len(reference) != len(ours):
        counts.update({c: abs(len(reference) - len(ours)) for c in ("count",)})
    return counts


def bodies(recorded: dict[str, Any], phase: str) -> list[dict[str, Any]]:
    return [recorded["bodies"][k] for k in recorded["phases"][phase]["requests"]]


def run_pass_rate(model: str, evaluator: Any,
                  call_api: str = "functions") -> tuple[Any, list[dict[str, Any]]]:
    judge_fn = ScriptedToolEvalJudge()
    with FakeOpenAIServer(judge_fn) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url,
                           config=GenerateConfig(temperature=evaluator.temperature,
                                                 call_api=call_api))
        result = asyncio.run(pass_rate(judge, answers(model), votes=4, max_concurrency=1,
                                       mode="reference", evaluator=evaluator))
    return result, judge_fn.requests


@pytest.mark.parametrize("call_api", ["functions", "tools"])
@pytest.mark.parametrize("model", MODELS)
def test_pass_rate_requests_and_decisions_match_the_reference(
        model: str, call_api: str, recorded: dict[str, Any], evaluator: Any) -> None:
    result, ours = run_pass_rate(model, evaluator, call_api)
    reference = bodies(recorded, f"pass_rate/{model}")
    assert set(compare_requests(reference, ours)) == ALLOWED[call_api]
    assert len(ours) == len(reference)
    votes = recorded["phases"][f"pass_rate/{model}"]["votes"]
    for r in result.results:
        ref = votes[r.subset][r.query_id]
        last = r.judgements[-1]
        assert f"AnswerStatus.{last.answer_status or 'Unsolved'}" == ref["is_solved"], r.key
        assert f"TaskStatus.{last.task_status or 'Solvable'}" == ref["task_solvable"], r.key
        outcomes = [j.outcome for j in r.judgements]
        if UNSURE not in outcomes:  # an unsure judgement is a coin on either side
            assert (outcomes.count(PASS), outcomes.count(FAIL)) == \
                (ref["passed"], ref["failed"]), r.key


def reference_labels(recorded: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each side's pass label (the reference's pass-rate file) and last statuses."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for model, side in zip(MODELS, (REFERENCE, CANDIDATE), strict=True):
        phase = recorded["phases"][f"pass_rate/{model}"]
        for subset in SUBSETS:
            for qid, label in phase["labels"][subset].items():
                v = phase["votes"][subset][qid]
                out.setdefault((subset, qid), {})[side] = {
                    "label": label == "passed",
                    "last": (v["is_solved"].split(".")[1], v["task_solvable"].split(".")[1])}
    return out


@pytest.mark.parametrize(("use_pass_rate", "call_api"), [(False, "functions"),
                                                        (True, "functions"), (True, "tools")])
def test_win_rate_requests_and_decisions_match_the_reference(
        use_pass_rate: bool, call_api: str, recorded: dict[str, Any], evaluator: Any) -> None:
    phase = recorded["phases"][f"preference/use_pass_rate={str(use_pass_rate).lower()}"]
    shown = {s["query"]: CANDIDATE if s["order"][0] == 1 else REFERENCE
             for s in phase["shuffles"]}
    labels = reference_labels(recorded)
    cand = {(s.subset, s.query_id): s for s in answers("cand_model")}
    judge_fn = ScriptedToolEvalJudge()
    decided = {}
    with FakeOpenAIServer(judge_fn) as srv:
        judge = make_judge("openai/fake", base_url=srv.base_url,
                           config=GenerateConfig(temperature=evaluator.temperature,
                                                 call_api=call_api))
        for ref in answers("ref_model"):
            key = (ref.subset, ref.query_id)
            c = asyncio.run(compare_rounds(
                judge, cand[key], ref, rounds=1, seed=0, evaluator=evaluator,
                labels=labels[key], use_pass_rate=use_pass_rate,
                order=lambda *_, q=ref.query: shown[q]))
            decided[key] = c.winner
    assert set(compare_requests(bodies(recorded, phase_name(use_pass_rate)),
                                judge_fn.requests)) == ALLOWED[call_api]
    assert len(judge_fn.requests) == len(phase["requests"])
    for (subset, qid), winner in decided.items():
        counts = phase["rounds"][subset][qid]
        expected = (CANDIDATE if counts["cand_model"] > counts["ref_model"] else
                    REFERENCE if counts["ref_model"] > counts["cand_model"] else TIE)
        identical = recorded["cases"][qid].startswith("identical") or \
            recorded["cases"][qid] == "method"
        if not identical:  # identical answers are a coin on either side
            assert winner == expected, (subset, qid, recorded["cases"][qid])


def phase_name(use_pass_rate: bool) -> str:
    return f"preference/use_pass_rate={str(use_pass_rate).lower()}"


def test_the_fixture_covers_the_edge_cases(recorded: dict[str, Any]) -> None:
    cases = set(recorded["cases"].values())
    assert {"empty", "give-up", "names-give-up", "empty-text", "blank-text", "long-solved",
            "long-best", "no-finish", "method", "shuffle", "identical"} <= cases
    first = recorded["bodies"][recorded["phases"]["pass_rate/ref_model"]["requests"][0]]
    assert first["max_tokens"] == 1000 and "seed" not in first and "functions" in first


def test_a_pass_rate_run_sends_the_reference_requests(tmp_path: Path, recorded: dict[str, Any],
                                                      release_evaluator: Path) -> None:
    """The benchmark as a user runs it (options, the evaluator found where a download puts it,
    its sampling fields): the same requests as the reference, in whatever order the run's
    concurrency sends them, and the same verdicts."""
    from toolscore import evaluate

    judge_fn = ScriptedToolEvalJudge()
    with FakeOpenAIServer(judge_fn) as srv:
        run = evaluate("tooleval", "openai/fake", base_url=srv.base_url, cache=None,
                       out=tmp_path / "run", answers=FIXTURES / "answers" / "ref_model",
                       test_ids=FIXTURES / "test_ids", votes=4, call_api="functions")

    def key(body: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in body.items() if k != "model"}, sort_keys=True)

    assert Counter(map(key, judge_fn.requests)) == \
        Counter(map(key, bodies(recorded, "pass_rate/ref_model")))
    assert run.config.benchmark_config["max_tokens"] == 1000
    assert run.config.benchmark_config["temperature"] == 0.2
    votes = recorded["phases"]["pass_rate/ref_model"]["votes"]
    assert len(run.records) == sum(len(v) for v in votes.values())
    for r in run.records:
        out = r["output"]
        ref = votes[out["subset"]][out["query_id"]]
        outcomes = r["scores"]["votes"]
        if UNSURE not in outcomes:
            assert (outcomes.count(PASS), outcomes.count(FAIL)) == (ref["passed"], ref["failed"])
