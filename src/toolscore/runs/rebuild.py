"""A run's benchmark, rebuilt from its run.json: to resume or rescore a run, and in a worker
process that did not inherit the benchmark (:mod:`toolscore.runs.workers`).

run.json is not trusted (:mod:`toolscore.benchmarks.trust`): a stored option that starts a
process or loads code is withheld when the run is rescored, and continuing the run needs the
user to vouch for it first (:func:`check_trusted`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Benchmark, OptionError, flag_of, option_fields, same_option
from toolscore.benchmarks.registry import benchmark_class, benchmark_from_run
from toolscore.benchmarks.trust import (
    EVERYTHING,
    NOTHING,
    Trust,
    UntrustedRun,
    Withheld,
    provider_origin,
)
from toolscore.records import RUN_FILE, RunConfig, RunStore, RunStoreError


def rebuild_benchmark(config: RunConfig, source: str | Path = RUN_FILE, *,
                      trust: Trust = NOTHING, **overrides: Any) -> Benchmark:
    """The benchmark a run.json describes, built to score (``overrides`` replace some of its
    options and are trusted, as the caller's own; ``trust`` says what else the user vouched
    for); a benchmark that is not installed, an option it does not take or one it cannot
    score without running is one line naming ``source`` (the run.json) and the field."""
    _installed(config, source)
    try:
        return benchmark_from_run(config.to_dict(), trust=trust, exact=True, **overrides)
    except UntrustedRun as e:
        raise UntrustedRun(e.items, doing=e.doing, how=e.how, source=str(source)) from None
    except OptionError as e:
        if not any(repr(k) in str(e) for k in set(config.options) - set(overrides)):
            raise  # an override the caller gave: the caller's mistake, said as such
        raise RunStoreError(f"{source}: options: {e}") from None


def _installed(config: RunConfig, source: str | Path) -> type[Benchmark]:
    try:
        return benchmark_class(config.benchmark)
    except LookupError as e:
        raise RunStoreError(f"{source}: benchmark: {e}; pass the Benchmark object to rebuild "
                            "this run") from None


def untrusted(config: RunConfig, trust: Trust, source: str | Path = RUN_FILE, *,
              options: bool = True) -> list[Withheld]:
    """What continuing the run would start or load that the user has not vouched for: its
    options that run code (unless ``options`` is False: the caller brings the benchmark),
    and its model's provider when that is not toolscore's own. A vouched value that differs
    from the stored one is a one-line ValueError (the run's options come from its
    run.json)."""
    out = _untrusted_options(config, trust, source) if options else []
    origin = provider_origin(config.model)
    if origin is not None and not (trust.everything or trust.model == config.model):
        out.append(Withheld("model", "--model", config.model,
                            f"loads model provider code {origin}"))
    return out


def _untrusted_options(config: RunConfig, trust: Trust, source: str | Path) -> list[Withheld]:
    cls = _installed(config, source)
    declared = {f.name: f for f in option_fields(cls.Options)}
    out = []
    for name, what in cls.runs_code(dict(config.options)).items():
        stored = config.options[name]
        flag = flag_of(declared[name]) if name in declared else f"--{name}"
        if trust.vouches(name, stored, lambda a, b, n=name: same_option(cls.Options, n, a, b)):
            continue
        if name in trust.options:
            raise ValueError(f"{flag} {trust.options[name]!r}: this run was made with "
                             f"{stored!r} ({source}); a resumed run keeps its options")
        out.append(Withheld(name, flag, stored, what))
    return out


def check_trusted(config: RunConfig, trust: Trust, source: str | Path = RUN_FILE, *,
                  options: bool = True) -> None:
    """Refuse, in one line, to continue a run whose stored options would start a process or
    load code the user has not vouched for (see :func:`untrusted`)."""
    items = untrusted(config, trust, source, options=options)
    if items:
        raise UntrustedRun(items, doing="continuing this run", source=str(source))


def refuse_withheld(bench: Benchmark, run_dir: str | Path) -> None:
    """A benchmark rebuilt to read a run (some options withheld) never runs samples."""
    if bench.withheld:
        raise RunStoreError(f"{run_dir}: benchmark {bench.name!r} was rebuilt without acting "
                            f"on {', '.join(sorted(bench.withheld))}; it cannot run")


def rebuild_from_dir(run_dir: str | Path) -> Benchmark:
    """The benchmark of the run directory ``run_dir``, from its run.json, as a worker process
    of a run needs it: the parent process has already checked the run's options against
    what the user vouched for (:func:`check_trusted`) before starting any worker."""
    store = RunStore(run_dir)
    return rebuild_benchmark(store.config(), store.path / RUN_FILE, trust=EVERYTHING)
