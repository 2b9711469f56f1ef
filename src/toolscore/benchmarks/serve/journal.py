"""The journal of a serving run: every episode event, on disk the moment it happens.

A record is written only when an episode ends; a server stopped before that (SIGKILL, a crash,
the machine going down) would lose every call of the episodes still open. So each event (an
episode opened, a call with its response, a turn advanced, a reset, an episode ended) is one
JSON line appended to ``mcp-journal.jsonl`` in the run directory as it happens, with one
``write`` each and no fsync, as ``samples.jsonl`` is written: a killed process loses at most
the line being written (cut off when the journal is next opened), the operating system keeps
the rest. The episodes it shows open are recorded as unfinished on the next start
(:mod:`toolscore.benchmarks.serve.recovery`).

Events (``event`` key): ``server`` (a server started: the world it serves, how to build it
again, and the agent label), ``open`` (episode, sample, epoch, time), ``call`` (the call log
entry, ``executed``: whether it ran in the world), ``turn``, ``reset``, ``end``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

JOURNAL_FILE = "mcp-journal.jsonl"


class Journal:
    """Append-only event lines in a run directory (one writer: the run's lock holder)."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / JOURNAL_FILE
        self._fh: Any = None
        self._lock = threading.Lock()

    def open(self) -> Journal:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+b", buffering=0)  # noqa: SIM115 - held until close()
        _cut_partial_tail(fh)
        self._fh = fh
        return self

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def write(self, event: dict[str, Any]) -> None:
        """One event, one line, one ``write`` (the values are JSON already: no NaN)."""
        line = (json.dumps(event, allow_nan=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            if self._fh is not None:
                self._fh.write(line)

    def clear(self) -> None:
        """Empty the journal (every episode in it is recorded)."""
        with self._lock:
            if self._fh is not None:
                self._fh.truncate(0)

    def events(self) -> Iterator[dict[str, Any]]:
        """Every complete event, in order; a line that does not read as one is skipped."""
        if not self.path.is_file():
            return
        with open(self.path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    return  # the line a killed writer left half-written
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(event, dict) and isinstance(event.get("event"), str):
                    yield event


def _cut_partial_tail(fh: Any) -> None:
    """Truncate after the last newline (a line cut short by a killed writer)."""
    end = fh.seek(0, os.SEEK_END)
    if end == 0:
        return
    fh.seek(end - 1)
    if fh.read(1) == b"\n":
        return
    pos = end
    keep = 0
    while pos > 0:
        start = max(0, pos - 65536)
        fh.seek(start)
        found = fh.read(pos - start).rfind(b"\n")
        if found >= 0:
            keep = start + found + 1
            break
        pos = start
    fh.truncate(keep)
    fh.seek(0, os.SEEK_END)
