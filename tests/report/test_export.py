"""Export of a run as a table and ``toolscore.load_run``: every format round-trips to the same
DataFrame, errored samples keep their row, nested scores are left out."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import toolscore
from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.export.table import export_run, run_rows

pd = pytest.importorskip("pandas")


def write_run(path: Path) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": "m", "epochs": 2})
    for epoch in (1, 0):  # written out of order, as concurrent samples finish
        for i, sid in enumerate(("b", "a", "c")):
            record: dict[str, Any] = {"id": sid, "epoch": epoch,
                                      "meta": {"split": "hard" if sid == "c" else "easy"},
                                      "usage": {"input_tokens": 10 * (i + 1), "output_tokens": 3,
                                                "calls": 1, "cached_calls": epoch},
                                      "time_s": 0.25}
            if sid == "c" and epoch == 1:
                record.update(status="error", error="infrastructure: 429")
            else:
                record.update(status="ok", output={"turns": []},
                              scores={"success": sid != "b", "precision": 0.5 * i,
                                      "matches": i, "outcomes": [{"turn": 1}],
                                      "errors": {"bad call": 1}})
            store.append(record)
    return path


def test_rows_have_the_documented_columns(tmp_path: Path) -> None:
    columns, rows = run_rows(write_run(tmp_path / "run"))
    assert columns == ["id", "epoch", "split", "status", "error", "success", "precision",
                       "matches", "input_tokens", "output_tokens", "tokens", "calls",
                       "cached_calls", "time_s"]
    assert [(r["epoch"], r["id"]) for r in rows] == [(0, "a"), (0, "b"), (0, "c"), (1, "a"),
                                                    (1, "b"), (1, "c")]
    errored = rows[-1]
    assert errored["status"] == "error" and errored["success"] is None
    assert errored["error"] == "infrastructure: 429" and errored["tokens"] == 33


def test_load_run_dtypes(tmp_path: Path) -> None:
    frame = toolscore.load_run(write_run(tmp_path / "run")).to_pandas()
    assert len(frame) == 6
    assert str(frame["success"].dtype) == "boolean"
    assert frame["success"].isna().sum() == 1
    assert frame["success"].sum() == 3
    assert frame.groupby("split")["tokens"].sum().to_dict() == {"easy": 2 * (13 + 23),
                                                                "hard": 2 * 33}


def _normalise(frame: Any) -> Any:
    out = frame.copy()
    out["success"] = out["success"].astype("boolean")
    out["error"] = out["error"].astype(object).where(out["error"].notna(), None)
    return out.reset_index(drop=True)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_round_trips_to_load_run(tmp_path: Path, fmt: str) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    run = write_run(tmp_path / "run")
    target = export_run(run, fmt, tmp_path / f"out.{fmt}")
    reader = {"csv": pd.read_csv, "parquet": pd.read_parquet,
              "jsonl": lambda p: pd.read_json(p, lines=True)}[fmt]
    back = reader(target)
    pd.testing.assert_frame_equal(_normalise(back), _normalise(toolscore.load_run(run).to_pandas()),
                                  check_dtype=False)


def test_default_target_never_overwrites_the_run(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    assert export_run(run, "jsonl") == run / "export.jsonl"
    assert len((run / "samples.jsonl").read_text().splitlines()) == 6
    with pytest.raises(ValueError, match="refusing"):
        export_run(run, "jsonl", run / "samples.jsonl")
    with pytest.raises(ValueError, match="unknown format"):
        export_run(run, "xlsx")


def test_cli_export(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    cli = CliRunner()
    done = cli.invoke(app, ["export", str(run), "--format", "csv", "--out", "-"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == 6 and rows[0]["id"] == "a" and rows[-1]["success"] == ""
    done = cli.invoke(app, ["export", str(run), "-f", "jsonl", "-o", str(tmp_path / "x.jsonl")])
    assert done.exit_code == 0, done.output
    lines = (tmp_path / "x.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["success"] is True
    assert cli.invoke(app, ["export", str(tmp_path), "-f", "csv"]).exit_code == 2


def test_missing_pandas_names_the_report_extra(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    run = write_run(tmp_path / "run")
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match=r"toolscore\[report\]"):
        toolscore.load_run(run).to_pandas()
    assert export_run(run, "csv").is_file()  # csv and jsonl need no pandas
