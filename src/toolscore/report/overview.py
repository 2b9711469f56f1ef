"""Everything a reader needs to judge one run, as one JSON-able dict (behind ``toolscore report``).

The headline metrics are the benchmark's own aggregation (``scores.json``, computed the way the
method publishes them), never re-derived here, so the report and ``toolscore score`` cannot
disagree. What the report adds is what a single number hides: who and what produced it (model,
embedder, judge, scoring mode, seeds), how many samples errored, what it cost in tokens per
model role (and money, given a price table), and — when samples were run several times — how
reliable the model is and how much of a difference between two runs is noise
(:mod:`toolscore.stats.repeats`), per split and overall.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from toolscore.report.usage import cost, role_models, usage_by_role
from toolscore.records import SCORES_FILE, RunStore
from toolscore.stats.repeats import repeat_summary

PRIMARY = "success"


def _primary_metric(records: list[dict[str, Any]]) -> str | None:
    """``success`` if the benchmark scores it, else the first pass/fail score, else None."""
    seen: list[str] = []
    for r in records:
        for key, value in (r.get("scores") or {}).items():
            if isinstance(value, bool) and key not in seen:
                seen.append(key)
    if PRIMARY in seen:
        return PRIMARY
    return seen[0] if seen else None


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
    totals = {"input_tokens": 0, "output_tokens": 0, "calls": 0, "cached_calls": 0}
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


def run_overview(path: str | Path, *, seed: int = 0,
                 prices: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The report of one run directory (see the module docstring).

    ``usage_by_role`` splits the tokens by model role; with a price table (see
    :func:`toolscore.report.usage.load_prices`) ``cost`` gives cost per role and in total.

    ``repeats`` is filled only when some sample has more than one finished epoch; its
    ``noise_floor`` is the smallest difference between two single-epoch runs that is real at
    95%, ``noise_floor_k_epochs`` the same for two runs of this many epochs each.
    """
    store = RunStore(path)
    config = store.read_config()
    records = list(store.latest().values())
    scores_file = store.path / SCORES_FILE
    metrics = json.loads(scores_file.read_text()) if scores_file.is_file() else None
    bench = config.get("benchmark_config") or {}
    epochs = int(config.get("epochs") or max((int(r.get("epoch", 0)) + 1 for r in records),
                                             default=1))
    metric = _primary_metric(records)
    repeats = None
    if metric is not None:
        groups = outcomes_by_split(records, metric)
        if any(len(v) > 1 for by_id in groups.values() for v in by_id.values()):
            repeats = {"metric": metric,
                       "splits": {s: repeat_summary(o, seed=seed) for s, o in groups.items()}}
    roles = usage_by_role(records, epochs)
    models = role_models(config)
    return {
        "run_dir": str(store.path),
        "benchmark": config.get("benchmark"),
        "model": config.get("model"),
        "embedder": bench.get("embedder_id") or bench.get("embedder"),
        "judge": bench.get("judge_id") or bench.get("judge") or config.get("judge"),
        "strict": bench.get("strict"),
        "seeds": {k: v for k, v in bench.items() if "seed" in k},
        "epochs": epochs,
        "created": config.get("created"),
        "metrics": metrics,
        "counts": _split_counts(records),
        "repeats": repeats,
        "usage": _usage(records, roles, epochs),
        "usage_by_role": {role: {"model": models.get(role), **u} for role, u in roles.items()},
        "cost": cost(roles, models, prices, epochs) if prices is not None else None,
    }
