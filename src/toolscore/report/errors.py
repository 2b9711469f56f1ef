"""What a run whose samples all ended in an infrastructure error has to say instead of its
metrics: how many samples, and the distinct error messages with their counts.

Such a run has no scores, so its metrics table would be a header over nothing; the messages
(a refused key, an unknown model name, an endpoint that is not there) are what the user needs
to fix before resuming. Messages that differ only in their numbers (attempts and seconds of
retries, request ids) are one message, its varying numbers shown as N, so a dead endpoint
reads as one cause, not one per sample. Messages quote endpoint text, so each is made
printable, put on one line and cut to a readable length; only the most frequent few are listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolscore.text import printable

MAX_MESSAGES = 5  # distinct messages listed; the rest are counted in one line
MAX_CHARS = 160  # of one message, after whitespace is collapsed
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def one_line(message: Any) -> str:
    return printable(" ".join(str(message or "").split())) or "unknown error"


def shorten(text: str, limit: int = MAX_CHARS) -> str:
    """At most ``limit`` characters (an ellipsis marks a cut)."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _merged(messages: list[str]) -> str:
    """Messages equal but for their numbers as one: numbers that differ become N."""
    first = messages[0]
    if all(m == first for m in messages):
        return first
    texts = NUMBER.split(first)
    columns = zip(*(NUMBER.findall(m) for m in messages), strict=True)
    numbers = [values[0] if len(set(values)) == 1 else "N" for values in columns]
    return texts[0] + "".join(n + t for n, t in zip(numbers, texts[1:], strict=True))


def error_counts(records: Iterable[dict[str, Any]]) -> list[tuple[str, int]]:
    """(message, records) of the records that did not end ``ok``, most frequent first (ties:
    in the order first met); messages equal but for their numbers count as one."""
    groups: dict[str, list[str]] = {}
    for r in records:
        if r.get("status", "ok") != "ok":
            text = one_line(r.get("error"))
            groups.setdefault(NUMBER.sub("N", text), []).append(text)
    ranked = sorted(groups.values(), key=lambda ms: -len(ms))  # stable: first met first
    return [(shorten(_merged(ms)), len(ms)) for ms in ranked]


def run_errors(run_dir: str | Path) -> tuple[int, list[tuple[str, int]]]:
    """(records, :func:`error_counts`) of a run directory's latest records, read without
    their outputs."""
    from toolscore.records import RunStore
    from toolscore.records.store import without_output

    latest = list(RunStore(run_dir).latest(without_output).values())
    return len(latest), error_counts(latest)


def error_lines(total: int, counts: list[tuple[str, int]] | None,
                limit: int = MAX_MESSAGES) -> list[str]:
    """The summary printed in place of the metrics table: a headline line, then one line per
    distinct message (``counts``; None when the records could not be read)."""
    noun = "sample" if total == 1 else "samples"
    lines = [f"no scores: {'the' if total == 1 else 'all'} {total} {noun} ended in an "
             "infrastructure error"]
    if not counts:
        return lines
    lines[0] += f" ({len(counts)} distinct message{'s' if len(counts) != 1 else ''}):"
    lines += [f"  {n} × {message}" for message, n in counts[:limit]]
    rest = counts[limit:]
    if rest:
        n = sum(n for _, n in rest)
        lines.append(f"  … and {len(rest)} other message{'s' if len(rest) != 1 else ''} "
                     f"({n} sample{'s' if n != 1 else ''})")
    return lines
