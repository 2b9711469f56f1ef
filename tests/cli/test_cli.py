"""The ``toolscore`` command as a user meets it: a subprocess, its stdout, stderr and exit code.

``--json`` prints exactly one JSON document; ``score`` reproduces a run's metrics from its
directory without any model; every user mistake is one line on stderr and exit code 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from toolscore.cli import app
from toolscore.testing.openai_server import FakeOpenAIServer
from toolscore.testing.oracle_replies import oracle_recording

DATA = Path(os.environ.get("TOOLSCORE_DATA", "/work/shared/datasets")) / "tooltalk"
METRICS = ("success_rate", "precision", "recall", "action_precision", "incorrect_action_rate")
DEMO = ("--embedder", "hashing")


def toolscore(*args: str, cwd: Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """Run the CLI in ``cwd`` with a private cache folder and no API keys."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=300)


def json_doc(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # the whole of stdout is one document


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
    assert [r["provider"] for r in rows] == ["anthropic", "local", "openai", "oracle", "replay"]
    for r in rows:
        assert set(r) == {"provider", "example", "installed", "requirements"}
    assert {r["provider"]: r["installed"] for r in rows}["oracle"] is True


@pytest.mark.skipif(not (DATA / "databases").is_dir(), reason=f"ToolTalk data not at {DATA}")
def test_data_prints_where_the_dataset_is(tmp_path: Path) -> None:
    doc = json_doc(toolscore("data", "tooltalk", "--data", str(DATA), "--json", cwd=tmp_path))
    assert doc == {"dataset": "tooltalk", "path": str(DATA)}


NO_DATA = {"TOOLSCORE_DATA": ""}  # and the cache folder is empty: nothing to find


@pytest.mark.parametrize(("args", "env", "message"), [
    (["run", "nosuch", "--model", "oracle"], {}, "unknown benchmark 'nosuch'"),
    (["run", "demo", "--model", "nosuch/model", *DEMO], {}, "unknown model provider 'nosuch'"),
    (["run", "demo", "--model", "gpt-4o", *DEMO], {}, "bad model name 'gpt-4o'"),
    (["run", "tooltalk", "--model", "oracle", "--data", "/nonexistent", "--no-download"],
     NO_DATA, "--data /nonexistent: no tooltalk dataset there"),
    (["data", "tooltalk", "--no-download"], NO_DATA, "dataset 'tooltalk' not found"),
    (["score", "/nonexistent"], {}, "not a run directory"),
    (["run", "demo", "--model", "oracle", "--resume", "/nonexistent"], {},
     "not a run directory"),
], ids=["benchmark", "provider", "model-name", "run-no-data", "data-no-data", "score-no-run",
        "resume-no-run"])
def test_user_errors_are_one_line_and_exit_2(args: list[str], env: dict[str, str], message: str,
                                             tmp_path: Path) -> None:
    done = toolscore(*args, cwd=tmp_path, env=env)
    assert_user_error(done, message)


def assert_user_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and message in lines[0], lines[0]


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
