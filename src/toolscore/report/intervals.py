"""Headline metrics with bootstrap intervals, computed the way the benchmark defines them.

A benchmark states each headline metric as a definition over per-record scores
(:class:`~toolscore.benchmarks.base.IntervalMetric`): a ratio of sums (a micro average) or a
mean. Resampling the records and re-applying that definition gives an interval on the figure
the benchmark publishes, not on some per-sample average it never reports (a conversation
without actions is not "100% action precision"). Epochs of one sample are not independent, so
when a sample has several, whole samples are resampled (see :func:`resampled_unit`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from toolscore.benchmarks.base import IntervalMetric
from toolscore.stats import bootstrap_ci


def split_of(record: dict[str, Any]) -> str:
    return str((record.get("meta") or {}).get("split") or "all")


def value_of(record: dict[str, Any], key: str) -> float | None:
    """A per-record score as a float (booleans count 1/0); None when missing or not finite."""
    v = (record.get("scores") or {}).get(key)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def definition(m: IntervalMetric) -> str:
    """The metric's definition in words, for tables and JSON."""
    if m.denominator is None:
        return f"mean of {m.numerator}"
    return f"sum of {m.numerator} / sum of {m.denominator}"


def columns(records: list[dict[str, Any]], m: IntervalMetric
            ) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """(sample id, numerator, denominator) of the records where the metric is defined."""
    rows = []
    for r in records:
        num = value_of(r, m.numerator)
        den = value_of(r, m.denominator) if m.denominator is not None else 0.0
        if num is not None and den is not None:
            rows.append((str(r["id"]), num, den))
    ids = [x[0] for x in rows]
    nums = np.array([x[1] for x in rows], dtype=float)
    dens = np.array([x[2] for x in rows], dtype=float) if m.denominator is not None else None
    return ids, nums, dens


def statistic(m: IntervalMetric):  # type: ignore[no-untyped-def]
    """The metric as a function of its column(s): ``f(nums)`` or ``f(nums, dens)``."""
    if m.denominator is None:
        return lambda nums: float(np.mean(nums)) if len(nums) else float("nan")

    def ratio(nums: np.ndarray, dens: np.ndarray) -> float:
        total = float(dens.sum())
        return float(nums.sum()) / total if total else m.empty

    return ratio


def compute(records: list[dict[str, Any]], m: IntervalMetric) -> float | None:
    """The metric over ``records`` by its definition; None when no record has its scores."""
    ids, nums, dens = columns(records, m)
    if not ids:
        return None
    return statistic(m)(nums) if dens is None else statistic(m)(nums, dens)


def resampled_unit(records: list[dict[str, Any]]) -> str:
    """What the intervals resample: samples when some sample has several epochs (they are not
    independent), else (sample, epoch) records, which are then the same thing."""
    ids = [str(r["id"]) for r in records if r.get("status") == "ok"]
    return "samples" if len(set(ids)) < len(ids) else "records"


def interval(records: list[dict[str, Any]], m: IntervalMetric, *, n_resamples: int,
             seed: int) -> tuple[float, float, int] | None:
    """(low, high, n) of the 95% percentile bootstrap interval; None if the metric has no
    scores in ``records``."""
    ids, nums, dens = columns(records, m)
    if not ids:
        return None
    data: Any = nums if dens is None else (nums, dens)
    low, high = bootstrap_ci(data, statistic(m), n_resamples=n_resamples, seed=seed,
                             groups=ids)
    return low, high, len(ids)


def by_split(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Finished records per split, plus ``"all"`` when there are several splits."""
    ok = [r for r in records if r.get("status") == "ok"]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        groups[split_of(r)].append(r)
    if len(groups) > 1:
        groups["all"] = ok
    return dict(groups)


def headline(records: list[dict[str, Any]], metrics: dict[str, Any] | None,
             specs: list[IntervalMetric], *, n_resamples: int = 2000,
             seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """``{split: [{label, key, definition, kind, value, low, high, n, published}]}``.

    ``value`` is the published figure (``scores.json``, group = split, the spec's ``key``)
    when there is one, else the definition applied to the records (``published`` says which).
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for split, recs in by_split(records).items():
        group = (metrics or {}).get(split)
        published = group if isinstance(group, dict) else {}
        rows = []
        for m in specs:
            ci = interval(recs, m, n_resamples=n_resamples, seed=seed)
            if ci is None:
                continue
            stored = published.get(m.key) if m.key is not None else None
            from_file = isinstance(stored, (int, float)) and not isinstance(stored, bool)
            value = float(stored) if from_file else compute(recs, m)  # type: ignore[arg-type]
            rows.append({"label": m.label, "key": m.key, "definition": definition(m),
                         "kind": m.kind, "value": value, "low": ci[0], "high": ci[1],
                         "n": ci[2], "published": from_file})
        out[split] = rows
    return out
