"""What a sweep file may ask, and the checks every field of a plan or manifest goes through.

A plan is read by a process that then starts hundreds of runs, and a manifest may come from
someone else. A mistake in either should be one line naming the file and the field, said in
well under a second, before anything is planned or written; never a traceback, a MemoryError
after minutes, or a run directory that toolscore cannot read back. So every field is checked
for its type, its range and finite numbers first, and what a plan may ask is bounded, each
bound stated in the error that refuses it:

* :data:`MAX_UNITS` runs in the expanded matrix: ten times the largest sweeps we know of
  (a few hundred runs), and about what one plan's expansion does in seconds;
* :data:`MAX_EPOCHS` epochs (pass^k and flip rates are read at k up to a few dozen) and
  :data:`MAX_UNIT_SAMPLES` (sample, epoch) records per run (tooleval's 600 samples x 1,000
  epochs): one run directory's records are read whole by status, resume and reports;
* :data:`MAX_NODES` nodes in a YAML document, aliases counted at every use (a handwritten
  plan has hundreds; an alias bomb has billions and is refused after reading its few lines),
  :data:`MAX_DEPTH` levels of nesting and :data:`MAX_FILE_BYTES` bytes per file (a manifest of
  :data:`MAX_UNITS` units is about 15 MB of JSON).
"""

from __future__ import annotations

import math
from typing import Any

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_NODES = 100_000
MAX_DEPTH = 32
MAX_UNITS = 10_000
MAX_EPOCHS = 1_000
MAX_UNIT_SAMPLES = 1_000_000
MAX_SHARDS = 256
MAX_CONCURRENCY = 4_096
MAX_PERMITS = 100_000
MAX_TIMEOUT = 86_400.0  # seconds a model call may take: a day
MAX_CPUS = 1_024.0
MAX_GPUS = 64.0
MAX_RETRIES = 100


class PlanError(ValueError):
    """A sweep file that cannot be expanded (one line naming file and field)."""


def field_error(where: str, name: str, problem: str) -> PlanError:
    return PlanError(f"{where}: field {name!r}: {problem}")


def shown(value: Any) -> str:
    """A value as the user wrote it (null, not None), cut short."""
    text = "null" if value is None else "true" if value is True else "false" \
        if value is False else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(value: Any, where: str, name: str, low: int, high: int) -> int:
    """``value`` if it is an integer from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise field_error(where, name, f"expected an integer from {low:,} to {high:,}, "
                                       f"got {shown(value)}")
    return value


def integer_or_null(value: Any, where: str, name: str, low: int, high: int) -> int | None:
    """None, or ``value`` if it is an integer from ``low`` to ``high``."""
    if value is None:
        return None
    try:
        return integer(value, where, name, low, high)
    except PlanError:
        raise field_error(where, name, f"expected an integer from {low:,} to {high:,} or null, "
                                       f"got {shown(value)}") from None


def number(value: Any, where: str, name: str, low: float, high: float, *,
           above: bool = False) -> float:
    """``value`` as a float if it is a finite number from ``low`` (excluded when ``above``)
    to ``high``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value) and (value > low if above else value >= low) and value <= high
    if not ok:
        side = ">" if above else ">="
        raise field_error(where, name, f"expected a number {side} {low:g} and <= {high:g}, "
                                       f"got {shown(value)}")
    return float(value)


def text(value: Any, where: str, name: str, nullable: bool = False) -> str | None:
    """``value`` if it is a non-empty string (or null when ``nullable``)."""
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        null = " or null" if nullable else ""
        raise field_error(where, name, f"expected text{null}, got {shown(value)}")
    return value


def mapping(value: Any, where: str, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(where, name, f"expected a mapping, got {shown(value)}")
    return value


PLAIN = (str, int, float, bool, type(None), list, dict)


def plain_values(doc: Any, where: str) -> None:
    """Refuse what JSON cannot say, wherever it is in the document: keys that are not text
    (YAML reads ``on:`` as true), non-finite numbers, dates, binary, sets; and nesting
    deeper than :data:`MAX_DEPTH`. Walked without recursion."""
    todo: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while todo:
        value, path, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise field_error(where, path, f"nested more than {MAX_DEPTH} levels deep; a sweep "
                                           f"file may nest at most {MAX_DEPTH}")
        if isinstance(value, float) and not math.isfinite(value):
            raise field_error(where, path or "(top)", f"{value!r} is not a finite number")
        if not isinstance(value, PLAIN):
            raise field_error(where, path or "(top)", f"a {type(value).__name__} "
                              f"({shown(value)}): expected text, a number, true/false, null, "
                              "a list or a mapping (quote it to make it text)")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise field_error(where, f"{path}.{shown(key)}".lstrip("."),
                                      "a key must be text (quote it)")
                todo.append((item, f"{path}.{key}".lstrip("."), depth + 1))
        elif isinstance(value, list):
            todo.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
