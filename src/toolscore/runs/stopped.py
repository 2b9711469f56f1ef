"""A run that stopped before its end for a reason toolscore knows: what is said, and how.

Why a type of its own: a crashed model process, a worker that died and Ctrl-C are not bugs,
and the person who started the run needs three facts, not a traceback: what stopped it, what
was kept, and the exact command that carries on. Finished samples are always on disk already
(the run store appends each as it ends), so the message only has to count them.

:class:`RunStopped` is an ``Exception`` (a crash, a dead worker): ``toolscore run`` prints it
in one line and exits 3. :class:`RunInterrupted` is a ``KeyboardInterrupt``, so that Ctrl-C
still stops a script's loop over models as Ctrl-C should, but with the same facts attached.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from toolscore.benchmarks.base import Benchmark
from toolscore.records import NotStored, RunStore
from toolscore.runs.runner import RunOptions, pending

T = TypeVar("T")


@dataclass(frozen=True)
class StopFacts:
    """What a stopped run's message says."""

    reason: str  # what stopped it, e.g. "the model process died of SIGSEGV"
    run_dir: Path
    benchmark: str
    kept: int  # (sample, epoch) pairs finished and on disk
    total: int  # pairs the run (or this shard) has

    @property
    def resume_command(self) -> str:
        return (f"toolscore run {shlex.quote(self.benchmark)} --resume "
                f"{shlex.quote(str(self.run_dir))}")

    def message(self) -> str:
        return (f"{self.reason}; {self.kept} of {self.total} samples finished and are kept in "
                f"{self.run_dir / 'samples.jsonl'}; resume with: {self.resume_command}")


class _Stopped(BaseException):
    """What both kinds of stop carry: the facts, as the message and as an attribute (and
    across a process boundary)."""

    interrupted = False

    def __init__(self, facts: StopFacts) -> None:
        super().__init__(facts.message())
        self.facts = facts

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.facts,))


class RunStopped(_Stopped, Exception):
    """The run stopped (a model process crashed, a worker died); what finished is kept."""


class RunInterrupted(_Stopped, KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped the run; what finished is kept."""

    interrupted = True


def stop_facts(reason: str, bench: Benchmark, store: RunStore, options: RunOptions) -> StopFacts:
    """What a stopped run's one line says: why, and how much of it is on disk."""
    total, todo = pending(bench, store, replace(options, assigned=None))
    return StopFacts(reason=reason, run_dir=store.path, benchmark=bench.name,
                     kept=total - len(todo), total=total)


class _Interrupted:
    """The facts of the run Ctrl-C stopped in this process. asyncio raises its own
    KeyboardInterrupt when the loop is interrupted, after the run's task has been cancelled,
    so the facts are kept here for ``evaluate`` and ``resume`` to attach."""

    def __init__(self) -> None:
        self.facts: StopFacts | None = None

    def remember(self, facts: StopFacts) -> None:
        self.facts = facts

    def take(self) -> StopFacts | None:
        facts, self.facts = self.facts, None
        return facts


interrupted = _Interrupted()


def stoppable(run_sync: Callable[[Callable[[], Coroutine[Any, Any, T]]], T],
              make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``run_sync(make)``, with Ctrl-C raised as a RunInterrupted that says what was kept, and
    a record that could not be stored (a full disk) as a RunStopped."""
    interrupted.take()
    try:
        return run_sync(make)
    except NotStored as e:
        if e.stopped is None:  # not a record (run.json, scores.json): one line, as it is
            raise
        raise RunStopped(StopFacts(**e.stopped)) from e
    except KeyboardInterrupt as e:
        facts = interrupted.take()
        if facts is None or isinstance(e, RunInterrupted):
            raise
        raise RunInterrupted(facts) from None
