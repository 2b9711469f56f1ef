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
from toolscore.stats.sums import mean_of, ratio_of, sums_bootstrap_ci


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
    """(sample id, numerator, denominator) of the records where the metric is defined (both
    values as :func:`value_of` reads them, inlined: this runs 10,000 times per metric)."""
    ids, nums, dens = [], [], []
    num_key, den_key = m.numerator, m.denominator
    for r in records:
        scores = r.get("scores") or {}
        num: Any = scores.get(num_key)
        kind = type(num)
        if kind is not bool and not (kind in (int, float) and math.isfinite(num)):
            num = value_of(r, num_key)  # subclasses and the rest: the general reading
            if num is None:
                continue
        if den_key is not None:
            den: Any = scores.get(den_key)
            kind = type(den)
            if kind is not bool and not (kind in (int, float) and math.isfinite(den)):
                den = value_of(r, den_key)
                if den is None:
                    continue
            dens.append(float(den))
        ids.append(str(r["id"]))
        nums.append(float(num))
    return (ids, np.array(nums, dtype=float),
            np.array(dens, dtype=float) if den_key is not None else None)


def statistic(m: IntervalMetric):  # type: ignore[no-untyped-def]
    """The metric as a function of its column(s): ``f(nums)`` or ``f(nums, dens)``."""
    if m.denominator is None:
        return mean_of
    return lambda nums, dens: ratio_of(nums, dens, m.empty)


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
    low, high = sums_bootstrap_ci(nums, dens, empty=m.empty, n_resamples=n_resamples,
                                  seed=seed, groups=ids)
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
