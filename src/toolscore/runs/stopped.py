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
from dataclasses import dataclass
from pathlib import Path


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


class RunStopped(Exception):
    """The run stopped (a model process crashed, a worker died); what finished is kept."""

    interrupted = False

    def __init__(self, facts: StopFacts) -> None:
        super().__init__(facts.message())
        self.facts = facts

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.facts,))


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped the run; what finished is kept."""

    interrupted = True

    def __init__(self, facts: StopFacts) -> None:
        super().__init__(facts.message())
        self.facts = facts

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.facts,))


def signal_name(number: int | None) -> str:
    """``SIGSEGV (segmentation fault)`` for 11; ``signal 77`` for a number with no name."""
    import signal

    if number is None:
        return "an unknown signal"
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    described = signal.strsignal(sig)
    return f"{sig.name} ({described.lower()})" if described else sig.name


def exit_status(code: int | None) -> str:
    """How a child process ended, from ``Popen.returncode`` / ``Process.exitcode``."""
    if code is None:
        return "without an exit status"
    if code < 0:
        return f"of {signal_name(-code)}"
    return f"with exit code {code}"
