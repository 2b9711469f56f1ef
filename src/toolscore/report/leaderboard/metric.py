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


def cell(*, run_dir: str, benchmark: str, model: Any, model_args: dict[str, Any],
         options: dict[str, Any], mode: Any, split: str | None, spec: Any,
         row: dict[str, Any] | None, epochs: int, pass_k: Any, noise_floor: Any,
         noise_floor_single: Any, tokens: Any, calls: Any, cost: dict[str, Any] | None,
         records: Any, errors: Any, note: Any, columns: dict[str, Any],
         finished: list[dict[str, Any]]) -> dict[str, Any]:
    """One run as a leaderboard cell (read from its files or from the results index: the same
    document either way). ``row`` is the headline metric's interval row of the split, ``cost``
    the run's priced usage (None: not priced), ``finished`` the split's finished records the
    paired tests read (kept as ``_records``, with the metric's definition as ``_spec``)."""
    return {
        "run_dir": run_dir, "benchmark": benchmark, "model": model, "model_args": model_args,
        "model_label": model_label(str(model), model_args),
        "options": options, "mode": mode, "split": split,
        "metric": None if spec is None else {"label": spec.label, "key": spec.key,
                                             "kind": spec.kind,
                                             "higher_is_better": spec.higher_is_better},
        "value": None if row is None else row["value"],
        "low": None if row is None else row["low"], "high": None if row is None else row["high"],
        "n": None if row is None else row["n"], "published": bool(row and row["published"]),
        "epochs": epochs, "pass_hat_k": pass_k,
        "noise_floor": None if not pass_k else noise_floor,
        "noise_floor_single": None if not pass_k else noise_floor_single,
        "tokens": tokens, "calls": calls,
        "cost": None if cost is None else cost["total"],
        "cost_complete": None if cost is None else cost["complete"],
        "cost_partial_roles": [] if cost is None else sorted(
            r for r, c in cost["by_role"].items() if c.get("partial") or not c.get("priced")),
        "records": records, "errors": errors, "note": note, "columns": columns,
        "_records": finished, "_spec": spec,
    }
