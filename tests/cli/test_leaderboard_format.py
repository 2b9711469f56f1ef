"""``toolscore leaderboard --format json`` is the same document as ``--json``; the table formats
stay as they were and an unknown format is click's usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.runs.api import evaluate


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board") / "demo-oracle"
    evaluate("demo", "oracle", embedder="hashing", cache=None, out=out)
    return out


def board(*args: str) -> str:
    done = CliRunner().invoke(app, ["leaderboard", *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_format_json_is_the_json_document(run_dir: Path) -> None:
    common = (str(run_dir), "--resamples", "50")
    as_format = board(*common, "--format", "json")
    assert json.loads(as_format)["boards"][0]["benchmark"] == "demo"
    assert as_format == board(*common, "--json")


def test_table_formats_are_unchanged(run_dir: Path) -> None:
    common = (str(run_dir), "--resamples", "50")
    assert board(*common).startswith("# Leaderboard")
    assert board(*common, "--format", "csv").startswith("board,benchmark,split,metric,rank")
    bad = CliRunner().invoke(app, ["leaderboard", *common, "--format", "yaml"])
    assert bad.exit_code == 2 and "'yaml' is not one of 'md', 'csv', 'json'" in bad.output
