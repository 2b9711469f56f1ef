"""What a leaderboard cell shows of a run: which headline metric, which split, and the model's
label (shared by the cell read from a run and the cell read from the results index)."""

from __future__ import annotations

import json
from typing import Any


class LeaderboardError(ValueError):
    """An input that is neither a run, a folder of runs nor a sweep plan (one line)."""


def model_label(model: str, model_args: dict[str, Any] | None) -> str:
    """The model and the generation settings it ran with: two temperatures are two rows."""
    args = " ".join(f"{k}={json.dumps(v)}" for k, v in sorted((model_args or {}).items()))
    return f"{model} {args}" if args else model


def pick_metric(specs: list[Any], wanted: str | None, benchmark: str, where: str) -> Any:
    if not specs:
        return None
    if wanted is None:
        return specs[0]
    for m in specs:
        if wanted in (m.label, m.key, m.numerator):
            return m
    names = ", ".join(sorted({m.label for m in specs}))
    raise LeaderboardError(f"{where}: --metric {wanted!r}: benchmark {benchmark!r} has no such "
                           f"headline metric (it has: {names}); use --metric BENCHMARK=METRIC "
                           "to choose per benchmark")


def split_key(available: list[str], wanted: str | None) -> str | None:
    """The split asked for; "all" (the default) is the only split when there is just one."""
    want = wanted or "all"
    if want in available:
        return want
    if want == "all" and len(available) == 1:
        return available[0]
    return None
