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
import io
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toolscore.records import RunStore
from toolscore.records.files import refuse_unsafe, replace_file
from toolscore.records.store import without_output
from toolscore.records.table import FORMATS, record_rows, records_frame
from toolscore.text import printable

if TYPE_CHECKING:
    import pandas as pd


def sorted_records(path: str | Path) -> list[dict[str, Any]]:
    """The latest record of every (sample id, epoch) of a run."""
    store = RunStore(path)
    store.config()  # a clear error for a path that is not a run directory
    return list(store.latest(without_output).values())  # the rows hold no transcript


def run_rows(path: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, rows) of a run directory (see :mod:`toolscore.records.table`)."""
    return record_rows(sorted_records(path))


def load_run(path: str | Path) -> pd.DataFrame:
    """A run directory as a pandas DataFrame, one row per (sample, epoch)."""
    return records_frame(sorted_records(path))


def export_run(path: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Write a run's table as ``csv``, ``jsonl`` or ``parquet``, or the whole run as an Inspect
    log (``inspect``, see :mod:`toolscore.report.export.inspect_log`); returns the file written.

    The default file is ``<run dir>/export.<fmt>``, next to the data it was derived from.
    """
    if fmt == "inspect":
        from toolscore.report.export.inspect_log import export_inspect

        return export_inspect(path, out)
    if fmt not in FORMATS:
        choices = ", ".join((*FORMATS, "inspect"))
        raise ValueError(f"unknown format {fmt!r}; choose one of {choices}")
    target = Path(out) if out is not None else Path(path) / f"export.{fmt}"
    if target.resolve() == (Path(path) / "samples.jsonl").resolve():
        raise ValueError(f"{target}: refusing to overwrite the run's own samples.jsonl")
    inside = out is None  # the run's own folder, which may be someone else's: no links there
    if fmt == "parquet":
        frame = load_run(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if inside:
            refuse_unsafe(target)
        frame.to_parquet(target, index=False)
        return target
    columns, rows = run_rows(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if inside:
        text = io.StringIO(newline="")
        write_rows(text, fmt, columns, rows)
        replace_file(target, [text.getvalue().encode("utf-8")])
        return target
    with open(target, "w", encoding="utf-8", newline="") as fh:
        write_rows(fh, fmt, columns, rows)
    return target


def write_rows(fh: IO[str], fmt: str, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Write rows as CSV (missing values empty) or JSONL (missing values null) to a text stream."""
    if fmt == "csv":
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else printable(v)) for k, v in row.items()}
                         for row in rows)
    elif fmt == "jsonl":
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"{fmt!r} cannot be written to a text stream; use csv or jsonl")
