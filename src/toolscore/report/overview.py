"""Everything a reader needs to judge one run, as one JSON-able dict (behind ``toolscore report``).

The headline metrics are the benchmark's own aggregation (``scores.json``, computed the way the
method publishes them), never re-derived here, so the report and ``toolscore score`` cannot
disagree. What the report adds is what a single number hides: who and what produced it (model,
embedder, judge, user, the benchmark's mode, seeds), how uncertain it is (bootstrap intervals
on the benchmark's own definitions), where the misses are (the benchmark's breakdowns), how
many samples errored, what it cost in tokens per model role (and money, given a price table),
and — when samples were run several times — how reliable the model is and how much of a
difference between two runs is noise (:mod:`toolscore.stats.repeats`), per split and overall.
Everything benchmark-specific comes from the benchmark (:mod:`toolscore.report.view`).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Breakdown
from toolscore.models.prices import Prices
from toolscore.records import RunStore
from toolscore.report.intervals import headline, resampled_unit
from toolscore.report.usage import cost, role_models, usage_by_model, usage_by_role
from toolscore.report.view import RunView, run_view
from toolscore.stats.repeats import repeat_summary


def outcomes_by_split(records: list[dict[str, Any]], metric: str
                      ) -> dict[str, dict[str, list[bool]]]:
    """``{split: {sample id: [outcome per finished epoch, in epoch order]}}`` plus ``"all"``."""
    groups: dict[str, dict[str, list[tuple[int, bool]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        value = (r.get("scores") or {}).get(metric)
        if r.get("status") != "ok" or not isinstance(value, bool):
            continue
        item = (int(r.get("epoch", 0)), value)
        split = (r.get("meta") or {}).get("split")
        groups["all"][str(r["id"])].append(item)
        if split is not None:
            groups[str(split)][str(r["id"])].append(item)
    return {split: {sid: [v for _, v in sorted(items)] for sid, items in by_id.items()}
            for split, by_id in groups.items()}


def _usage(records: list[dict[str, Any]], roles: dict[str, dict[str, Any]],
           epochs: int) -> dict[str, Any]:
    """Totals over every role (see :mod:`toolscore.report.usage` for records without a split)."""
    totals = {"input_tokens": 0, "output_tokens": 0, "calls": 0, "cached_calls": 0,
              "reasoning_tokens": 0}
    for u in roles.values():
        for key in totals:
            totals[key] += int(u.get(key) or 0)
    time_s = sum(float(r.get("time_s") or 0.0) for r in records)
    tokens = totals["input_tokens"] + totals["output_tokens"]
    return {**totals, "tokens": tokens, "tokens_per_run": tokens / max(epochs, 1),
            "sample_time_s": round(time_s, 3)}


def _split_counts(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, Any]] = defaultdict(lambda: {"ids": set(), "records": 0,
                                                             "errors": 0})
    for r in records:
        for split in ("all", (r.get("meta") or {}).get("split")):
            if split is None:
                continue
            c = counts[str(split)]
            c["ids"].add(str(r["id"]))
            c["records"] += 1
            c["errors"] += r.get("status") != "ok"
    return {s: {"samples": len(c["ids"]), "records": c["records"], "errors": c["errors"]}
            for s, c in counts.items()}


@contextmanager
def paused_collector() -> Iterator[None]:
    """Pause the cyclic garbage collector while a run's records are read and summarised.

    Decoded records are trees (no cycles: reference counting frees them), but they are many
    small containers, and each collection their allocation triggers walks the whole growing
    heap: a fifth of the HTML report's time on 10,000 ToolTalk records, to find nothing.
    Restored on the way out, whatever happens (left off if the caller had turned it off)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def run_overview(path: str | Path, *, seed: int = 0,
                 prices: Prices = None,
                 n_resamples: int = 2000) -> dict[str, Any]:
    """The report of one run directory (see the module docstring).

    ``mode``, ``judge`` and ``user`` name how the run was scored and who played the other
    parts, as the benchmark states them. ``intervals`` are the benchmark's headline metrics per
    split with 95% bootstrap intervals (``Benchmark.interval_metrics``), ``breakdowns`` its
    tables of where the misses are. ``usage_by_role`` splits the tokens by model role; ``cost``
    gives cost per role and in total, from the pinned price table and ``prices`` over it (a
    :class:`~toolscore.models.prices.PriceTable`, or a user's entries: see
    :mod:`toolscore.models.prices`); a model neither knows is "unpriced".

    ``repeats`` is filled only when some sample has more than one finished epoch; its
    ``noise_floor`` is the smallest difference between two single-epoch runs that is real at
    95%, ``noise_floor_k_epochs`` the same for two runs of this many epochs each.
    """
    store = RunStore(path)
    config = store.read_config()
    view = run_view(config)
    with paused_collector():
        records = sorted(store.latest(view.cls.summary_output).values(),
                         key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
        metrics = store.read_scores()
        doc = overview_of(store.path, config, records, metrics, view, seed=seed,
                          prices=prices, n_resamples=n_resamples)
        del records  # freed before the collector is back
    return doc


def overview_of(run_dir: Path, config: dict[str, Any], records: list[dict[str, Any]],
                metrics: dict[str, Any] | None, view: RunView, *, seed: int,
                prices: Prices,
                n_resamples: int) -> dict[str, Any]:
    """:func:`run_overview` of records already read (the HTML report reuses them)."""
    bench = config.get("benchmark_config") or {}
    epochs = int(config.get("epochs") or max((int(r.get("epoch", 0)) + 1 for r in records),
                                             default=1))
    ok = [r for r in records if r.get("status") == "ok"]
    metric = view.primary_metric(ok)
    repeats = None
    if metric is not None:
        groups = outcomes_by_split(records, metric)
        if any(len(v) > 1 for by_id in groups.values() for v in by_id.values()):
            repeats = {"metric": metric,
                       "splits": {s: repeat_summary(o, seed=seed) for s, o in groups.items()}}
    roles = usage_by_role(records, epochs)
    models = role_models(config)
    breakdowns = [breakdown_dict(b) for b in view.breakdowns(records)]  # may set view.note
    return {
        "run_dir": str(run_dir),
        "benchmark": config.get("benchmark"),
        "model": config.get("model"),
        "mode": view.mode(),
        **view.roles(),
        "embedder": bench.get("embedder_id") or bench.get("embedder"),
        "seeds": {k: v for k, v in bench.items() if "seed" in k},
        "epochs": epochs,
        "created": config.get("created"),
        "note": view.note,
        "metrics": metrics,
        "primary_metric": metric,
        "intervals": {"resampled": resampled_unit(records), "n_resamples": n_resamples,
                      "seed": seed, "splits": headline(
                          records, metrics, view.interval_metrics(ok),
                          n_resamples=n_resamples, seed=seed)},
        "breakdowns": breakdowns,
        "counts": _split_counts(records),
        "repeats": repeats,
        "usage": _usage(records, roles, epochs),
        "usage_by_role": {role: {"model": models.get(role), **u} for role, u in roles.items()},
        "cost": cost(roles, models, prices, epochs, by_model=usage_by_model(records, models)),
    }


def breakdown_dict(b: Breakdown) -> dict[str, Any]:
    return {"title": b.title, "note": b.note, "matrix": list(b.matrix) if b.matrix else None,
            "columns": [{"key": c.key, "title": c.title, "kind": c.kind} for c in b.columns],
            "rows": b.rows}
