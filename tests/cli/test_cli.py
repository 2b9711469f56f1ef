"""The ``toolscore`` command as a user meets it: a subprocess, its stdout, stderr and exit code.

``--json`` prints exactly one JSON document; ``score`` reproduces a run's metrics from its
directory without any model; every user mistake is one line on stderr and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

from toolscore.cli import app

METRICS = ("success_rate", "precision", "recall", "action_precision", "incorrect_action_rate")
DEMO = ("--embedder", "hashing")


def test_run_prints_one_json_document_with_the_spec_metrics(tmp_path: Path) -> None:
    doc = json_doc(toolscore("run", "demo", "--model", "oracle", *DEMO, "--json", cwd=tmp_path))
    metrics = doc["metrics"]
    splits = [k for k, v in metrics.items() if isinstance(v, dict) and "conversations" in v]
    assert sorted(splits) == ["easy", "hard"]
    for split in splits:
        assert {m: metrics[split][m] for m in METRICS} == {
            "success_rate": 1.0, "precision": 1.0, "recall": 1.0, "action_precision": 1.0,
            "incorrect_action_rate": 0.0}
    assert metrics["errors"] == 0
    run_dir = tmp_path / doc["run_dir"]  # by default under ./runs
    assert run_dir.parent == tmp_path / "runs"
    assert {p.name for p in run_dir.iterdir()} >= {"run.json", "samples.jsonl", "scores.json"}
    assert json.loads((run_dir / "scores.json").read_text()) == metrics


def test_score_reproduces_a_run_without_model_calls(tmp_path: Path) -> None:
    oracle = oracle_recording("demo", None, embedder="hashing")
    with FakeOpenAIServer(oracle.responder) as srv:
        doc = json_doc(toolscore("run", "demo", "--model", "openai/fake", "--base-url",
                                 srv.base_url, "--no-cache", *DEMO, "--out", "run", "--json",
                                 cwd=tmp_path, env={"OPENAI_API_KEY": "dummy"}))
    assert srv.requests == oracle.calls == doc["summary"]["calls"]
    # The endpoint is gone and no key is set: any model call would fail.
    rescored = json_doc(toolscore("score", "run", "--json", cwd=tmp_path))
    assert rescored["metrics"] == doc["metrics"]
    assert all(rescored["metrics"][s]["success_rate"] == 1.0 for s in ("easy", "hard"))


def test_models_lists_every_provider(tmp_path: Path) -> None:
    rows = json_doc(toolscore("models", "--json", cwd=tmp_path))["models"]
    assert [r["provider"] for r in rows] == ["agent-http", "anthropic", "litellm", "local",
                                            "openai", "openai-responses", "oracle", "replay"]
    for r in rows:
        assert set(r) == {"provider", "example", "installed", "usable", "requirements"}
    assert {r["provider"]: r["installed"] for r in rows}["oracle"] is True


@needs("tooltalk")
def test_data_prints_where_the_dataset_is(tmp_path: Path) -> None:
    folder = dataset("tooltalk")
    doc = json_doc(toolscore("data", "tooltalk", "--data", str(folder), "--json", cwd=tmp_path))
    assert doc == {"dataset": "tooltalk", "path": str(folder)}


NO_DATA = {"TOOLSCORE_DATA": ""}  # and the cache folder is empty: nothing to find


@pytest.mark.parametrize(("args", "env", "message"), [
    (["run", "nosuch", "--model", "oracle"], {}, "unknown benchmark 'nosuch'"),
    (["run", "demo", "--model", "nosuch/model", *DEMO], {}, "unknown model provider 'nosuch'"),
    (["run", "demo", "--model", "gpt-4o", *DEMO], {}, "bad model name 'gpt-4o'"),
    (["run", "tooltalk", "--model", "oracle", "--data", "nonexistent", "--no-download"],
     NO_DATA, "--data nonexistent: no tooltalk dataset there"),
    (["data", "tooltalk", "--no-download"], NO_DATA, "dataset 'tooltalk' not found"),
    (["score", "nonexistent"], {}, "not a run directory"),
    (["run", "demo", "--model", "oracle", "--resume", "nonexistent"], {},
     "not a run directory"),
], ids=["benchmark", "provider", "model-name", "run-no-data", "data-no-data", "score-no-run",
        "resume-no-run"])
def test_user_errors_are_one_line_and_exit_2(args: list[str], env: dict[str, str], message: str,
                                             tmp_path: Path) -> None:
    done = toolscore(*args, cwd=tmp_path, env=env)
    assert_user_error(done, message)


def test_an_existing_run_directory_is_not_overwritten(tmp_path: Path) -> None:
    json_doc(toolscore("run", "demo", "--model", "oracle", *DEMO, "--out", "run", "--json",
                       cwd=tmp_path))
    before = (tmp_path / "run" / "samples.jsonl").read_bytes()
    done = toolscore("run", "demo", "--model", "oracle", *DEMO, "--out", "run", cwd=tmp_path)
    assert_user_error(done, "already a run directory; use --resume")
    assert (tmp_path / "run" / "samples.jsonl").read_bytes() == before


COMMANDS = sorted(app.commands)


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_works_for_every_command(command: str | None, tmp_path: Path) -> None:
    done = toolscore(*([command] if command else []), "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout and done.stderr == ""
    if command is None:
        assert all(c in done.stdout for c in COMMANDS)
