"""BFCL's own columns on the leaderboard: its summary figures and per-category accuracy, as
BFCL prints them, beside the headline metric (Markdown, CSV, JSON and the HTML page)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from support.data import dataset

from toolscore.report.leaderboard.build import build_leaderboard
from toolscore.report.leaderboard.html import render_leaderboard_html
from toolscore.report.leaderboard.text import to_csv, to_markdown
from toolscore.runs.api import evaluate


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bfcl-board")
    evaluate("bfcl", "oracle", data=dataset("bfcl"), out=root / "oracle", cache=None,
             download=False, category=["live_parallel", "live_relevance"])
    return root


def test_board_shows_bfcls_summary_and_categories(runs: Path) -> None:
    doc = build_leaderboard([runs])
    [board] = doc["boards"]
    shown = json.loads((runs / "oracle" / "scores.json").read_text())["bfcl"]
    assert board["columns"][:3] == ["overall", "non-live", "live"]
    assert "multi-turn" in board["columns"] and "live_parallel" in board["columns"]
    [cell] = board["cells"]
    assert cell["columns"]["overall"] == shown["overall"]
    assert cell["columns"]["live_parallel"] == shown["live_parallel"] == "100.00%"
    md = to_markdown(doc)
    header = next(line for line in md.splitlines() if line.startswith("| rank"))
    names = [c.strip() for c in header.strip("|").split("|")]
    assert names[:5] == ["rank", "model", "value [95% CI]", "n", "overall"]
    row = next(line for line in md.splitlines() if line.startswith("| 1 "))
    values = [c.strip() for c in row.strip("|").split("|")]
    assert values[names.index("non-live")] == shown["non_live"]
    assert values[names.index("live_relevance")] == shown["live_relevance"]
    [line] = list(csv.DictReader(io.StringIO(to_csv(doc))))
    assert json.loads(line["columns"])["overall"] == shown["overall"]
    page = render_leaderboard_html(doc, runs)
    assert "<th>non-live</th>" in page and f">{shown['overall']}<" in page


def test_other_benchmarks_keep_the_plain_board(tmp_path: Path) -> None:
    evaluate("demo", "oracle", out=tmp_path / "demo", cache=None)
    doc = build_leaderboard([tmp_path])
    assert all(not b.get("columns") for b in doc["boards"])
    header = next(line for line in to_markdown(doc).splitlines() if line.startswith("| rank"))
    assert "| n | p vs best |" in header
