"""Benchmarks by name, through the ``toolscore.benchmarks`` entry-point group.

An entry point names a :class:`~toolscore.benchmarks.base.Benchmark` subclass; toolscore's own
benchmarks are declared the same way, so an installed package's benchmark runs with
``toolscore run NAME`` exactly like a built-in one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Benchmark, OptionError, parse_options
from toolscore.data import find_dataset
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
    if cls.dataset is None:
        if data is not None:
            raise OptionError(f"benchmark {name!r} ships its own data; --data is not used")
        data_dir = None
    elif data is None and not cls.needs_dataset(opts):
        data_dir = None
    else:
        data_dir = find_dataset(cls.dataset, data, download=download)
    return cls.create(data_dir, opts)
