"""The benchmark's own headline figures compared between two runs, pair by pair.

Each side's value is the metric as the benchmark defines it over the shared (sample, epoch)
pairs (a ratio of sums or a mean, see :mod:`toolscore.report.intervals`), so it is the number
``toolscore report`` shows for that run. The interval comes from a paired bootstrap that
resamples samples (with all their epochs) and re-applies the definition to both sides of the
same resample. The test: exact McNemar for the mean of a pass/fail score, Wilcoxon or the sign
test for the mean of a numeric one (as for per-sample scores), and for a ratio of sums a paired
permutation test: under "no difference" the two runs' results on a sample are exchangeable, so
swapping them sample by sample at random gives the null distribution of the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolscore.benchmarks.base import IntervalMetric
from toolscore.report.intervals import definition, statistic, value_of
from toolscore.stats import bootstrap_ci
from toolscore.stats.paired import PairedTest, mcnemar_exact
from toolscore.stats.sums import paired_sums_bootstrap_ci

Pair = tuple[dict[str, Any], dict[str, Any]]


def _defined(record: dict[str, Any], m: IntervalMetric) -> bool:
    return value_of(record, m.numerator) is not None and (
        m.denominator is None or value_of(record, m.denominator) is not None)


def _column(records: list[dict[str, Any]], key: str | None) -> np.ndarray:
    return np.array([value_of(r, key) if key is not None else 0.0 for r in records],
                    dtype=float)


def permutation_test(groups: list[str], a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...],
                     stat: Callable[..., float], *, n_resamples: int, seed: int) -> PairedTest:
    """Paired permutation test of ``stat(b) - stat(a)``: each sample's rows swap sides with
    probability 1/2 (all its epochs together); p = (1 + #{|null| >= |observed|}) / (1 + n)."""
    labels = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    index = np.array([labels[g] for g in groups])
    observed = stat(*b) - stat(*a)
    if not np.isfinite(observed):
        return PairedTest("permutation", float("nan"), float("nan"), len(groups))
    rng = np.random.default_rng(seed)
    flips = rng.integers(0, 2, size=(n_resamples, len(labels))).astype(bool)
    extreme = 0
    for row in flips:
        swap = row[index]
        left = tuple(np.where(swap, y, x) for x, y in zip(a, b, strict=True))
        right = tuple(np.where(swap, x, y) for x, y in zip(a, b, strict=True))
        null = stat(*right) - stat(*left)
        extreme += bool(np.isfinite(null) and abs(null) >= abs(observed) - 1e-12)
    return PairedTest("permutation", float(observed), (1 + extreme) / (1 + n_resamples),
                      len(groups))


def compare_headline_metric(m: IntervalMetric, pairs: list[Pair], groups: list[str], *,
                            continuous_tests: dict[str, Callable[..., PairedTest]],
                            continuous_test: str, n_resamples: int, seed: int,
                            grouped: bool) -> dict[str, Any]:
    """One headline metric of both runs over the pairs where both define it; ``grouped``
    resamples samples (several epochs) rather than pairs."""
    used = [(x, y, g) for (x, y), g in zip(pairs, groups, strict=True)
            if _defined(x, m) and _defined(y, m)]
    ids = [g for _, _, g in used]
    n_samples = len(set(ids))
    row: dict[str, Any] = {
        "metric": m.label, "key": m.key, "definition": definition(m),
        "kind": "ratio" if m.denominator is not None else "mean", "rate": m.kind == "rate",
        "numerator": m.numerator, "higher_is_better": m.higher_is_better,
        "n": len(used), "n_samples": n_samples,
        "resampled": "samples" if grouped and n_samples < len(used) else "(sample, epoch) pairs"}
    empty = {"value_a": None, "value_b": None, "diff": None, "ci_low": None, "ci_high": None,
             "test": None, "statistic": None, "p_value": None}
    if not used:
        return {**row, **empty}
    recs_a, recs_b = [u[0] for u in used], [u[1] for u in used]
    stat = statistic(m)
    if m.denominator is None:
        a: tuple[np.ndarray, ...] = (_column(recs_a, m.numerator),)
        b: tuple[np.ndarray, ...] = (_column(recs_b, m.numerator),)
    else:
        a = (_column(recs_a, m.numerator), _column(recs_a, m.denominator))
        b = (_column(recs_b, m.numerator), _column(recs_b, m.denominator))
    value_a, value_b = stat(*a), stat(*b)
    clusters = ids if row["resampled"] == "samples" else None
    fast = paired_sums_bootstrap_ci(a, b, empty=m.empty, n_resamples=n_resamples, seed=seed,
                                    groups=clusters)  # the same numbers, from group totals
    low, high = fast if fast is not None else bootstrap_ci(
        (*a, *b), lambda *c: stat(*c[len(a):]) - stat(*c[:len(a)]), n_resamples=n_resamples,
        seed=seed, groups=clusters)
    if m.denominator is not None:
        test = permutation_test(ids, a, b, stat, n_resamples=n_resamples, seed=seed)
    elif all(isinstance((r.get("scores") or {}).get(m.numerator), bool)
             for r in (*recs_a, *recs_b)):
        test = mcnemar_exact(a[0], b[0])
    else:
        test = continuous_tests[continuous_test](a[0], b[0])
    p = test.p_value if np.isfinite(test.p_value) else None
    return {**row, "value_a": value_a, "value_b": value_b, "diff": value_b - value_a,
            "ci_low": low, "ci_high": high, "test": test.test, "statistic": test.statistic,
            "p_value": p}
