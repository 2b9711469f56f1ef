"""A mistake in what was asked is said before the dataset is looked for: a bad judge
configuration file or bad ACS options give their own one-line error whether or not the ACS
data is there; only a correct request without the data is told the data is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli import app


@pytest.fixture(autouse=True)
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-datasets"
    empty.mkdir()
    monkeypatch.setenv("TOOLSCORE_DATA", str(empty))  # the user cache is a fresh tmp folder


def invoke(*args: str) -> str:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 2, done.output
    return " ".join(done.output.split())


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judge.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", [["judge-agreement"], ["run", "acs"]])
def test_a_bad_judge_config_is_said_without_the_data(tmp_path: Path, command: list[str]
                                                     ) -> None:
    bad = config(tmp_path, "name: x\nkind: acs-llm\nvotes: -1\nmodel: openai/m\n")
    said = invoke(*command, "--judge-config", str(bad))
    assert "field 'votes'" in said and str(bad) in said and "not found" not in said
    wrong = config(tmp_path, "name: x\nkind: tooleval-pass\nmodel: openai/m\n")
    said = invoke(*command, "--judge-config", str(wrong))
    assert "cannot be used here" in said and "not found" not in said


def test_bad_options_are_said_without_the_data() -> None:
    said = invoke("judge-agreement", "--judge", "openai/m", "--votes", "0")
    assert "votes and max_tokens >= 1" in said
    said = invoke("run", "acs", "--shots", "2")
    assert "apply to LLM judges, not acs-verify" in said


def test_a_correct_request_without_the_data_is_told_so(tmp_path: Path) -> None:
    good = config(tmp_path, "name: x\nkind: acs-verify\n")
    said = invoke("judge-agreement", "--judge-config", str(good))
    assert "dataset 'acs' not found" in said and "--data" in said
