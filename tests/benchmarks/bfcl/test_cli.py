"""The bfcl benchmark from the command line: ``toolscore run bfcl`` with its options,
``toolscore export RUN --format bfcl`` and ``toolscore score bfcl --predictions DIR``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from support.data import dataset

from toolscore.cli import app


def cli(*args: str) -> str:
    done = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_run_export_and_score_the_result_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = cli("run", "bfcl", "--model", "oracle", "--data", str(dataset("bfcl")), "--out",
              str(run), "--no-cache", "--category", "live_relevance",
              "--category", "irrelevance,live_irrelevance", "--limit", "30")
    assert "BFCL summary" in out
    config = json.loads((run / "run.json").read_text())
    assert config["options"]["category"] == ["live_relevance", "irrelevance,live_irrelevance"]
    assert config["benchmark_config"]["categories"] == ["irrelevance", "live_irrelevance",
                                                        "live_relevance"]
    cli("export", str(run), "--format", "bfcl", "--out", str(tmp_path / "results"))
    written = sorted(p.name for p in (tmp_path / "results").rglob("*_result.json"))
    assert written == ["BFCL_v4_irrelevance_result.json"]  # the first 30 samples
    doc = json.loads(cli("score", "bfcl", "--predictions", str(tmp_path / "results"),
                         "--data", str(dataset("bfcl")), "--json"))
    assert doc["metrics"]["irrelevance"] == {"accuracy": 1.0, "correct": 30, "total": 30}


def test_unsupported_category_is_one_line(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["run", "bfcl", "--model", "oracle", "--data",
                                    str(dataset("bfcl")), "--out", str(tmp_path / "r"),
                                    "--category", "format_sensitivity"])
    assert done.exit_code != 0
    assert "not yet supported by toolscore" in done.output
    assert "Traceback" not in done.output
