"""BFCL's result files scored by toolscore as BFCL's own evaluator scores them: per entry (the
verdict, its error type and messages, in BFCL's score-file shape) and the leaderboard's
figures (``tests/fixtures/bfcl_results``: a few entries of each category, answers right and
wrong in every way decoding and checking tell apart, and what bfcl-eval 2026.3.23 made of
them, recorded by ``tests/reference/bfcl/record_scores.py``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark
from toolscore.benchmarks.bfcl.results import score_result_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_results"
KEPT = ("id", "valid", "error", "error_type")
# leaderboard table -> column -> toolscore's name for the figure
COLUMNS = {
    "data_overall.csv": {"Overall Acc": "overall", "Non-Live AST Acc": "non_live_ast",
                         "Live Acc": "live", "Multi Turn Acc": "multi_turn",
                         "Relevance Detection": "relevance_detection",
                         "Irrelevance Detection": "irrelevance_detection"},
    "data_non_live.csv": {"Non-Live Overall Acc": "non_live", "Simple AST": "simple",
                          "Python Simple AST": "simple_python",
                          "Java Simple AST": "simple_java",
                          "JavaScript Simple AST": "simple_javascript",
                          "Multiple AST": "multiple", "Parallel AST": "parallel",
                          "Parallel Multiple AST": "parallel_multiple",
                          "Irrelevance Detection": "irrelevance"},
    "data_live.csv": {"Live Overall Acc": "live", "AST Summary": "live_ast",
                      "Python Simple AST": "live_simple", "Python Multiple AST": "live_multiple",
                      "Python Parallel AST": "live_parallel",
                      "Python Parallel Multiple AST": "live_parallel_multiple",
                      "Irrelevance Detection": "live_irrelevance",
                      "Relevance Detection": "live_relevance"},
}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("bfcl-scores")
    doc = score_result_files(BFCLBenchmark(dataset("bfcl")), FIXTURES / "results", out)
    return doc, out


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "scores").glob("*.json")))
def test_score_files_are_bfcls(name: str, scored: tuple[dict[str, Any], Path]) -> None:
    ours = _lines(scored[1] / name)
    theirs = _lines(FIXTURES / "scores" / name)
    assert ours[0] == theirs[0]
    assert [{k: e[k] for k in KEPT} for e in ours[1:]] == theirs[1:]


@pytest.mark.parametrize("table", sorted(COLUMNS))
def test_leaderboard_figures_are_bfcls(table: str, scored: tuple[dict[str, Any], Path]) -> None:
    with (FIXTURES / "scores" / table).open(encoding="utf-8") as fh:
        row = list(csv.DictReader(fh))[0]
    shown = scored[0]["metrics"]["bfcl"]
    assert {name: shown[name] for name in COLUMNS[table].values()} == {
        name: row[column] for column, name in COLUMNS[table].items()}
