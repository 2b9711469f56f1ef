"""What an export format is (an entry point of the ``toolscore.exports`` group names one): a
way to write a run out of its directory.

It sits with the run directory's format, at the bottom of the layers, so that any layer can
declare one: the report's own formats (csv, jsonl, parquet, inspect) and a method's (BFCL's
result files, written by ``benchmarks/bfcl``) alike. The registry that finds them by name is
:mod:`toolscore.report.export.formats`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class ExportFormat:
    """``write(run, out)`` writes the run to ``out`` (or its default file when ``out`` is
    None) and returns the file written; ``stream(run, fh)`` writes it to a text stream
    (``--out -``); ``validate(path)`` reads a written file back and says so in one line."""

    name: str
    description: str
    write: Callable[[Path, Path | None], Path]
    stream: Callable[[Path, IO[str]], Any] | None = None
    validate: Callable[[Path], str] | None = None
