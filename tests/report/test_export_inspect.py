"""``toolscore export --format inspect``: runs made here (ToolTalk with the oracle, the demo over
the fake OpenAI server with one sample's endpoint failing, AutoDE) are exported and read back
with Inspect's own reader, which is the only judge of whether Inspect's viewer and tools can use
them: sample count, epochs, the transcript with its tool calls and results, scores, errors and
usage totals are compared with the run's own records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.export.inspect_log import default_log_name, dumps, export_inspect
from toolscore.report.export.inspect_sample import tool_call
from toolscore.runs.api import evaluate

inspect_log = pytest.importorskip("inspect_ai.log")


def stored(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return RunStore(run).latest()


def arguments(call: dict[str, Any]) -> dict[str, Any]:
    return json.loads(call["function"]["arguments"])


# -- ToolTalk, oracle ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tooltalk_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inspect") / "tooltalk"
    evaluate("tooltalk", "oracle", data=dataset("tooltalk"), out=path, split="hard", limit=3,
             epochs=2, cache=None, embedder="hashing")
    return path


@needs("tooltalk")
def test_tooltalk_run_reads_back_turn_by_turn(tooltalk_run: Path) -> None:
    target = export_inspect(tooltalk_run)
    assert target.parent == tooltalk_run / "inspect"
    # Inspect lists a .json log in a folder only under its own naming scheme
    listed = inspect_log.list_eval_logs(str(target.parent))
    assert [Path(info.name).name for info in listed] == [target.name]
    log = inspect_log.read_eval_log(str(target))
    records = stored(tooltalk_run)
    assert log.status == "success" and log.eval.task == "tooltalk" and log.eval.model == "oracle"
    assert log.eval.config.epochs == 2 and log.eval.dataset.samples == 3
    assert log.eval.metadata["toolscore"]["mode"] == "reference"
    assert log.eval.task_args["split"] == "hard"
    assert len(log.samples) == len(records) == 6
    assert {(s.id, s.epoch) for s in log.samples} == {(i, e + 1) for i, e in records}
    multi_turn = 0
    for sample in log.samples:
        record = records[(str(sample.id), sample.epoch - 1)]
        assert sample.metadata["toolscore_epoch"] == sample.epoch - 1
        assert sample.metadata["status"] == "ok" and sample.metadata["split"] == "hard"
        turns = record["output"]["turns"]
        multi_turn += len(turns) > 1
        messages = sample.messages
        assert messages[0].role == "system"
        assert messages[0].text == record["output"]["system_prompt"]
        expected = []  # per turn: the user's words, then the model's transcript as stored
        for turn in turns:
            expected += [("user", text, None) for text in turn["user"]]
            expected += [(m["role"], m.get("content") or "", m.get("tool_calls"))
                         for m in turn["transcript"]]
        assert [(m.role, m.text) for m in messages[1:]] == [(r, t) for r, t, _ in expected]
        for message, (_, _, calls) in zip(messages[1:], expected, strict=True):
            assert message.metadata["section"].startswith("turn ")
            if message.role == "assistant":  # ids made unique across turns (call_0_0#2)
                assert [(c.id.split("#")[0], c.function, c.arguments)
                        for c in message.tool_calls or []] == [
                    (c["id"], c["function"]["name"], arguments(c)) for c in calls or []]
        ids = [c.id for m in messages if m.role == "assistant" for c in m.tool_calls or []]
        assert len(ids) == len(set(ids))
        by_id = {c.id: (c.function, m.metadata["section"]) for m in messages
                 if m.role == "assistant" for c in m.tool_calls or []}
        results = [m for m in messages if m.role == "tool"]
        assert results and all(by_id[m.tool_call_id] == (m.function, m.metadata["section"])
                               for m in results)
        score = sample.scores["success"]  # one Inspect score per metric
        assert score.value is record["scores"]["success"] is True
        assert sample.scores["precision"].value == record["scores"]["precision"]
        assert score.metadata["outcomes"] == record["scores"]["outcomes"]
        assert score.answer == turns[-1]["transcript"][-1]["content"]
        assert sample.output.completion == score.answer
        assert sample.error is None
    assert multi_turn >= 1  # the hard split's conversations have several user turns
    metrics = json.loads((tooltalk_run / "scores.json").read_text())["hard"]
    [group] = log.results.scores
    assert group.name == "hard" and group.scorer == "tooltalk"
    assert {k: m.value for k, m in group.metrics.items()} == {
        k: metrics[k] for k in ("conversations", "success_rate", "final_state_success_rate",
                                "precision", "recall", "action_precision",
                                "incorrect_action_rate", "soft_success")}
    assert log.results.total_samples == log.results.completed_samples == 6


@needs("tooltalk")
def test_export_is_deterministic_and_streams_to_stdout(tooltalk_run: Path,
                                                       tmp_path: Path) -> None:
    first = export_inspect(tooltalk_run, tmp_path / "a.json")
    again = export_inspect(tooltalk_run, tmp_path / "b.json")
    assert first.read_bytes() == again.read_bytes()
    done = CliRunner().invoke(app, ["export", str(tooltalk_run), "-f", "inspect", "-o", "-"])
    assert done.exit_code == 0, done.output
    assert done.stdout.encode() == first.read_bytes()
    assert first.name != default_log_name(tooltalk_run)


# -- the demo with an infrastructure error ---------------------------------------------------
class DownFor(FakeOpenAIServer):
    """Answers like the oracle, except a non-retryable HTTP 400 for every request of the
    conversation whose user said ``marker``: those samples end in an infrastructure error."""

    def __init__(self, responder: Any, marker: str) -> None:
        super().__init__(responder)
        self.marker = marker

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if any(m.get("content") == self.marker for m in request["messages"]):
            return 400, {"error": {"message": "bad request (injected)", "code": "bad"}}
        return await super().handle_chat(request)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    oracle = oracle_recording("demo", embedder="hashing")
    victim = oracle.records["demo-calculate"]["output"]["turns"][0]["user"][0]
    path = tmp_path_factory.mktemp("inspect") / "demo"
    with DownFor(oracle.responder, victim) as srv:
        evaluate("demo", "openai/fake", base_url=srv.base_url, out=path, epochs=2, cache=None,
                 embedder="hashing")
    return path


def test_infrastructure_errors_are_unscored_samples_with_an_error(demo_run: Path,
                                                                   tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["export", str(demo_run), "--format", "inspect", "-o",
                                    str(tmp_path / "demo.json"), "--validate"])
    assert done.exit_code == 0, done.output
    assert "status error, 12 samples (2 with an error)" in " ".join(done.stderr.split())
    log = inspect_log.read_eval_log(str(tmp_path / "demo.json"))
    records = stored(demo_run)
    errored = [s for s in log.samples if s.error is not None]
    assert sorted((s.id, s.epoch) for s in errored) == [("demo-calculate", 1),
                                                        ("demo-calculate", 2)]
    for sample in errored:
        assert sample.scores is None and sample.metadata["status"] == "error"
        assert sample.error.message == records[("demo-calculate", sample.epoch - 1)]["error"]
        assert "400" in sample.error.message
    assert log.status == "error" and "2 of 12 samples" in log.error.message
    assert all(s.scores for s in log.samples if s.error is None)
    assert log.results.completed_samples == 10 and log.results.total_samples == 12
    assert [s.name for s in log.results.scores] == ["easy", "hard"]
    # usage: per sample as recorded, and the totals are the sum over the records
    tokens = 0
    for sample in log.samples:
        usage = records[(str(sample.id), sample.epoch - 1)]["usage"]
        if sample.error is not None:  # failed before the model answered: no tokens
            assert sample.model_usage == {} and usage["input_tokens"] == 0
            continue
        assert sample.model_usage["openai/fake"].input_tokens == usage["input_tokens"]
        assert sample.role_usage["assistant"].output_tokens == usage["output_tokens"]
        tokens += usage["input_tokens"] + usage["output_tokens"]
    assert tokens > 0
    assert log.stats.model_usage["openai/fake"].total_tokens == tokens
    assert log.stats.role_usage["assistant"].total_tokens == tokens


def test_eval_zip_holds_the_same_log_with_summaries(demo_run: Path, tmp_path: Path) -> None:
    """The .eval archive reads back as the same log as the .json one (Inspect's zip reader
    sorts samples by epoch and id), and the viewer's list of samples is there without them."""
    zipped = export_inspect(demo_run, tmp_path / "any-name.eval")
    plain = export_inspect(demo_run, tmp_path / "any-name.json")
    assert [Path(i.name).name for i in inspect_log.list_eval_logs(str(tmp_path))] == [
        "any-name.eval"]  # a .eval file is listed whatever its name; this .json is not

    def dump(path: Path) -> dict[str, Any]:
        doc = inspect_log.read_eval_log(str(path)).model_dump(exclude={"location"})
        doc["samples"].sort(key=lambda s: (s["epoch"], s["id"]))
        doc["eval"]["dataset"]["sample_ids"].sort()
        return doc

    assert dump(zipped) == dump(plain)
    summaries = inspect_log.read_eval_log_sample_summaries(str(zipped))
    assert len(summaries) == 12
    down = [s for s in summaries if s.error]
    assert [(s.id, s.scores) for s in down] == [("demo-calculate", None)] * 2
    up = next(s for s in summaries if s.id == "demo-add-item" and s.epoch == 1)
    assert up.scores["success"].value is True and up.message_count >= 3
    one = inspect_log.read_eval_log_sample(str(zipped), "demo-add-item", 2)
    assert one.messages[-1].role == "assistant" and one.scores["success"].answer


# -- AutoDE -------------------------------------------------------------------------------------
@needs("autode")
def test_autode_dialogue_and_call_read_back(tmp_path: Path) -> None:
    with FakeOpenAIServer() as srv:  # calls the first API offered, with no arguments
        evaluate("autode", "openai/fake", data=dataset("autode"), limit=2, cache=None,
                 base_url=srv.base_url, out=tmp_path / "run", strict=True)
    target = export_inspect(tmp_path / "run", tmp_path / "autode.json")
    log = inspect_log.read_eval_log(str(target))
    records = stored(tmp_path / "run")
    assert len(log.samples) == len(records) == 2
    for sample in log.samples:
        record = records[(str(sample.id), 0)]
        last = sample.messages[-1]
        assert last.role == "assistant"
        assert [c.function for c in last.tool_calls] == [record["output"]["called_api"]]
        assert sample.scores["f1"].value == record["scores"]["f1"]
    # the benchmark's mode label: toolscore's own protocol, as the run asked
    assert log.eval.metadata["toolscore"]["mode"] == "dynamic, strict (toolscore's own prompts)"


# -- ACS (its deterministic judge: no model) -----------------------------------------------
@needs("acs")
def test_acs_verdicts_and_agreement_read_back(tmp_path: Path) -> None:
    run = evaluate("acs", data=dataset("acs"), out=tmp_path / "run", cache=None, limit=6,
                   resamples=50)
    log = inspect_log.read_eval_log(str(export_inspect(run.path, tmp_path / "acs.json")))
    records = stored(run.path)
    assert len(log.samples) == len(records) == 6
    for sample in log.samples:
        record = records[(str(sample.id), 0)]
        assert [m.role for m in sample.messages] == ["user", "assistant"]
        value = {name: score.value for name, score in sample.scores.items()}
        assert value == {k: v for k, v in record["scores"].items() if k in value}
        assert value["correct"] is record["scores"]["correct"]
    overall = (run.metrics or {})["report"]["overall"]
    [scored] = [s for s in log.results.scores if s.name == "overall"]
    assert scored.metrics["n"].value == overall["n"] == 6
    assert scored.metrics["accuracy"].value == overall["metrics"]["accuracy"]["value"]
    assert log.results.metadata["judge"] == "acs-verify"


# -- shapes and bad input ----------------------------------------------------------------------
def test_malformed_arguments_are_kept_as_a_parse_error() -> None:
    bad = tool_call({"id": "c1", "function": {"name": "Add", "arguments": '{"a": 1,'}}, 0)
    assert bad["arguments"] == {} and bad["parse_error"].endswith('{"a": 1,')
    listed = tool_call({"function": {"name": "Add", "arguments": "[1, 2]"}}, 3)
    assert listed["id"] == "call_3" and "JSON list" in listed["parse_error"]
    assert tool_call({"name": "Add", "arguments": {"a": 1}}, 0)["arguments"] == {"a": 1}
    # Python's JSON reader takes NaN and lone surrogates; the written log holds neither
    odd = dumps(tool_call({"function": {"name": "Add", "arguments": '{"a": NaN, "b": "\\ud800"}'}},
                          0))
    assert odd.isascii() and json.loads(odd)["arguments"] == {"a": None, "b": "\ud800"}


def test_bad_input_is_one_line(demo_run: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["export", str(tmp_path), "-f", "inspect"])
    assert done.exit_code == 2 and "not a run directory" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
    done = CliRunner().invoke(app, ["export", str(demo_run), "-f", "inspect", "-o",
                                    str(tmp_path / "log.txt")])
    assert done.exit_code == 2 and "must end in .json or .eval" in done.stderr
    assert list(tmp_path.iterdir()) == []
    done = CliRunner().invoke(app, ["export", str(tmp_path), "-f", "csv", "--validate"])
    assert done.exit_code == 2 and "--validate needs --format inspect" in done.stderr


def test_a_run_stopped_before_its_end_is_a_started_log(demo_run: Path, tmp_path: Path) -> None:
    """No scores.json (the run was stopped): no results, Inspect's status "started"."""
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    for name in ("run.json", "samples.jsonl"):
        (stopped / name).write_bytes((demo_run / name).read_bytes())
    log = inspect_log.read_eval_log(str(export_inspect(stopped, tmp_path / "stopped.json")))
    assert log.status == "started" and log.results is None and len(log.samples) == 12


def test_samples_data_frame_has_one_column_per_metric(demo_run: Path, tmp_path: Path) -> None:
    """Inspect's own data-frame reader gives each metric its own column (a scalar per sample),
    not one JSON blob holding all of a record's scores."""
    analysis = pytest.importorskip("inspect_ai.analysis")
    target = export_inspect(demo_run, tmp_path / "demo.eval")
    frame = analysis.samples_df(str(target))
    records = stored(demo_run)
    scored = next(r for r in records.values() if r.get("status") == "ok")
    metrics = sorted(k for k, v in scored["scores"].items()
                     if v is None or isinstance(v, (bool, int, float, str)))
    assert metrics and all(f"score_{m}" in frame.columns for m in metrics)
    assert not any(c == "score_demo" for c in frame.columns)
    for _, row in frame.iterrows():
        record = records[(str(row["metadata_toolscore_id"] if "metadata_toolscore_id" in row
                              else row["id"]), int(row["epoch"]) - 1)]
        if record.get("status") != "ok":
            continue
        for m in metrics:
            got = row[f"score_{m}"]
            assert not isinstance(got, (dict, str)) or isinstance(record["scores"][m], str)
            if isinstance(record["scores"][m], (int, float)):
                assert float(got) == float(record["scores"][m])
