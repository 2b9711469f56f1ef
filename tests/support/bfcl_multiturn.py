"""What the multi-turn tests share: the recorded backend sequences
(tests/fixtures/bfcl/backends.json.gz), the classes each entry involves as recorded there (so
tests can be grouped by class before the dataset is read), and which of toolscore's backends
exist yet."""

from __future__ import annotations

import functools
import gzip
import importlib
import json
from pathlib import Path
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import BACKENDS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bfcl" / "backends.json.gz"


@functools.cache
def recorded() -> list[dict[str, Any]]:
    """The recorded sequences: {"id", "variant", "turns": [{"calls", "results", "state"}],
    "final_state"?}."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        rows: list[dict[str, Any]] = json.load(handle)
    return rows


def classes_of(row: dict[str, Any]) -> tuple[str, ...]:
    """The classes a recorded row's entry involves (sorted)."""
    return tuple(sorted(row["turns"][0]["state"]))


@functools.cache
def classes_by_id() -> dict[str, tuple[str, ...]]:
    return {row["id"]: classes_of(row) for row in recorded()}


def missing(classes: tuple[str, ...]) -> list[str]:
    """The classes whose toolscore module is not there (yet)."""
    out = []
    for name in classes:
        try:
            importlib.import_module(BACKENDS[name].partition(":")[0])
        except ImportError:
            out.append(name)
    return out
