"""Text from models and endpoints is shown, never obeyed (issue 10, item 9): terminal escape
sequences and control characters in stderr, tables and CSV exports, and bidi overrides and
controls in the HTML report, come out as visible ``\\xNN`` / ``\\uNNNN`` text."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support.cli import toolscore

from toolscore.records import RunStore
from toolscore.report.export.table import export_run, printable
from toolscore.report.html.page import render_html

HOSTILE = ("\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m \u202egnp.exe\u202c \u2066iso\u2069 "
           "nul\x00 bs\x08 c1\x9b31m del\x7f cr\rline")
ACTIVE = ["\x1b", "\x07", "\x00", "\x08", "\x9b", "\x7f", "\r", "\u202e", "\u202c", "\u2066",
          "\u2069"]


def test_printable_shows_every_active_character() -> None:
    shown = printable(HOSTILE)
    assert not [c for c in ACTIVE if c in shown]
    assert "\\x1b[2J" in shown and "\\u202egnp.exe" in shown and "\\x00" in shown
    assert printable("line one\n\ttab, é, 中文, emoji 😀") == "line one\n\ttab, é, 中文, emoji 😀"
    assert printable(3) == 3 and printable(None) is None


@pytest.fixture()
def hostile_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    store = RunStore(run)
    store.write_config({"benchmark": "demo", "model": "oracle", "options": {}})
    store.append({"id": f"s1{HOSTILE}", "epoch": 0, "status": "error",
                  "error": f"harness: {HOSTILE}", "meta": {"split": "x"}, "output": {},
                  "scores": {}})
    store.append({"id": "s2", "epoch": 0, "status": "ok", "meta": {"split": "x"},
                  "output": {"final": HOSTILE}, "scores": {"success": True}})
    store.write_scores({})
    return run


def test_csv_export_cells_are_inert(hostile_run: Path) -> None:
    out = export_run(hostile_run, "csv")
    text = out.read_text(encoding="utf-8")
    assert not [c for c in ACTIVE if c in text], text
    rows = list(csv.DictReader(text.splitlines()))
    assert rows[0]["id"].startswith("s1\\x1b]0;pwned")


def test_html_report_shows_overrides_and_controls(hostile_run: Path) -> None:
    page = render_html(hostile_run)
    body = page.split("<script", 1)[0]  # the data island is JSON (ASCII escapes) by design
    assert not [c for c in ACTIVE if c in body], [c for c in ACTIVE if c in body]
    assert "\\u202egnp.exe" in body


def test_error_line_on_stderr_is_inert(tmp_path: Path) -> None:
    bad = tmp_path / ("run" + HOSTILE.replace("/", "_").replace("\x00", ""))
    done = toolscore("report", str(bad), cwd=tmp_path)
    assert done.returncode == 2
    assert not [c for c in ACTIVE if c in done.stderr], repr(done.stderr)
    assert "\\x1b" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    json.dumps(done.stderr)
