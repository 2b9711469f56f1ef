"""The dataset sources the installed benchmarks declare (``Benchmark.dataset_source``), by
name: ``toolscore data NAME`` finds (or downloads) one without knowing any benchmark. The
price table of hosted models (:mod:`toolscore.models.prices`) is one too: ``prices``."""

from __future__ import annotations

from toolscore.benchmarks.registry import benchmark_class
from toolscore.data import DatasetSource
from toolscore.entrypoints import BENCHMARKS, ExtensionError
from toolscore.models.prices import SOURCE as PRICES


def dataset_sources() -> dict[str, DatasetSource]:
    """name -> source, over every installed benchmark that loads (the first to declare a name
    wins: benchmarks built on another share its data)."""
    found: dict[str, DatasetSource] = {}
    for name in BENCHMARKS.names():
        try:
            cls = benchmark_class(name)
        except ExtensionError:
            continue
        if cls.dataset is None:
            continue
        source = cls.dataset_source
        if source is None or source.name != cls.dataset:
            source = DatasetSource(cls.dataset)  # a name alone: any folder of that name
        found.setdefault(source.name, source)
        for extra in cls.dataset_extras:
            found.setdefault(extra.name, extra)
    found.setdefault(PRICES.name, PRICES)
    return found


def dataset_source(name: str) -> DatasetSource:
    """The source declared as ``name`` (a bare name, any folder, when no benchmark does)."""
    return dataset_sources().get(name) or DatasetSource(name)
