"""The bfcl benchmark end to end: runs with the oracle, BFCL's figures in scores.json, the
run exported as BFCL's result files and those files scored again, from Python and the
command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.categories import SUPPORTED
from toolscore.benchmarks.bfcl.results import BFCL_MODEL, write_results
from toolscore.benchmarks.options import OptionError
from toolscore.runs.api import evaluate, score_files

# Entries no reply passes under BFCL's checker (found by scoring the oracle's run with
# bfcl-eval 2026.3.23's own evaluator): the released answers contradict the documents.
IMPOSSIBLE = {
    "live_multiple_862-181-3": "the answer has an argument the document lacks",
    "live_multiple_964-207-0": "a required argument has no possible value",
    "live_simple_106-63-0": "required arguments whose possible values are none",
    "live_simple_112-68-0": "required arguments whose possible values are none",
    "simple_java_36": "elements of a list of type any, answered as numbers and booleans",
    "simple_java_64": "a dictionary answer not written as lists of possible values",
    "simple_java_65": "elements of a list of type any, answered as booleans",
}
CATEGORIES = ["simple_python", "simple_javascript", "irrelevance", "live_relevance"]


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl") / "run"
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=out, cache=None, download=False,
             limit=None, category=CATEGORIES)
    return out


def test_samples_are_the_categories_entries_split_by_category() -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["live"]))
    samples = bench.samples()
    assert len(samples) == 258 + 1053 + 16 + 24 + 884 + 16
    assert {s.meta["split"] for s in samples} == {"live_simple", "live_multiple",
                                                  "live_parallel", "live_parallel_multiple",
                                                  "live_irrelevance", "live_relevance"}
    assert all(s.data["answer"] is None for s in samples if "relevance" in s.meta["split"])
    assert all(s.data["answer"]["id"] for s in samples if "relevance" not in s.meta["split"])
    cfg = bench.config()
    assert cfg["mode"] == "reference" and cfg["sampling"]["temperature"] == 0.001


def test_unsupported_categories_are_refused_before_anything_runs() -> None:
    with pytest.raises(OptionError, match="not yet supported"):
        BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["format_sensitivity"]))
    with pytest.raises(OptionError, match="-T web_search=true"):
        BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["web_search_base"]))


def test_oracle_run_scores_and_figures(oracle_run: Path) -> None:
    scores = json.loads((oracle_run / "scores.json").read_text())
    assert scores["errors"] == 0
    assert {k for k in scores if k in SUPPORTED} == set(CATEGORIES)
    for c in ("irrelevance", "live_relevance"):
        assert scores[c]["accuracy"] == 1.0
    assert scores["bfcl"]["relevance_detection"] == "100.00%"
    assert scores["bfcl"]["multi_turn"] == "0.00%"
    records = [json.loads(line) for line in (oracle_run / "samples.jsonl").open()]
    first = next(r for r in records if r["id"] == "simple_python_0")
    assert first["output"]["result"] == [
        {"calculate_triangle_area": '{"base": 10, "height": 5}'}]
    assert set(first["scores"]) == {"valid", "error_type", "errors"}


def test_export_writes_bfcls_result_files_and_they_score_alike(oracle_run: Path,
                                                               tmp_path: Path) -> None:
    folder = write_results(oracle_run, tmp_path / "results")
    assert folder.name == BFCL_MODEL.replace("/", "_")
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
    assert files == ["live/BFCL_v4_live_relevance_result.json",
                     "non_live/BFCL_v4_irrelevance_result.json",
                     "non_live/BFCL_v4_simple_javascript_result.json",
                     "non_live/BFCL_v4_simple_python_result.json"]
    line = json.loads((folder / "non_live/BFCL_v4_simple_python_result.json").open().readline())
    assert line == {"id": "simple_python_0", "result": [
        {"calculate_triangle_area": '{"base": 10, "height": 5}'}]}
    doc = score_files("bfcl", folder, data=dataset("bfcl"), out=tmp_path / "scores")
    run_scores = json.loads((oracle_run / "scores.json").read_text())
    assert {c: doc["metrics"][c] for c in CATEGORIES} == {c: run_scores[c] for c in CATEGORIES}
    assert doc["metrics"]["bfcl"] == run_scores["bfcl"]
    header = json.loads((tmp_path / "scores" / "BFCL_v4_irrelevance_score.json").open()
                        .readline())
    assert header == {"accuracy": 1.0, "correct_count": 240, "total_count": 240}


def test_score_files_refuses_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(OptionError, match="no BFCL result files"):
        score_files("bfcl", tmp_path, data=dataset("bfcl"))


def test_oracle_passes_every_entry_a_reply_can_pass(tmp_path: Path) -> None:
    out = tmp_path / "run"
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=out, cache=None, download=False)
    records = [json.loads(line) for line in (out / "samples.jsonl").open()]
    assert len(records) == sum(1 for _ in BFCLBenchmark(dataset("bfcl")).samples())
    failed = {r["id"]: r["scores"]["error_type"] for r in records
              if r["status"] != "ok" or not r["scores"]["valid"]}
    assert set(failed) == set(IMPOSSIBLE)


def test_a_record_reads_as_the_dialogue_and_misses_by_error_type(oracle_run: Path) -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=CATEGORIES))
    records = [json.loads(line) for line in (oracle_run / "samples.jsonl").open()]
    first = next(r for r in records if r["id"] == "simple_python_0")
    view = bench.record_view(first)
    assert view["messages"][0]["role"] == "user"
    assert view["messages"][-1]["tool_calls"][0]["function"]["name"] == "calculate_triangle_area"
    wrong = {**first, "scores": {"valid": False, "error_type": "value_error:others",
                                 "errors": ["Invalid value."]}}
    assert bench.record_view(wrong)["summary"] == "invalid: value_error:others"
    (table,) = bench.breakdowns([wrong, first])
    assert table.rows == [{"category": "simple_python", "error_type": "value_error:others",
                           "entries": 1}]
