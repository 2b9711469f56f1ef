"""A run as a flat table: one row per (sample, epoch), for pandas, spreadsheets and other tools.

Columns are stable, so the same run always gives the same table:
``id, epoch, split, status, error, <every scalar score>, input_tokens, output_tokens, tokens,
calls, cached_calls, time_s``. Nested scores (per-turn outcomes, error-type counts) do not fit
in a cell and stay in the run directory. DataFrames need pandas (``toolscore[report]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

BASE_COLUMNS = ("id", "epoch", "split", "status", "error")
USAGE_COLUMNS = ("input_tokens", "output_tokens", "tokens", "calls", "cached_calls", "time_s")
FORMATS = ("csv", "jsonl", "parquet")


def is_scalar(value: Any) -> bool:
    """A score that fits in one cell: bool, number or missing (dicts and lists do not)."""
    return value is None or isinstance(value, (bool, int, float, str))


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


def record_rows(records: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, rows): one row per record, in (epoch, id) order, missing values None.
    Sorting makes the table independent of the order in which concurrent samples finished."""
    records = sorted(records, key=lambda r: (int(r.get("epoch", 0)), str(r["id"])))
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


def require_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("pandas is needed for DataFrames and Parquet: "
                          "pip install 'toolscore[report]'") from None
    return pandas


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Records as a pandas DataFrame, one row per (sample, epoch).

    Pass/fail scores become pandas' nullable ``boolean`` dtype, so an errored sample (no scores)
    is ``<NA>`` rather than turning the whole column into ``object``.
    """
    pd = require_pandas()
    columns, rows = record_rows(records)
    frame = pd.DataFrame(rows, columns=columns)
    for col in columns:
        values = [v for v in frame[col] if v is not None and v == v]
        if values and all(isinstance(v, bool) for v in values):
            frame[col] = frame[col].astype("boolean")
    frame["epoch"] = frame["epoch"].astype("int64")
    return frame


