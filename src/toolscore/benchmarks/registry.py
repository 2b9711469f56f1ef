"""Benchmarks by name, through the ``toolscore.benchmarks`` entry-point group.

An entry point names a :class:`~toolscore.benchmarks.base.Benchmark` subclass; toolscore's own
benchmarks are declared the same way, so an installed package's benchmark runs with
``toolscore run NAME`` exactly like a built-in one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import (
    Benchmark,
    StoredRun,
    option_fields,
    parse_options,
    same_option,
)
from toolscore.benchmarks.trust import NOTHING, Trust
from toolscore.entrypoints import BENCHMARKS, ExtensionError


def benchmark_class(name: str) -> type[Benchmark]:
    """The Benchmark subclass registered as ``name`` (one-line LookupError otherwise)."""
    cls = BENCHMARKS.load(name)
    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise ExtensionError(f"benchmark {name!r}: the entry point gives {cls!r}, not a "
                             "toolscore.benchmarks.base.Benchmark subclass")
    return cls


def list_benchmarks() -> dict[str, str]:
    """name -> one-line description (loads each benchmark class, not its data)."""
    out = {}
    for name in BENCHMARKS.names():
        try:
            out[name] = benchmark_class(name).description or ""
        except ExtensionError as e:
            out[name] = f"(cannot be loaded: {e})"
    return out


def make_benchmark(name: str, data: str | Path | None = None, *, download: bool = True,
                   **options: Any) -> Benchmark:
    """A ready benchmark: ``options`` are validated against its declared ``Options`` (an
    unknown option or a wrong type is a one-line OptionError)."""
    cls = benchmark_class(name)
    opts = parse_options(cls.Options, options, f"benchmark {name!r}")
    return cls.create(cls.locate_data(data, opts, download), opts)


def benchmark_from_run(config: Mapping[str, Any], *, drop_unknown: bool = False,
                       trust: Trust = NOTHING, exact: bool = False,
                       **overrides: Any) -> Benchmark:
    """The benchmark a run.json (``config``, as a dict) describes, with its data folder and
    options; ``overrides`` replace some options. Options the benchmark no longer declares are
    dropped for runs written by 0.1.0 (which stored every benchmark's options) and, with
    ``drop_unknown``, for any run; otherwise they are a one-line OptionError. Never downloads:
    a run is rebuilt from the data it was made with (or the usual lookup when that is gone).

    A run directory is not trusted: a stored option that starts a process or loads code is
    withheld (the benchmark is built without acting on it, :meth:`Benchmark.create_stored`)
    unless ``trust`` vouches for it or it is overridden (``overrides`` are the caller's own).
    ``exact``: the benchmark is built to score, so it must score as the run was scored or
    refuse."""
    name = str(config.get("benchmark"))
    cls = benchmark_class(name)
    options = dict(config.get("options") or {})
    if drop_unknown or int(config.get("format_version") or 2) < 2:
        known = {f.name for f in option_fields(cls.Options)}
        options = {k: v for k, v in options.items() if k in known}
    withheld = {k: what for k, what in cls.runs_code(options).items()
                if k not in overrides and not trust.vouches(
                    k, options[k], lambda a, b, k=k: same_option(cls.Options, k, a, b))}
    options.update(overrides)
    data = config.get("data") if cls.dataset is not None else None
    opts = parse_options(cls.Options, options, f"benchmark {name!r}")
    stored = StoredRun(dict(config), withheld, exact)
    return cls.create_stored(cls.locate_data(data, opts, False), opts, stored)
