"""What every command shares: one-line errors (exit 2), one JSON document on ``--json``,
consoles, and the exceptions that mean "the user asked for something that cannot be done"."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from toolscore.data import DataNotFound
from toolscore.entrypoints import ExtensionError
from toolscore.records import RunStoreError
from toolscore.records.paths import check_output_path
from toolscore.report.export.table import printable

err = Console(stderr=True)
# Mistakes in what the user asked for: one line on stderr and exit code 2, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, FileNotFoundError, LookupError, DataNotFound, RunStoreError, ExtensionError,
    ImportError)
# Exit codes: 0 done; 1 a CI gate failed (--fail-under, --fail-on-regression); 2 a mistake in
# what was asked (bad option, bad input file: one line); 3 the run finished but some samples
# ended in an infrastructure error (kept in samples.jsonl, left out of the scores): resuming the
# run directory retries exactly those.
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

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Literal[False]:
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

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Literal[False]:
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


# Common run options that may come from the environment (TOOLSCORE_MODEL and
# TOOLSCORE_MAX_CONCURRENCY through click's envvar, TOOLSCORE_OUT here; TOOLSCORE_CACHE is read
# where the cache file is chosen, toolscore.models.factory.cache_path, so Python runs honour it
# too). A bad value is one line naming where it came from: the variable when it was the
# environment, since the user typed no option and would look for the mistake in the wrong place.
RUNS_ROOT = "runs"


def source_name(param: str, env: str) -> str:
    """``--flag`` or ``ENV`` as the user gave ``param`` (the latter only from the environment)."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.get_parameter_source(param) is ParameterSource.ENVIRONMENT:
        return env
    return "--" + param.replace("_", "-")


def whole_number(value: str | int, where: str) -> int:
    """``value`` as an integer of 1 or more; a one-line ValueError naming ``where``."""
    text = str(value).strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{where} {str(value)!r}: must be a whole number, 1 or more")
    return int(text)


def cache_expiry(value: str | None) -> float | None:
    """``--cache-expiry`` checked (one line if bad) and handed to every cache this run opens,
    in this process and its workers, through ``$TOOLSCORE_CACHE_EXPIRY``."""
    import os

    from toolscore.models.cache import EXPIRY_ENV, parse_expiry

    if value is None:
        return None
    seconds = parse_expiry(value, source_name("cache_expiry", EXPIRY_ENV))
    os.environ[EXPIRY_ENV] = value
    return seconds


def max_concurrency(value: str | int) -> int:
    return whole_number(value, source_name("max_concurrency", "TOOLSCORE_MAX_CONCURRENCY"))


def runs_root() -> Path:
    """Where default run directories go: ``$TOOLSCORE_OUT`` (empty: unset), else ``runs``."""
    value = os.environ.get("TOOLSCORE_OUT", "").strip()
    if not value:
        return Path(RUNS_ROOT)
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"TOOLSCORE_OUT {value!r}: not a folder (the folder that holds run "
                         "directories)")
    return path


# A ``.env`` file for the command: the nearest one from the working directory upwards, up to
# the filesystem root or the first folder holding ``.git`` (a project's own root: a ``.env``
# above it belongs to something else). Its variables fill only what the real environment leaves
# unset, so an exported value always wins, as in every other tool that reads one.
#
# Read once when the command starts (never on ``import toolscore``: a library must not change
# its host's environment), before the options are parsed, so that ``TOOLSCORE_MODEL`` and the
# other defaults can come from it. python-dotenv is imported only when a file is found.
def find_dotenv(start: Path | None = None) -> Path | None:
    """The ``.env`` file that applies in ``start`` (the working directory), or None."""
    folder = (start or Path.cwd()).resolve()
    for here in (folder, *folder.parents):
        candidate = here / ".env"
        if candidate.is_file():
            return candidate
        if (here / ".git").exists():
            return None
    return None


def load_dotenv(start: Path | None = None) -> str:
    """Load the applicable ``.env`` without overriding a set variable; what happened, as one
    line for ``toolscore --verbose``."""
    path = find_dotenv(start)
    if path is None:
        return ".env: none found (from the working directory up to the project's root)"
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path)
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot be read as a .env file ({e})") from None
    kept = sorted(k for k in values if k in os.environ)
    for key, value in values.items():
        if key not in os.environ and value is not None:
            os.environ[key] = value
    return (f".env: {path} (set {len(values) - len(kept)} of its {len(values)} variables"
            + (f"; already set, kept: {', '.join(kept)}" if kept else "") + ")")


def task_options(pairs: tuple[str, ...] | list[str], own: set[str] | None = None,
                 typed: list[str] | tuple[str, ...] = (), flag: str = "-T") -> dict[str, Any]:
    """Benchmark options given as KEY=VALUE pairs (``run``, ``score`` and ``judge``'s ``-T``):
    values stay text, converted as the option's own flag converts them; a repeated name
    collects a list option's items. With ``own`` (the options declared), an unknown name is
    one line; a name also in ``typed`` (given by its own flag) too."""
    from toolscore.models.modelargs import split_pair

    out: dict[str, Any] = {}
    for pair in pairs:
        name, value = split_pair(pair, flag, "a benchmark option")
        if own and name not in own:
            raise ValueError(f"{flag} {pair!r}: no option {name!r} (its options: "
                             f"{', '.join(sorted(own))})")
        if name in typed:
            raise ValueError(f"{flag} {name} and --{name.replace('_', '-')}: given twice")
        if name in out:  # repeated: a list option's items
            prev = out[name]
            out[name] = [*prev, value] if isinstance(prev, list) else [prev, value]
        else:
            out[name] = value
    return out


# Gates for continuous integration (toolscore.report.gates): checked once the run directory is
# complete and the results are printed; a failed gate is one line on stderr and exit code 1.
EXIT_GATE = 1
FAIL_UNDER_HELP = ("Exit 1 when headline metric METRIC (as the report names it, e.g. success, "
                   "or its scores.json key) is below VALUE (0.5 or 50%), over the whole run or "
                   "with METRIC@SPLIT in one split; checked after everything is written; "
                   "repeatable.")
JUNIT_HELP = ("Also write JUnit XML to FILE for CI: one testcase per (sample, epoch), a "
              "failure when it failed the benchmark's pass/fail metric, an error when it "
              "ended in an infrastructure error; gates as testcases too.")


def check_gate_options(fail_under: tuple[str, ...] | list[str], junit: Path | None,
                       shard: str | None = None) -> list[Any]:
    """``--fail-under`` and ``--junit`` read before anything runs (a bad VALUE, or a JUnit
    file that is a run's own file, is a one-line error now, not after the run). A shard sees
    only its part of the run: no gate, no JUnit file with ``--shard``."""
    from toolscore.report.gates import parse_floors

    check_output_path(junit, "--junit")
    floors = parse_floors(fail_under)
    if shard and (floors or junit is not None):
        raise ValueError("--fail-under and --junit with --shard: a shard sees only its part of "
                         "the run; once every shard has finished, use toolscore report RUN_DIR "
                         "--fail-under ... --junit FILE")
    return floors


def run_gates(run_dir: str | Path, floors: list[Any], junit: Path | None,
              doc: dict[str, Any] | None = None) -> tuple[list[Any], str | None]:
    """The floors checked against the run in ``run_dir`` and its JUnit file written (read
    once); ``(results, usage problem)``, the problem (an unknown metric) to be reported with
    :func:`fail` once the results are printed. ``doc`` (the command's --json document) gets
    the results as ``gates``."""
    if not floors and junit is None:
        return [], None
    from toolscore.report.gates import check_floors, read_run

    run = read_run(run_dir)
    try:
        gates, problem = check_floors(run, floors), None
    except ValueError as e:
        gates, problem = [], str(e)
    if doc is not None and floors and problem is None:
        doc["gates"] = [g.to_dict() for g in gates]
    if junit is not None:
        from toolscore.report.junit import run_junit, write_junit

        try:
            path = write_junit(run_junit(run, gates), junit)
        except OSError as e:
            fail(f"--junit {junit}: cannot be written ({e})")
        err.print(f"wrote {path}", highlight=False, soft_wrap=True, markup=False)
    return gates, problem


def say_gates(gates: list[Any], problem: str | None = None) -> None:
    """One line on stderr per gate that did not pass; a usage problem is :func:`fail`."""
    if problem is not None:
        fail(problem)
    for g in gates:
        if not g.passed:
            err.print(g.line, highlight=False, soft_wrap=True, markup=False)


def exit_on_gates(gates: list[Any]) -> None:
    if any(not g.passed for g in gates):
        raise SystemExit(EXIT_GATE)


def print_run(doc: dict[str, Any], json_out: bool) -> None:
    """A run's document (``run``, ``score``): one JSON document, or the summary tables."""
    if json_out:
        emit_json(doc)
        return
    from toolscore.report.tables import print_run_summary

    console = stdout()
    print_run_summary(console, doc["config"], doc["metrics"] or {}, doc.get("summary"),
                      run_dir=doc.get("run_dir"))
    if doc.get("run_dir"):
        console.print(f"run directory: {doc['run_dir']}", highlight=False, soft_wrap=True)
    if (doc.get("summary") or {}).get("spent_usd") is not None:
        console.print(f"spent ${doc['summary']['spent_usd']:.4f} on this command's model calls "
                      "(--cost-limit)", highlight=False, markup=False)
    if doc.get("html_report"):
        console.print(f"HTML report: {doc['html_report']}", highlight=False, soft_wrap=True)


# ``toolscore run``'s spending limit (toolscore.runs.costlimit)
COST_OPTIONS = [
    click.Option(
        ["--cost-limit", "cost_limit"], default=None, metavar="USD",
        help="Stop once this command's model calls cost this many US dollars (every role, "
             "priced by the pinned price table and --prices): samples in flight finish, the "
             "rest run on --resume. A model with no price is refused before anything runs."),
    click.Option(
        ["--prices", "prices"], type=click.Path(path_type=Path), default=None, metavar="FILE",
        help="Price file (JSON/YAML: {model: {input_per_mtok, output_per_mtok}}) over the "
             "pinned table, for --cost-limit."),
]
# ``--rpm`` and ``--tpm`` of ``toolscore run``: the rate budget of the run's model provider. A
# sweep says its budgets in its plan (``limits: {openai: {rpm: 600, tpm: 200000}}``); a single
# run says them here. Every call to that provider in the run (the model under test, and a
# simulated user or judge of the same provider, who spend the same key's quota) is charged to
# one budget, and 429s narrow the requests in flight (toolscore.models.limits.budget); the
# run's --max-concurrency is the most it lets in flight. Without either option nothing changes.
# With --workers, the worker processes forked from this one share the budget.
BUDGET_OPTIONS = [
    click.Option(["--rpm"], default=None, metavar="N",
                 help="Requests per minute the model's provider allows this run (its "
                      "simulated user and judge included when they call that provider): "
                      "calls wait for the budget instead of meeting 429s."),
    click.Option(["--tpm"], default=None, metavar="N",
                 help="Tokens per minute (prompt and reply) the model's provider allows "
                      "this run; each call's tokens are estimated from its size and settled "
                      "with the usage of its reply."),
]


def model_of(generic: dict[str, Any]) -> str | None:
    """The run's model: the one given, or the one of the run being resumed."""
    if generic.get("resume") is not None:
        from toolscore.records import RunStore

        return RunStore(generic["resume"]).config().model
    return generic.get("model")


@contextlib.contextmanager
def rate_budget(generic: dict[str, Any]) -> Iterator[None]:
    """The run's calls to its provider within ``--rpm`` and ``--tpm`` (nothing without)."""
    rpm, tpm = generic.get("rpm"), generic.get("tpm")
    if rpm is None and tpm is None:
        yield
        return
    rates = [None if v is None else float(whole_number(v, f"--{k}"))
             for k, v in (("rpm", rpm), ("tpm", tpm))]
    model = model_of(generic)
    if not model:
        raise ValueError("--rpm and --tpm limit the model's provider: give --model")
    from toolscore.models.limits import shared

    permits = max_concurrency(generic["max_concurrency"])
    with tempfile.TemporaryDirectory(prefix="toolscore-budget-") as folder:
        shared.install({shared.group_of(model): (str(Path(folder) / "limit.lock"), permits,
                                                 *rates)})
        try:
            yield
        finally:
            shared.install({})
