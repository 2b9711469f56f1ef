"""How a run shows it is alive: a rich bar on a terminal, plain lines everywhere else.

A run whose stderr is a file, a pipe or a CI log used to print nothing for minutes, which looks
exactly like a hang. In ``lines`` mode a ticker prints one plain line every ``interval`` seconds
(done, errors, tokens, elapsed, rate); nothing is printed for a run shorter than one interval,
so quick runs and error messages stay clean.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from typing import Any, Protocol, TextIO

LINE_INTERVAL_S = 10.0


class _Counts(Protocol):
    total: int
    skipped: int
    done: int
    errors: int
    usage: Any


def cache_notice(progress: bool | str | None, cache: str | os.PathLike[str] | None,
                 stream: TextIO | None = None) -> None:
    """The first line of a run that will call a model through a cache: where replies are
    cached and how to get fresh ones (said only where progress is shown)."""
    if mode_of(progress) == "off" or cache is None:
        return
    expiry = os.environ.get("TOOLSCORE_CACHE_EXPIRY", "").strip()
    when = (f"those older than {expiry} are asked again" if expiry and expiry != "never"
            else "a re-run replays them at no cost")
    (stream or sys.stderr).write(f"model replies are cached in {cache} ({when}; --no-cache or "
                                 "--cache-expiry DURATION for fresh samples)\n")


def mode_of(progress: bool | str | None) -> str:
    """``True``/``"bar"`` -> bar, ``"lines"`` -> lines, falsy -> off."""
    if progress is True or progress == "bar":
        return "bar"
    if progress == "lines":
        return "lines"
    if not progress:
        return "off"
    raise ValueError(f"progress must be 'bar', 'lines' or off, got {progress!r}")


def status_line(summary: _Counts, elapsed: float) -> str:
    todo = summary.total - summary.skipped
    rate = summary.done / elapsed if elapsed > 0 else 0.0
    left = (todo - summary.done) / rate if rate > 0 else None
    eta = f"  about {left:.0f} s left" if left is not None else ""
    return (f"progress: {summary.done}/{todo} samples  errors {summary.errors}  "
            f"tokens {summary.usage.total_tokens}  {elapsed:.0f} s elapsed{eta}")


class Progress:
    """Async context manager around the run's gather; ``update()`` after every record."""

    def __init__(self, progress: bool | str | None, summary: _Counts,
                 interval: float | None = None, stream: TextIO | None = None) -> None:
        self.mode = mode_of(progress)
        self.summary = summary
        self.interval = LINE_INTERVAL_S if interval is None else interval
        self.stream = stream
        self.bar: Any = None
        self._ticker: asyncio.Task[None] | None = None
        self._started = time.perf_counter()

    async def __aenter__(self) -> Progress:
        self._started = time.perf_counter()
        if self.mode == "bar":
            self._open_bar()
        elif self.mode == "lines":
            self._ticker = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            if time.perf_counter() - self._started >= self.interval:
                self._line()  # a long run ends with its final count
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def update(self) -> None:
        if self.bar is not None:
            s = self.summary
            self.bar.update(self.task, completed=s.done,
                            info=f"errors {s.errors}  tokens {s.usage.total_tokens}")

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self._line()

    def _line(self) -> None:
        stream = self.stream or sys.stderr
        try:
            stream.write(status_line(self.summary, time.perf_counter() - self._started) + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or full stderr must not end the run
            pass

    def _open_bar(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                                TimeElapsedColumn(), TimeRemainingColumn(), transient=False)
        self.task = self.bar.add_task("samples", total=self.summary.total - self.summary.skipped,
                                      info="")
        self.bar.__enter__()
