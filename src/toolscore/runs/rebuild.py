"""A run's benchmark, rebuilt from its run.json: to resume or rescore a run, and in a worker
process that did not inherit the benchmark (:mod:`toolscore.runs.workers`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Benchmark, OptionError
from toolscore.benchmarks.registry import benchmark_class, benchmark_from_run
from toolscore.records import RUN_FILE, RunConfig, RunStore, RunStoreError


def rebuild_benchmark(config: RunConfig, source: str | Path = RUN_FILE,
                      **overrides: Any) -> Benchmark:
    """The benchmark a run.json describes (``overrides`` replace some of its options); a
    benchmark that is not installed or an option it does not take is one line naming
    ``source`` (the run.json) and the field."""
    try:
        benchmark_class(config.benchmark)
    except LookupError as e:
        raise RunStoreError(f"{source}: benchmark: {e}; pass the Benchmark object to rebuild "
                            "this run") from None
    try:
        return benchmark_from_run(config.to_dict(), **overrides)
    except OptionError as e:
        if not any(repr(k) in str(e) for k in set(config.options) - set(overrides)):
            raise  # an override the caller gave: the caller's mistake, said as such
        raise RunStoreError(f"{source}: options: {e}") from None


def rebuild_from_dir(run_dir: str | Path) -> Benchmark:
    """The benchmark of the run directory ``run_dir``, from its run.json."""
    store = RunStore(run_dir)
    return rebuild_benchmark(store.config(), store.path / RUN_FILE)
