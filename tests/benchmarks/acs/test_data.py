"""The ACS csv loader: validated rows, one-line errors naming file, row and field."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from support.data import ROOT as _DATA_ROOT
from support.data import needs

from toolscore.benchmarks.acs.data import COLUMNS, DataError, load_rows

DATA = _DATA_ROOT / "acs"


def _write(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns))
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


def _row(**kw: str) -> dict[str, str]:
    base = {"row_id": "1", "user_request": "Plan 2 days.", "agent_response": "**Day 1**",
            "constraint": "The plan must span 2 days.", "is_constraint_satisfied": "0",
            "domain": "meal-planning"}
    return {**base, **kw}


def test_loads_rows(tmp_path: Path) -> None:
    rows = load_rows(_write(tmp_path / "a.csv", [_row(), _row(row_id="2",
                                                             is_constraint_satisfied="1")]))
    assert [(r.row_id, r.label) for r in rows] == [("1", False), ("2", True)]
    assert rows[0].domain == "meal-planning" and rows[0].constraint.endswith("2 days.")


@pytest.mark.parametrize("bad,field", [
    ({"is_constraint_satisfied": "yes"}, "is_constraint_satisfied"),
    ({"domain": "cooking"}, "domain"),
    ({"agent_response": " "}, "agent_response"),
    ({"row_id": ""}, "row_id"),
])
def test_bad_field_is_named(tmp_path: Path, bad: dict[str, str], field: str) -> None:
    path = _write(tmp_path / "b.csv", [_row(), {**_row(row_id="7"), **bad}])
    with pytest.raises(DataError) as err:
        load_rows(path)
    msg = str(err.value)
    assert "b.csv" in msg and "line 3" in msg and field in msg and "\n" not in msg


def test_duplicate_row_and_missing_column(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="duplicate"):
        load_rows(_write(tmp_path / "c.csv", [_row(), _row()]))
    with pytest.raises(DataError, match="missing column"):
        load_rows(_write(tmp_path / "d.csv", [], COLUMNS[:-1]))
    with pytest.raises(DataError, match="not found"):
        load_rows(tmp_path / "nowhere.csv")


@needs("acs")
def test_released_dev_file() -> None:
    rows = load_rows(DATA)
    assert len(rows) == 322 and len({(r.request, r.response) for r in rows}) == 80
