"""What every command shares: one-line errors (exit 2), one JSON document on ``--json``,
consoles, and the exceptions that mean "the user asked for something that cannot be done"."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from toolscore.data import DataNotFound
from toolscore.entrypoints import ExtensionError
from toolscore.records import RunStoreError
from toolscore.report.export import printable

err = Console(stderr=True)
# Mistakes in what the user asked for: one line on stderr and exit code 2, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, FileNotFoundError, LookupError, DataNotFound, RunStoreError, ExtensionError,
    ImportError)
# Exit codes: 0 done; 2 a mistake in what was asked (bad option, bad input file: one line);
# 3 the run finished but some samples ended in an infrastructure error (kept in samples.jsonl,
# left out of the scores): resuming the run directory retries exactly those.
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
# ``toolscore --debug``: the traceback behind a one-line error is printed too (a condition
# toolscore knows is one line; the traceback is for whoever debugs toolscore itself).
DEBUG = False


def debug_traceback(error: BaseException | None) -> None:
    if DEBUG and error is not None:
        import traceback

        sys.stderr.write("".join(traceback.format_exception(error)))


def hide_secrets_in_argv() -> None:
    """Once the command line is parsed (click holds its own copy of the arguments), the
    process's ``sys.argv`` keeps no secret: whatever stores the command line (run.json's
    ``command``, a served run's) gets ``***`` for tokens, keys, passwords and URL
    credentials, as it gets nothing of the API keys read from the environment."""
    from toolscore.models.base import redact_argv

    sys.argv[:] = redact_argv(sys.argv)


def fail(message: str) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(printable(' '.join(message.split())))}",
              highlight=False,
              soft_wrap=True)
    raise SystemExit(EXIT_USAGE)


def exit_if_incomplete(run: Any, what: str, retry: str) -> None:
    """After the results are printed: when some of ``run``'s records ended in an
    infrastructure error, say how many and how to retry exactly those (``retry``), exit 3."""
    errored, total = run.error_count()
    if errored:
        err.print(f"{errored} of {total} {what} ended in an infrastructure error (kept in "
                  f"{run.path / 'samples.jsonl'}, left out of the scores); {retry}",
                  highlight=False, soft_wrap=True, markup=False)
        raise SystemExit(EXIT_INCOMPLETE)


def clean(value: Any) -> Any:
    """nan and inf (an undefined statistic) become null, so the document is valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def emit_json(doc: Any) -> None:
    """Exactly one JSON document on stdout."""
    sys.stdout.write(json.dumps(clean(doc), indent=2, sort_keys=True, default=str) + "\n")


def stdout() -> Console:
    return Console()


def progress_wanted(json_out: bool) -> str | bool:
    """A bar on a terminal, plain periodic lines in a log or pipe, nothing under --json."""
    if json_out:
        return False
    return "bar" if sys.stderr.isatty() else "lines"


class UserErrors:
    """``with UserErrors():`` turns a user mistake raised by the library into :func:`fail`."""

    def __enter__(self) -> UserErrors:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> bool:
        if value is not None and isinstance(value, USER_ERRORS) and not isinstance(
                value, click.exceptions.Exit):
            debug_traceback(value)
            fail(str(value))
        return False


class StoppedRuns:
    """``with StoppedRuns():`` around a run: a run that stopped for a reason toolscore knows
    (a model process that crashed, a worker that died, Ctrl-C) is one line saying what
    happened, what was kept and the exact command that resumes it; exit 3 (130 on Ctrl-C).
    Tracebacks stay for real bugs."""

    def __enter__(self) -> StoppedRuns:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> bool:
        from toolscore.runs.stopped import RunInterrupted, RunStopped

        if isinstance(value, (RunStopped, RunInterrupted)):
            debug_traceback(value)
            err.print(f"[red]stopped:[/red] {escape(printable(' '.join(str(value).split())))}",
                      highlight=False, soft_wrap=True)
            raise SystemExit(130 if value.interrupted else EXIT_INCOMPLETE)
        return False


def fmt(value: Any, kind: str = "number", digits: int = 1) -> str:
    """A metric for a table: rates as percentages, counts as integers, '-' when missing."""
    if value is None or isinstance(value, bool) and kind != "rate":
        return "-" if value is None else str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    if kind == "rate" and isinstance(value, (int, float)):
        return f"{100 * value:.{digits}f}%"
    if kind == "count" and isinstance(value, (int, float)):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    return printable(str(value))  # a cell may hold model or endpoint text
