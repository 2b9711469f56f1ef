"""``toolscore score RUN -T KEY=VALUE`` says which mode it scored in: the printed header and the
``--json`` document's configuration carry the overridden option as the benchmark read it,
while the run's own files keep theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.runs.api import evaluate


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("score-mode")
    for name, strict in (("reference", False), ("strict", True)):
        evaluate("demo", "oracle", embedder="hashing", cache=None, out=root / name,
                 strict=strict)
    return {"reference": root / "reference", "strict": root / "strict"}


def score(*args: str) -> str:
    done = CliRunner().invoke(app, ["score", *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def header(text: str) -> str:
    return " ".join(text.split("┏")[0].split())


@pytest.mark.parametrize(("run", "value", "mode"), [("reference", "true", "strict"),
                                                    ("strict", "false", "reference")])
def test_header_and_json_name_the_mode_scored_in(runs: dict[str, Path], run: str, value: str,
                                                 mode: str) -> None:
    path = runs[run]
    assert f"· {run} mode ·" in header(score(str(path)))
    shown = header(score(str(path), "-T", f"strict={value}"))
    assert shown.startswith("demo · model oracle") and f"· {mode} mode ·" in shown
    doc = json.loads(score(str(path), "-T", f"strict={value}", "--json"))
    wanted = mode == "strict"
    assert doc["config"]["options"]["strict"] is wanted
    assert doc["config"]["benchmark_config"]["strict"] is wanted
    assert doc["metrics"]["strict"] is wanted
    # a what-if rescoring leaves the run's own configuration and scores alone
    assert json.loads((path / "run.json").read_text())["options"]["strict"] is not wanted
    assert json.loads((path / "scores.json").read_text())["strict"] is not wanted
