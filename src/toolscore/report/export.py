"""A run as a flat table: one row per (sample, epoch), for pandas, spreadsheets and other tools.

A run directory is the record of truth, but most analysis beyond the built-in reports (plots,
regressions on sample features, joins with other runs) is done in a DataFrame. This module turns
``samples.jsonl`` into rows with a stable set of columns, so the same run always exports to the
same table:

``id, epoch, split, status, error, <every scalar score>, input_tokens, output_tokens, tokens,
calls, cached_calls, time_s``

Nested scores (per-turn outcomes, error-type counts) are left out: they do not fit in a cell and
stay in the run directory. CSV and JSONL need only the standard library; Parquet and
:func:`load_run` need pandas and pyarrow (``pip install 'toolscore[report]'``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toolscore.runs.store import RunStore

if TYPE_CHECKING:
    import pandas as pd

BASE_COLUMNS = ("id", "epoch", "split", "status", "error")
USAGE_COLUMNS = ("input_tokens", "output_tokens", "tokens", "calls", "cached_calls", "time_s")
FORMATS = ("csv", "jsonl", "parquet")


def is_scalar(value: Any) -> bool:
    """A score that fits in one cell: bool, number or missing (dicts and lists do not)."""
    return value is None or isinstance(value, (bool, int, float, str))


def sorted_records(path: str | Path) -> list[dict[str, Any]]:
    """The latest record of every (sample id, epoch) of a run, sorted by epoch then id.

    Sorting makes the export independent of the order in which concurrent samples finished.
    """
    store = RunStore(path)
    store.read_config()  # a clear error for a path that is not a run directory
    return sorted(store.latest().values(), key=lambda r: (int(r.get("epoch", 0)), str(r["id"])))


def score_columns(records: list[dict[str, Any]]) -> list[str]:
    """Every scalar score name, in order of first appearance (clashes with base columns renamed)."""
    names: dict[str, None] = {}
    for r in records:
        for key, value in (r.get("scores") or {}).items():
            if is_scalar(value):
                names[key] = None
    return list(names)


def _column_name(score: str) -> str:
    return f"score_{score}" if score in BASE_COLUMNS or score in USAGE_COLUMNS else score


def run_rows(path: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, rows) of a run: one row per (sample, epoch), missing values as ``None``."""
    records = sorted_records(path)
    scores = score_columns(records)
    columns = [*BASE_COLUMNS, *(_column_name(s) for s in scores), *USAGE_COLUMNS]
    rows = []
    for r in records:
        usage = r.get("usage") or {}
        rec_scores = r.get("scores") or {}
        row: dict[str, Any] = {
            "id": str(r["id"]), "epoch": int(r.get("epoch", 0)),
            "split": (r.get("meta") or {}).get("split"), "status": r.get("status"),
            "error": r.get("error"),
        }
        for s in scores:
            value = rec_scores.get(s)
            row[_column_name(s)] = value if is_scalar(value) else None
        inp, out = usage.get("input_tokens"), usage.get("output_tokens")
        row.update(input_tokens=inp, output_tokens=out,
                   tokens=(inp or 0) + (out or 0) if inp is not None or out is not None else None,
                   calls=usage.get("calls"), cached_calls=usage.get("cached_calls"),
                   time_s=r.get("time_s"))
        rows.append(row)
    return columns, rows


def _require_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("pandas is needed for DataFrames and Parquet: "
                          "pip install 'toolscore[report]'") from None
    return pandas


def load_run(path: str | Path) -> pd.DataFrame:
    """A run directory as a pandas DataFrame, one row per (sample, epoch).

    Pass/fail scores become pandas' nullable ``boolean`` dtype, so an errored sample (no scores)
    is ``<NA>`` rather than turning the whole column into ``object``.
    """
    pd = _require_pandas()
    columns, rows = run_rows(path)
    frame = pd.DataFrame(rows, columns=columns)
    for col in columns:
        values = [v for v in frame[col] if v is not None and v == v]
        if values and all(isinstance(v, bool) for v in values):
            frame[col] = frame[col].astype("boolean")
    frame["epoch"] = frame["epoch"].astype("int64")
    return frame


def export_run(path: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Write a run's table as ``csv``, ``jsonl`` or ``parquet``; returns the file written.

    The default file is ``<run dir>/export.<fmt>``, next to the data it was derived from.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    target = Path(out) if out is not None else Path(path) / f"export.{fmt}"
    if target.resolve() == (Path(path) / "samples.jsonl").resolve():
        raise ValueError(f"{target}: refusing to overwrite the run's own samples.jsonl")
    if fmt == "parquet":
        frame = load_run(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(target, index=False)
        return target
    columns, rows = run_rows(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8", newline="") as fh:
        write_rows(fh, fmt, columns, rows)
    return target


def write_rows(fh: IO[str], fmt: str, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Write rows as CSV (missing values empty) or JSONL (missing values null) to a text stream."""
    if fmt == "csv":
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    elif fmt == "jsonl":
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"{fmt!r} cannot be written to a text stream; use csv or jsonl")
