"""BFCL's memory categories run end to end: each scenario's prerequisites played in order before
its questions, one sample per question, scored and summarised as BFCL does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.data import read_lines
from toolscore.benchmarks.bfcl.results import write_results
from toolscore.runs.api import evaluate, score_files
from toolscore.types import Message, Reply, ToolCall, Usage


@pytest.fixture(scope="module")
def memory_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl") / "run"
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=out, cache=None, download=False,
             limit=None, category=["memory_kv"])
    return out


def test_oracle_answers_every_memory_question(memory_run: Path) -> None:
    scores = json.loads((memory_run / "scores.json").read_text())
    metrics = scores.get("metrics", scores)
    assert metrics["memory_kv"] == {"accuracy": 1.0, "correct": 155, "total": 155}
    # agentic = mean(web search, memory), memory = mean of its three categories
    assert metrics["agentic"]["counted"] == pytest.approx(1 / 6)
    assert metrics["bfcl"]["memory"] == "N/A" and metrics["bfcl"]["agentic"] == "16.67%"
    assert metrics["overall"]["counted"] == pytest.approx(0.4 / 6)


def test_each_scenarios_chain_is_recorded_once_with_its_first_question(
        memory_run: Path) -> None:
    records = [json.loads(line) for line in
               (memory_run / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 155
    chains = {r["id"]: r["output"]["prereq"] for r in records if "prereq" in r["output"]}
    assert sorted(k.split("-")[1] for k in chains) == [
        "customer", "finance", "healthcare", "notetaker", "student"]
    for record in records:
        depends = record["output"]["depends_on"]
        assert depends and all(d.startswith("memory_kv_prereq_") for d in depends)
    for first, chain in chains.items():
        assert [p["id"] for p in chain] == next(
            r["output"]["depends_on"] for r in records if r["id"] == first)


class _Remembering:
    """A model that, on the first turn of a prerequisite, stores one fact numbered by how many
    it was shown in its memory, then ends the turn; on a question it answers with the system
    prompt it was sent (the memory it was shown)."""

    name = "remembering"

    async def generate(self, messages: list[Message], tools: Any, config: Any) -> Reply:
        await asyncio.sleep(0)
        system = str(messages[0].content) if messages[0].role == "system" else ""
        question = "final answer to the user" in system
        if not question and messages[-1].role == "user" and len(messages) == 2:
            key = f"fact_{system.count('fact_')}"
            call = ToolCall(id="c0", name="core_memory_add",
                            arguments=json.dumps({"key": key, "value": "x"}))
            return Reply(Message(role="assistant", content=None, tool_calls=[call]), Usage())
        return Reply(Message(role="assistant", content=system if question else "ok"), Usage())


def test_questions_wait_for_their_whole_chain_and_start_from_its_memory() -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["memory_kv"]))
    samples = [s for s in bench.samples() if s.data["entry"]["scenario"] == "healthcare"]
    chain = samples[0].data["prereqs"]

    async def run_all() -> list[dict[str, Any]]:
        model = _Remembering()
        return await asyncio.gather(*(bench.run_sample(s, model, 0) for s in samples[:4]))

    outputs = asyncio.run(run_all())
    assert len(chain) > 1 and "prereq" in outputs[0] and "prereq" not in outputs[1]
    # each prerequisite stored one fact on top of what the previous ones left
    stored = [p["result"][0][0] for p in outputs[0]["prereq"]]
    assert [json.loads(s[0]["core_memory_add"])["key"] for s in stored] == [
        f"fact_{k}" for k in range(len(chain))]
    for output in outputs:
        answer = output["result"][0][-1]
        assert all(f"fact_{k}" in answer for k in range(len(chain)))
        assert f"fact_{len(chain)}" not in answer  # questions never save


def test_export_files_memory_as_bfcl_and_scores_back(memory_run: Path, tmp_path: Path) -> None:
    model = write_results(memory_run, tmp_path)
    folder = model / "agentic" / "memory" / "kv"
    answers = read_lines(folder / "BFCL_v4_memory_kv_result.json")
    prereqs = read_lines(folder / "BFCL_v4_memory_kv_prereq_result.json")
    assert len(answers) == 155 and answers[0]["id"] == "memory_kv_0-customer-0"
    assert all("_prereq_" in p["id"] for p in prereqs) and len(prereqs) > 5
    doc = score_files("bfcl", tmp_path, data=dataset("bfcl"), out=tmp_path / "score")
    assert doc["metrics"]["memory_kv"] == {"accuracy": 1.0, "correct": 155, "total": 155}
    assert doc["config"]["benchmark_config"]["skipped_categories"] == []


def test_agentic_score_lines_are_bfcls() -> None:
    from toolscore.benchmarks.bfcl.results import _score_line

    line = _score_line("memory_kv", "memory_kv_0-customer-0", {
        "errors": ["None of the expected answers were found in the model response."],
        "error_type": "agentic:answer_not_found"})
    assert line["error"] == {"error_message": "None of the expected answers were found in the "
                             "model response.", "error_type": "agentic:answer_not_found"}
    line = _score_line("web_search_base", "web_search_base_0", {
        "errors": ["Cannot find the last chat message that is not a function call."],
        "error_type": "agentic:no_last_message"})
    assert line["error"]["error_message"] == [
        "Cannot find the last chat message that is not a function call."]


def test_web_search_runs_only_with_the_opt_in_and_a_key(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from toolscore.benchmarks.options import OptionError

    with pytest.raises(OptionError, match="-T web_search=true"):
        BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["web_search"]))
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["web_search_no_snippet"],
                                                       web_search=True))
    samples = bench.samples()
    assert len(samples) == 100 and samples[0].id == "web_search_no_snippet_0"
    assert samples[0].data["entry"]["initial_config"] == {
        "WebSearchAPI": {"show_snippet": False}}
    assert samples[0].data["answer"]["ground_truth"]
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with pytest.raises(OptionError, match="SERPAPI_API_KEY"):
        bench.check()


def test_summary_line_says_what_counts_zero() -> None:
    metrics = {"memory_kv": {}, "memory_vector": {}, "memory_rec_sum": {},
               "web_search_base": {}, "web_search_no_snippet": {},
               "bfcl": {"overall": "40.00%", "agentic": "100.00%"}}
    (line,) = BFCLBenchmark.summary_lines(metrics)
    assert line.endswith("(multi-turn is not run: it counts 0 in overall, as in BFCL)")


def test_a_memory_record_reads_as_its_conversation(memory_run: Path) -> None:
    bench = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["memory_kv"]))
    record = json.loads((memory_run / "samples.jsonl").read_text().splitlines()[0])
    view = bench.record_view(record)
    assert view["summary"] == "valid"
    assert [m["role"] for m in view["messages"]] == ["system", "user", "assistant"]
    assert "final answer to the user" in view["messages"][0]["content"]
    assert "prereq" not in BFCLBenchmark.summary_output(record["output"])
