"""Export formats by name, through the ``toolscore.exports`` entry-point group.

An entry point names an :class:`~toolscore.records.export_format.ExportFormat`: its name, a
one-line description, and how it writes a run (``write(run, out)``: to ``out``, or its
default file when ``out`` is None; returns the file written), optionally to a text stream
(``stream``: ``--out -``) and read back (``validate``: one line, ``--validate``). toolscore's
own formats (csv, jsonl, parquet,
inspect) are declared in its pyproject.toml exactly as a package declares its own::

    [project.entry-points."toolscore.exports"]
    xlsx = "toolscore_xlsx:FORMAT"

``toolscore export RUN --format NAME`` and its ``--help`` read the group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from toolscore.entrypoints import EXPORTS, ExtensionError
from toolscore.records.export_format import ExportFormat as ExportFormat


def _table(fmt: str) -> Callable[[Path, Path | None], Path]:
    def write(run: Path, out: Path | None) -> Path:
        from toolscore.report.export.table import export_run

        return export_run(run, fmt, out)
    return write


def _rows(fmt: str) -> Callable[[Path, IO[str]], None]:
    def stream(run: Path, fh: IO[str]) -> None:
        from toolscore.report.export.table import run_rows, write_rows

        columns, rows = run_rows(run)
        write_rows(fh, fmt, columns, rows)
    return stream


def _inspect(run: Path, out: Path | None) -> Path:
    from toolscore.report.export.inspect_log import export_inspect

    return export_inspect(run, out)


def _inspect_stream(run: Path, fh: IO[str]) -> int:
    from toolscore.report.export.inspect_log import write_inspect_log

    return write_inspect_log(run, fh)


def _inspect_validate(path: Path) -> str:
    from toolscore.report.export.inspect_log import validation_line

    return validation_line(path)


CSV = ExportFormat("csv", "one row per (sample, epoch): id, epoch, split, status, scalar "
                   "scores, tokens, time", _table("csv"), _rows("csv"))
JSONL = ExportFormat("jsonl", "the csv's rows as JSON lines", _table("jsonl"), _rows("jsonl"))
PARQUET = ExportFormat("parquet", "the csv's rows as Parquet (pandas, pyarrow)",
                       _table("parquet"))
INSPECT = ExportFormat("inspect", "the whole run as an Inspect log (.json, or .eval if --out "
                       "names one): transcripts, scores, usage", _inspect, _inspect_stream,
                       _inspect_validate)


def names() -> list[str]:
    return sorted(EXPORTS.names())


def get_format(name: str) -> ExportFormat:
    """The format registered as ``name`` (a one-line error naming the known ones otherwise)."""
    if name in EXPORTS.names():
        found: Any = EXPORTS.load(name)
    else:
        raise ValueError(f"unknown format {name!r}; choose one of {', '.join(names())}")
    if not isinstance(found, ExportFormat):
        raise ExtensionError(f"export format {name!r}: the entry point gives {found!r}, not a "
                             f"{ExportFormat.__module__}.ExportFormat")
    return found


def listing() -> dict[str, str]:
    """name -> description (a format that does not load says why)."""
    out = {}
    for name in names():
        try:
            out[name] = get_format(name).description
        except (ExtensionError, ValueError) as e:
            out[name] = f"(cannot be loaded: {e})"
    return out
