"""BFCL's multi-turn categories run end to end: the documents a multi-turn entry offers, the
oracle's run of all four categories (every entry valid), its figures, its export as BFCL's
result files and their scoring, a record read as its conversation; and BFCL's own figures for
result files it scored (``tests/fixtures/bfcl/summary_multi_turn_*``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from support import bfcl_variants as bv
from support.data import dataset

from toolscore.benchmarks.bfcl import prompting
from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.categories import MULTI_TURN
from toolscore.benchmarks.bfcl.data import class_documents
from toolscore.benchmarks.bfcl.results import BFCL_MODEL, score_result_files, write_results
from toolscore.runs.api import evaluate, score_files

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl"
NOTE = " Note that the provided function is in Python 3 syntax."


def _samples(category: str) -> dict[str, Any]:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=[category]))
    return {s.id: s for s in bench.samples()}


def test_held_out_functions_wait_for_their_turn_without_the_language_note() -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["multi_turn_miss_func"]))
    entry = _samples("multi_turn_miss_func")["multi_turn_miss_func_0"].data["entry"]
    documents, held = bench.documents(entry)
    released = [d["name"] for c in entry["involved_classes"]
                for d in class_documents(dataset("bfcl"), c)]
    assert [d["name"] for d in documents] == [n for n in released if n != "sort"]
    assert list(held) == [3] and [d["name"] for d in held[3]] == ["sort"]
    assert all(d["description"].endswith(NOTE) for d in documents)
    assert not held[3][0]["description"].endswith(NOTE)
    tools = prompting.multi_turn_tools(documents + held[3])
    assert tools[-1].name == "sort" and tools[-1].parameters["type"] == "object"
    # an entry's excluded_function is not read by this release of BFCL: still offered
    base = _samples("multi_turn_base")["multi_turn_base_0"].data["entry"]
    assert base["excluded_function"] == ["cp"]
    assert "cp" in [d["name"] for d in bench.documents(base)[0]]
    # the released documents are read afresh: nothing above changed them
    assert all(not d["description"].endswith(NOTE)
               for d in class_documents(dataset("bfcl"), "GorillaFileSystem"))


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl-mt") / "run"
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=out, cache=None, download=False,
             limit=None, category=["multi_turn"])
    return out


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").open()]


def test_the_oracle_passes_every_multi_turn_entry(oracle_run: Path) -> None:
    records = _records(oracle_run)
    assert len(records) == 800
    failed = {r["id"]: (r.get("scores") or {}).get("error_type") or r.get("error")
              for r in records if r["status"] != "ok" or not r["scores"]["valid"]}
    assert failed == {}
    scores = json.loads((oracle_run / "scores.json").read_text())
    for category in MULTI_TURN:
        assert scores[category] == {"accuracy": 1.0, "correct": 200, "total": 200}
    assert scores["bfcl"]["multi_turn"] == "100.00%"
    assert scores["bfcl"]["overall"] == "30.00%"
    (line,) = BFCLBenchmark.summary_lines(scores)
    assert "multi-turn 100.00%" in line and "agentic is not run" in line


def test_a_run_keeps_bfcls_raw_result_turn_by_turn(oracle_run: Path) -> None:
    first = next(r for r in _records(oracle_run) if r["id"] == "multi_turn_miss_func_0")
    result = first["output"]["result"]
    assert len(result) == 5
    assert result[0][0] == [{"cd": '{"folder": "document"}'}, {"mkdir": '{"dir_name": "temp"}'},
                            {"mv": '{"source": "final_report.pdf", "destination": "temp"}'}]
    assert result[0][1] == "Done." and result[2] == ["Done."]
    assert first["output"]["executions"][0][0][0] == '{"current_working_directory": "document"}'
    assert first["output"]["forced_quit"] is False
    # the run-level reports hold outputs without their turns
    assert BFCLBenchmark.summary_output(first["output"]) == {
        "category": "multi_turn_miss_func", "forced_quit": False}


def test_export_and_scoring_of_multi_turn_result_files(oracle_run: Path, tmp_path: Path
                                                       ) -> None:
    folder = write_results(oracle_run, tmp_path / "results")
    assert folder.name == BFCL_MODEL.replace("/", "_")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json")) == [
        f"multi_turn/BFCL_v4_{c}_result.json" for c in sorted(MULTI_TURN)]
    line = json.loads((folder / "multi_turn/BFCL_v4_multi_turn_base_result.json").open()
                      .readline())
    assert set(line) == {"id", "result"} and line["id"] == "multi_turn_base_0"
    run_scores = json.loads((oracle_run / "scores.json").read_text())
    doc = score_files("bfcl", folder, data=dataset("bfcl"), out=tmp_path / "scores")
    assert {c: doc["metrics"][c] for c in MULTI_TURN} == {c: run_scores[c] for c in MULTI_TURN}
    assert doc["metrics"]["bfcl"] == run_scores["bfcl"]
    header = json.loads((tmp_path / "scores" / "BFCL_v4_multi_turn_long_context_score.json")
                        .open().readline())
    assert header == {"accuracy": 1.0, "correct_count": 200, "total_count": 200}


def test_a_multi_turn_record_reads_as_its_conversation(oracle_run: Path) -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["multi_turn"]))
    record = next(r for r in _records(oracle_run) if r["id"] == "multi_turn_miss_func_0")
    view = bench.record_view(record)
    assert view["summary"] == "valid"
    roles = [m["role"] for m in view["messages"]]
    assert roles[:6] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    held_turn = [m for m in view["messages"] if m["role"] == "user"][3]
    assert held_turn["content"].startswith("I have updated some more functions")
    assert view["messages"][2] == {"role": "tool", "tool_call_id": "call_0_0_0",
                                   "content": '{"current_working_directory": "document"}'}
    assert view["details"]["turns"] == "5 of 5 played"
    assert view["details"]["functions added"] == "turn 3: sort"


@pytest.mark.parametrize("which", ["multi_turn_oracle", "multi_turn_mixed"])
def test_figures_of_scored_result_files_are_bfcls(which: str, tmp_path: Path) -> None:
    summary = bv.load_summary(which)
    root = dataset("bfcl")
    folder = tmp_path / "multi_turn"
    folder.mkdir()
    for category, scored in summary["categories"].items():
        lines = []
        for entry, answer in bv.load_category(root, category):
            variants = bv.multi_turn_variants(root, entry, answer)
            lines.append({"id": entry["id"], "result": variants[scored["variants"][entry["id"]]]})
        (folder / f"BFCL_v4_{category}_result.json").write_text(
            "".join(json.dumps(line) + "\n" for line in lines))
    doc = score_result_files(BFCLBenchmark(root), folder, tmp_path / "scores")
    metrics = doc["metrics"]
    # score-file lines as BFCL writes a multi-turn miss: the type inside "error", beside
    # the message (a list for a forced quit); BFCL's checker details are left out
    verdicts = bv.load_verdicts("verdicts_multi_turn")
    for category, scored in summary["categories"].items():
        header, *missed = bv.read_lines(tmp_path / "scores" / f"BFCL_v4_{category}_score.json")
        assert header["correct_count"] == scored["correct_count"]
        for line in missed:
            verdict = verdicts[category][line["id"]][scored["variants"][line["id"]]]
            forced = verdict["error_type"] == "multi_turn:force_terminated"
            assert line == {"id": line["id"], "test_category": category, "valid": False,
                            "error": {"error_message": verdict["errors"] if forced
                                      else verdict["errors"][0],
                                      "error_type": verdict["error_type"]}}
    for category, scored in summary["categories"].items():
        assert metrics[category] == {"accuracy": scored["accuracy"],
                                     "correct": scored["correct_count"],
                                     "total": scored["total_count"]}
    columns = {f"summary_{which}_data_multi_turn.csv": {
        "Multi Turn Overall Acc": "multi_turn", "Base": "multi_turn_base",
        "Miss Func": "multi_turn_miss_func", "Miss Param": "multi_turn_miss_param",
        "Long Context": "multi_turn_long_context"},
        f"summary_{which}_data_overall.csv": {"Overall Acc": "overall",
                                              "Multi Turn Acc": "multi_turn",
                                              "Multi Turn Base": "multi_turn_base"}}
    shown = metrics["bfcl"]
    for table, names in columns.items():
        with (FIXTURES / table).open(encoding="utf-8") as fh:
            row = next(csv.DictReader(fh))
        assert {name: shown.get(name, "N/A") for name in names.values()} == {
            name: row[column] for column, name in names.items()}
