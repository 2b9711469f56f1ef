"""BFCL's prompting mode (``-T handler=prompting``) and the format-sensitivity category,
against what BFCL's own prompting handler and evaluator recorded
(tests/reference/bfcl/record_prompting.py -> tests/fixtures/bfcl_prompting/): the requests,
the decoding of reply texts, verdicts on replies to every Python single-turn entry, and a
complete format-sensitivity result set's verdicts and summary table."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from support import bfcl_prompting_replies as replies
from support.data import dataset

from toolscore.benchmarks.bfcl import format_sensitivity as fs
from toolscore.benchmarks.bfcl import prompting_mode
from toolscore.benchmarks.bfcl.benchmark import MODE_LABEL, BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.decode_text import decode_text, execute_calls, try_decode_text
from toolscore.benchmarks.bfcl.prompt_docs import PromptConfig, default_config
from toolscore.benchmarks.bfcl.results import group_of, write_results, write_score_files
from toolscore.benchmarks.options import OptionError
from toolscore.runs.api import evaluate, score_files
from toolscore.types import Message, Reply

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HERE = FIXTURES / "bfcl_prompting"


def _gz(name: str) -> Any:
    with gzip.open(HERE / name) as fh:
        return json.load(fh)


def _bench(*categories: str) -> BFCLBenchmark:
    return BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=list(categories),
                                                      handler="prompting"))


@pytest.fixture(scope="module")
def sensitivity() -> BFCLBenchmark:
    return _bench("format_sensitivity")


# -- decoding --------------------------------------------------------------------------------
def test_the_recorded_cases_are_the_designed_ones() -> None:
    recorded = json.loads((HERE / "decodes.json").read_text(encoding="utf-8"))
    assert [(r["text"], r["ret_fmt"], r["tag"]) for r in recorded] == replies.DECODE_CASES


@pytest.mark.parametrize("row", json.loads((HERE / "decodes.json").read_text(encoding="utf-8")),
                         ids=lambda r: f"{r['ret_fmt']}-{r['tag']}-{r['text'][:30]}")
def test_decoding_matches_the_reference(row: dict[str, Any]) -> None:
    got: dict[str, Any]
    try:
        got = {"decoded": repr(decode_text(row["text"], row["ret_fmt"], row["tag"]))}
    except Exception as e:  # the reference's failure is what is compared
        got = {"error": [type(e).__name__, str(e)]}
    assert got == {k: row[k] for k in ("decoded", "error") if k in row}


@pytest.mark.parametrize("row", [r for r in json.loads(
    (HERE / "decodes.json").read_text(encoding="utf-8")) if r["ret_fmt"] == "python"],
    ids=lambda r: f"{r['tag']}-{r['text'][:30]}")
def test_multi_turn_call_strings_match_the_reference(row: dict[str, Any]) -> None:
    got: dict[str, Any]
    try:
        got = {"execute": execute_calls(row["text"], row["tag"])}
    except Exception as e:  # the reference's failure is what is compared
        got = {"execute_error": [type(e).__name__, str(e)]}
    assert got == {k: row[k] for k in ("execute", "execute_error") if k in row}


def test_multi_turn_messages_match_the_reference() -> None:
    recorded = json.loads((HERE / "multi_turn_messages.json").read_text(encoding="utf-8"))
    assert [prompting_mode.execution_results_message(calls, results)
            for calls, results in replies.EXECUTION_CASES] == recorded["results"]
    assert [prompting_mode.added_functions_message(functions)
            for functions in replies.HOLDOUT_CASES] == recorded["holdout"]


def test_decoding_never_runs_the_reply() -> None:
    decoded, error = try_decode_text("[f(x=__import__('os').getcwd() + 'a')]")
    assert decoded is None and error
    for big in ("9 ** 9 ** 9", "(2 ** 999) ** 9999", "'a' * 10 ** 9", "1 << 10 ** 9"):
        decoded, error = try_decode_text(f"[f(x={big})]")
        assert decoded is None and "too large" in str(error), big
    assert decode_text("[f(x=2 ** 64, y='ab' * 3)]") == [{"f": {"x": 2 ** 64, "y": "ababab"}}]
    assert try_decode_text(None) == (None, "'NoneType' object has no attribute 'strip'")


# -- requests --------------------------------------------------------------------------------
def test_requests_match_the_reference() -> None:
    recorded = _gz("requests.json.gz")
    categories = {"format_sensitivity" if ":" in i else i.rsplit("_", 1)[0] for i in recorded}
    by_id = {s.id: s for s in _bench(*sorted(categories)).samples()}
    for entry_id, request in recorded.items():
        got = [{"role": m.role, "content": m.content}
               for m in prompting_mode.sample_messages(by_id[entry_id])]
        assert got == request["messages"], entry_id
        assert request["temperature"] == 0.001 and set(request) == {"messages", "model",
                                                                    "temperature", "store"}


class _Recorder:
    """A model that answers one text and keeps what it was sent."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.sent: list[Any] = []

    async def generate(self, messages: list[Message], tools: list[Any], config: Any) -> Reply:
        self.sent.append((messages, tools, config))
        return Reply(message=Message(role="assistant", content=self.text))


def test_a_prompting_request_has_no_tools_and_keeps_the_text() -> None:
    bench = _bench("simple_python")
    sample = bench.samples()[0]
    model = _Recorder("[calculate_triangle_area(base=10, height=5)]")
    output = asyncio.run(bench.run_sample(sample, model, 0))
    messages, tools, config = model.sent[0]
    assert tools == [] and config.temperature == 0.001 and config.tool_choice is None
    assert messages[0].role == "system" and "calculate_triangle_area" in messages[0].content
    assert output == {"category": "simple_python", "result": model.text}
    scores = bench.score(output, sample)
    assert scores["valid"]
    shown = bench.record_view({"id": sample.id, "output": output, "scores": scores})
    assert shown["summary"] == "valid"
    assert shown["messages"][0]["content"] == messages[0].content
    assert shown["messages"][-1] == {"role": "assistant", "content": model.text}
    none = asyncio.run(bench.run_sample(sample, _Recorder(None), 0))
    assert bench.score(none, sample)["error_type"] == "ast_decoder:decoder_failed"


def test_single_turn_verdicts_match_the_reference() -> None:
    recorded = _gz("single_turn.json.gz")
    bench = _bench(*recorded)
    got: dict[str, dict[str, Any]] = {c: {} for c in recorded}
    index: dict[str, int] = {}
    for sample in bench.samples():
        category = sample.data["category"]
        k = index[category] = index.get(category, -1) + 1
        text = replies.single_turn_reply(k, sample.data["entry"], sample.data["answer"])
        s = bench.score({"category": category, "result": text}, sample)
        got[category][sample.id] = None if s["valid"] else s["error_type"]
    assert got == recorded


# -- options ---------------------------------------------------------------------------------
def test_options_and_labels() -> None:
    fc = BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["simple_python"]))
    assert fc.mode_label() == MODE_LABEL and "handler" not in fc.config()
    bench = _bench("non_live")
    assert bench.categories == ["simple_python", "multiple", "parallel", "parallel_multiple",
                                "irrelevance"]
    assert "prompting" in bench.mode_label() and bench.config()["handler"] == "prompting"
    assert _bench("all").categories[-1] == "format_sensitivity"
    assert "format_sensitivity" not in BFCLBenchmark(
        dataset("bfcl"), BFCLOptions(category=["all"])).categories
    with pytest.raises(OptionError, match="not run in prompting mode"):
        _bench("simple_java")
    with pytest.raises(OptionError, match="handler=prompting"):
        BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["format_sensitivity"]))


def test_configurations() -> None:
    assert str(default_config()) == ("ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&"
                                     "prompt_fmt=plaintext&style=classic")
    configs = fs.sensitivity_configs()
    assert len(configs) == len(set(configs)) == 26
    assert all(PromptConfig.parse(str(c)) == c for c in configs)
    with pytest.raises(ValueError):
        PromptConfig.parse("ret_fmt=yaml")


# -- format sensitivity ----------------------------------------------------------------------
def _sensitivity_records(bench: BFCLBenchmark) -> list[dict[str, Any]]:
    configs = [str(c) for c in fs.sensitivity_configs()]
    records = []
    for index, sample in enumerate(bench.samples()):
        config = sample.data["config"]
        text = replies.sensitivity_reply(index, configs.index(config), config,
                                         sample.data["answer"])
        output = {"category": "format_sensitivity", "result": text}
        records.append({"id": sample.id, "status": "ok", "meta": sample.meta,
                        "output": output, "scores": bench.score(output, sample)})
    return records


def test_format_sensitivity_matches_the_reference(sensitivity: BFCLBenchmark) -> None:
    recorded = _gz("format_sensitivity.json.gz")
    samples = sensitivity.samples()
    assert len(samples) == 5200
    assert [str(c) for c in fs.sensitivity_configs()] == recorded["configs"]
    records = _sensitivity_records(sensitivity)
    failed = {r["id"]: r["scores"]["error_type"] for r in records if not r["scores"]["valid"]}
    assert failed == recorded["failed"]
    summary = sensitivity.aggregate(records)["format_sensitivity"]
    header = recorded["header"]
    assert (summary["accuracy"], summary["correct"], summary["total"]) == (
        header["accuracy"], header["correct_count"], header["total_count"])
    assert (summary["max_delta"], summary["variance"], summary["std"]) == (
        header["accuracy_max_delta"], header["accuracy_variance"], header["accuracy_std"])
    for config, figures in summary["configs"].items():
        assert figures["accuracy"] == header[config]["accuracy"]
    table = fs.table(summary, "GPT-4.1-2025-04-14 (Prompt)")
    assert table == (HERE / "summary_data_format_sensitivity.csv").read_text(encoding="utf-8")


def test_the_table_of_a_run_without_the_category() -> None:
    expected = (FIXTURES / "bfcl" / "summary_oracle_data_format_sensitivity.csv").read_text(
        encoding="utf-8")
    assert fs.table(None, "GPT-4.1-2025-04-14 (FC)") == expected


# -- end to end ------------------------------------------------------------------------------
def test_oracle_run_exported_and_scored_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    categories = ["parallel_multiple", "irrelevance", "live_relevance"]
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=out, cache=None, download=False,
             limit=None, category=categories, handler="prompting")
    scores = json.loads((out / "scores.json").read_text())
    metrics = scores.get("metrics", scores)
    for category in categories:
        assert metrics[category]["accuracy"] == 1.0, category
    # filed under a BFCL prompting model, whose evaluator decodes the texts as toolscore does
    folder = write_results(out, tmp_path / "bfcl")
    assert folder.name == prompting_mode.BFCL_PROMPTING_MODEL
    line = json.loads((folder / "non_live" / "BFCL_v4_parallel_multiple_result.json")
                      .read_text().splitlines()[0])
    assert isinstance(line["result"], str) and line["result"].startswith("[")
    doc = score_files("bfcl", folder, data=dataset("bfcl"), handler="prompting",
                      out=tmp_path / "scores")
    assert {c: doc["metrics"][c]["accuracy"] for c in categories} == dict.fromkeys(
        categories, 1.0)
    assert group_of("format_sensitivity") == "format_sensitivity"


def test_format_sensitivity_score_file(sensitivity: BFCLBenchmark, tmp_path: Path) -> None:
    records = _sensitivity_records(sensitivity)
    metrics = sensitivity.aggregate(records)
    write_score_files(records, metrics, tmp_path)
    header, *failed = [json.loads(x) for x in
                       (tmp_path / "BFCL_v4_format_sensitivity_score.json").read_text()
                       .splitlines()]
    recorded = _gz("format_sensitivity.json.gz")
    assert header == recorded["header"]
    assert {f["id"]: f["error_type"] for f in failed} == recorded["failed"]
