"""``compare`` and ``report`` agree on the benchmark's headline figures (demo = ToolTalk scoring).

Run B answers like the oracle except on two conversations: it adds the wrong item to the
shopping list (an action that matches nothing: a bad action) and it does not save the note it
was asked for (no call at all, so no action). ToolTalk sums counts over conversations, so B's
action precision is 2 valid of 3 actions; the per-sample mean counts the conversation without
actions as 100% and gives 5/6. compare's headline must be the former, the number the report
gives, and the per-sample view must say what it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.testing.openai_server import FakeOpenAIServer, prompt_tokens, reply_to_completion
from support.testing.oracle_replies import oracle_recording

from toolscore.benchmarks.tooltalk.report_view import INTERVAL_METRICS
from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.compare import PER_SAMPLE, compare_runs
from toolscore.report.intervals import by_split, compute
from toolscore.report.overview import run_overview
from toolscore.runs.api import evaluate
from toolscore.types import Message, ToolCall

WRONG_ITEM = "Please add 2 cartons of oat milk"
NO_NOTE = "Save a note titled Bike lock"


def mixed_responder(oracle: Any) -> Any:
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        first = next(m["content"] for m in messages if m["role"] == "user")
        if first.startswith(NO_NOTE):
            msg = Message(role="assistant", content="I cannot save notes.")
        elif first.startswith(WRONG_ITEM) and messages[-1]["role"] == "user":
            msg = Message(role="assistant", tool_calls=[ToolCall(
                id="c1", name="AddItem", arguments='{"name": "soy milk", "quantity": 1}')])
        elif first.startswith(WRONG_ITEM):
            msg = Message(role="assistant", content="Done.")
        else:
            return oracle(request)
        return reply_to_completion(msg, prompt_tokens=prompt_tokens(request))
    return respond


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("headline")
    a = evaluate("demo", "oracle", cache=None, out=root / "a", embedder="hashing").path
    recording = oracle_recording("demo", embedder="hashing")
    with FakeOpenAIServer(mixed_responder(recording.responder)) as srv:
        b = evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None, out=root / "b",
                     embedder="hashing").path
    return a, b


def test_definitions_reproduce_the_published_aggregate(runs: tuple[Path, Path]) -> None:
    """ToolTalk's interval definitions give exactly its scores.json, split by split."""
    for run in runs:
        published = RunStore(run).read_scores()
        assert published is not None
        groups = by_split(list(RunStore(run).latest().values()))
        for split in ("easy", "hard"):
            for m in INTERVAL_METRICS:
                assert compute(groups[split], m) == pytest.approx(published[split][m.key]), (
                    run.name, split, m.label)


def test_compare_headline_is_the_reports_figure(runs: tuple[Path, Path]) -> None:
    b = RunStore(runs[1]).read_scores()
    assert b is not None
    assert b["easy"]["action_precision"] == 0.0 and b["hard"]["action_precision"] == 1.0
    report = run_overview(runs[1], n_resamples=300)
    shown = {m["label"]: m for m in report["intervals"]["splits"]["all"]}
    result = compare_runs(*runs, n_resamples=500)
    head = {m["metric"]: m for m in result["headline"]}
    per = {m["metric"]: m for m in result["per_sample"]}

    action = head["action precision"]
    assert action["value_b"] == pytest.approx(2 / 3) == shown["action precision"]["value"]
    assert action["value_a"] == 1.0 and action["diff"] == pytest.approx(-1 / 3)
    assert action["definition"] == "sum of valid_actions / sum of actions"
    assert action["test"] == "permutation" and 0 < action["p_value"] <= 1
    assert action["ci_low"] <= action["diff"] <= action["ci_high"]
    assert per["action_precision"]["mean_b"] == pytest.approx(5 / 6)  # the misleading view
    assert per["action_precision"]["view"] == PER_SAMPLE
    assert head["recall"]["value_b"] == pytest.approx(shown["recall"]["value"])
    assert head["success"]["value_b"] == pytest.approx(4 / 6)
    assert result["primary_metric"] == "success"
    assert {f["id"] for f in result["flips"]["pass_a_fail_b"]} == {"demo-add-item",
                                                                   "demo-create-note"}


def test_permutation_test_is_seeded_and_sees_no_difference_in_a_run_and_itself(
        runs: tuple[Path, Path]) -> None:
    same = compare_runs(runs[1], runs[1], n_resamples=300, seed=3)
    for m in same["headline"]:
        assert m["diff"] == 0.0 and (m["p_value"] is None or m["p_value"] == 1.0), m
    assert compare_runs(*runs, n_resamples=300, seed=3) == compare_runs(*runs, n_resamples=300,
                                                                        seed=3)


def test_cli_labels_both_views(runs: tuple[Path, Path]) -> None:
    cli = CliRunner()
    done = cli.invoke(app, ["compare", *map(str, runs), "--resamples", "200"],
                      env={"COLUMNS": "220"})
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "headline metrics, as the benchmark computes them" in text
    assert "per-sample scores: mean over (sample, epoch) pairs" in text
    assert "sum of valid_actions / sum of actions" in text
    doc = json.loads(cli.invoke(app, ["compare", *map(str, runs), "--json", "--resamples",
                                      "100"]).stdout)
    assert doc["run_b"]["mode"] == "reference" and "strict" not in doc["run_b"]
    assert [m["metric"] for m in doc["headline"]][:2] == ["success", "precision"]
