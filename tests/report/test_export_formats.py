"""Export formats are entry points (``toolscore.exports``): toolscore's own are listed by
``toolscore export --help`` and an installed package's format is used like a built-in one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.dists import install

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.export.formats import ExportFormat, get_format, listing

FORMAT_MODULE = '''
from pathlib import Path
from toolscore.records.export_format import ExportFormat


def write(run, out):
    target = Path(out) if out is not None else Path(run) / "export.ids"
    ids = [line.split('"id": "')[1].split('"')[0]
           for line in (Path(run) / "samples.jsonl").read_text().splitlines()]
    target.write_text("\\n".join(ids) + "\\n")
    return target


FORMAT = ExportFormat("ids", "sample ids, one a line", write)
BROKEN = "not a format"
'''


def small_run(path: Path) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": "m"})
    for sid in ("a", "b"):
        record: dict[str, Any] = {"id": sid, "epoch": 0, "status": "ok",
                                  "output": {"turns": []}, "scores": {"success": sid == "a"}}
        store.append(record)
    return path


def test_builtin_formats_are_listed_with_what_they_write() -> None:
    found = listing()
    assert {"csv", "jsonl", "parquet", "inspect"} <= set(found)
    assert all(isinstance(get_format(n), ExportFormat) for n in ("csv", "jsonl", "inspect"))
    shown = CliRunner().invoke(app, ["export", "--help"])
    assert shown.exit_code == 0
    assert "Formats (--format)" in shown.output and "Inspect log" in shown.output


def test_an_installed_format_is_used_and_listed(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, {"ids": "{module}:FORMAT", "broken": "{module}:BROKEN"},
            module_source=FORMAT_MODULE, group="toolscore.exports")
    run = small_run(tmp_path / "run")
    done = CliRunner().invoke(app, ["export", str(run), "-f", "ids", "-o",
                                    str(tmp_path / "x.ids")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "x.ids").read_text() == "a\nb\n"
    assert listing()["ids"] == "sample ids, one a line"
    assert "cannot be loaded" in listing()["broken"]
    done = CliRunner().invoke(app, ["export", str(run), "-f", "broken"])
    assert done.exit_code == 2
    assert "not a toolscore.records.export_format.ExportFormat" in done.stderr
    done = CliRunner().invoke(app, ["export", str(run), "-f", "ids", "-o", "-"])
    assert done.exit_code == 2 and "cannot be written to stdout" in done.stderr


def test_an_unknown_format_names_the_known_ones(tmp_path: Path) -> None:
    run = small_run(tmp_path / "run")
    done = CliRunner().invoke(app, ["export", str(run), "-f", "xlsx"])
    assert done.exit_code == 2 and "unknown format 'xlsx'" in done.stderr
    assert "csv" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = CliRunner().invoke(app, ["export", str(run), "-f", "jsonl", "-o", "-"])
    assert done.exit_code == 0 and json.loads(done.stdout.splitlines()[0])["id"] == "a"
