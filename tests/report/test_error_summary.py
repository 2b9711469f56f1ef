"""A run whose samples all ended in an infrastructure error has no metrics to tabulate: it prints
how many samples and why (the distinct error messages, most frequent first, each on one
printable line of bounded length) instead of an empty table. A run with some errors keeps its
table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from support.testing.openai_server import FakeOpenAIServer

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.errors import MAX_CHARS, error_counts, error_lines
from toolscore.report.tables import print_run_summary
from toolscore.runs.api import evaluate, load_run

REFUSED = dict.fromkeys(range(4), "400")  # every request refused, not retried


def failed(message: str) -> dict[str, Any]:
    return {"status": "error", "error": message}


def printed(run_dir: Path | None, config: dict[str, Any], metrics: dict[str, Any]) -> str:
    console = Console(record=True, width=100)
    print_run_summary(console, config, metrics, {"calls": 0, "tokens": 0, "wall_s": 0.1},
                      run_dir=run_dir)
    return console.export_text()


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("refused") / "run"
    with FakeOpenAIServer(fault_plan=REFUSED) as srv:
        evaluate("demo", "openai/fake", base_url=srv.base_url, embedder="hashing", cache=None,
                 out=out, timeout=10)
    return out


def test_messages_are_counted_merged_and_shortened() -> None:
    records = [failed("HTTP 401: bad key")] * 3 + [
        failed("infrastructure: gave up after 17 attempt(s) in 113.8s: cannot connect to "
               "127.0.0.1:8000"),
        failed("infrastructure: gave up after 15 attempt(s) in 116.6s: cannot connect to "
               "127.0.0.1:8000"),
        failed("quota\n exceeded \x1b[31mnow"), failed("x" * 500), {"status": "ok"},
        failed("a"), failed("b"), failed("c")]
    counts = error_counts(records)
    assert counts[:3] == [
        ("HTTP 401: bad key", 3),
        ("infrastructure: gave up after N attempt(s) in Ns: cannot connect to 127.0.0.1:8000",
         2),
        ("quota exceeded \\x1b[31mnow", 1)]
    long = counts[3][0]
    assert len(long) == MAX_CHARS and long.endswith("…")
    assert counts[4:] == [("a", 1), ("b", 1), ("c", 1)]
    lines = error_lines(10, counts)
    assert lines[0] == ("no scores: all 10 samples ended in an infrastructure error "
                        "(7 distinct messages):")
    assert lines[1] == "  3 × HTTP 401: bad key" and len(lines) == 7
    assert lines[-1] == "  … and 2 other messages (2 samples)"


def test_a_run_with_every_sample_refused_prints_its_errors(refused: Path) -> None:
    run = load_run(refused)
    config = run.config.to_dict()
    text = printed(refused, config, run.metrics or {})
    lines = text.splitlines()
    assert "┏" not in text and "errors (excluded" not in text
    assert lines[0].startswith("demo · model openai/fake")
    assert lines[1] == ("no scores: all 6 samples ended in an infrastructure error "
                        "(1 distinct message):")
    assert lines[2].startswith("  6 × infrastructure: HTTP 400") and len(lines[2]) <= 6 + \
        MAX_CHARS
    assert lines[3].startswith("model calls 0")
    # without the run directory: the count, still no empty table
    alone = printed(None, config, run.metrics or {})
    assert "┏" not in alone and "no scores: all 6 samples ended in an infrastructure error" \
        in alone


def test_a_run_with_some_errors_keeps_its_table(tmp_path: Path) -> None:
    run = evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "run")
    first = next(iter(RunStore(run.path).latest().values()))
    RunStore(run.path).append({**{k: first[k] for k in ("id", "epoch", "meta")},
                               "status": "error", "error": "infrastructure: HTTP 500"})
    text = printed(run.path, run.config.to_dict(), {**(run.metrics or {}), "errors": 1})
    assert "┏" in text and "success" in text and "errors (excluded from scores): 1" in text
    assert "no scores" not in text


def test_run_command_prints_no_empty_table(tmp_path: Path) -> None:
    with FakeOpenAIServer(fault_plan=REFUSED) as srv:
        done = CliRunner().invoke(app, ["run", "demo", "-m", "openai/fake", "--base-url",
                                        srv.base_url, "--embedder", "hashing", "--no-cache",
                                        "--timeout", "10", "--out", str(tmp_path / "run")])
    assert done.exit_code == 3, done.output
    assert "┏" not in done.stdout
    assert "no scores: all 6 samples ended in an infrastructure error" in done.stdout


def test_report_of_a_run_with_every_sample_refused(refused: Path) -> None:
    done = CliRunner().invoke(app, ["report", str(refused)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "┏" not in done.stdout
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("no scores"))
    assert lines[start] == ("no scores: all 6 samples ended in an infrastructure error "
                            "(1 distinct message):")
    assert lines[start + 1].startswith("  6 × infrastructure: HTTP 400")
