"""Paired tests for "is run B really better than run A on the same samples?".

Two runs of the same benchmark score the same samples, so the right question is about the
per-sample differences, not about two independent means: pairing removes the (large) variation
between easy and hard samples and leaves only the variation that the change could have caused.

- :func:`mcnemar_exact` for a pass/fail metric: only the discordant pairs (passed in one run,
  failed in the other) carry information; under "no difference" each discordant pair is a fair
  coin, so the exact test is a two-sided binomial test on them.
- :func:`sign_test` for any numeric metric: the same binomial test on the signs of the non-zero
  differences; it assumes nothing about their size.
- :func:`wilcoxon_signed_rank` for a continuous metric: also uses the size of the differences
  (through their ranks), so it has more power than the sign test when differences are symmetric.
  Exact null distribution for small samples without ties, normal approximation otherwise (the
  same choices as ``scipy.stats.wilcoxon``, which the tests use as a cross-check).
- :func:`paired_bootstrap_diff` for an interval around the difference of means, from the shared
  :func:`toolscore.stats.agreement.bootstrap_ci` (indices resampled together, so pairs stay pairs).

Pure numpy and :mod:`math`, so the library needs no scipy at run time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from toolscore.stats.agreement import bootstrap_ci

EXACT_WILCOXON_MAX_N = 50  # scipy's threshold for the exact null distribution


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test: its name, statistic, two-sided p-value and the pairs it used."""

    test: str
    statistic: float
    p_value: float
    n: int


def binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial p-value for ``k`` successes out of ``n`` at p = 1/2.

    With p = 1/2 the distribution is symmetric, so "as or more extreme" is twice the smaller tail
    (capped at 1); this equals ``scipy.stats.binomtest(k, n, 0.5).pvalue``.
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1)) / 2.0**n
    return float(min(1.0, 2.0 * tail))


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired arrays differ in length ({x.size} vs {y.size})")
    return x, y


def mcnemar_exact(a: ArrayLike, b: ArrayLike) -> PairedTest:
    """Exact McNemar test on paired pass/fail outcomes ``a`` and ``b`` (truthy = pass).

    The statistic is the number of pairs that pass in B only; the p-value is the binomial test of
    that count against all discordant pairs. No discordant pairs gives p = 1.
    """
    x, y = _pair(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    return PairedTest("mcnemar-exact", float(only_b), binom_two_sided(only_b, only_a + only_b),
                      int(x.size))


def sign_test(a: ArrayLike, b: ArrayLike) -> PairedTest:
    """Two-sided sign test on ``b - a``: ties (zero differences) are dropped."""
    x, y = _pair(a, b)
    d = y - x
    pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
    return PairedTest("sign", float(pos), binom_two_sided(pos, pos + neg), int(x.size))


def _rank_abs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``values`` and the sizes of the tie groups."""
    order = np.argsort(values, kind="mergesort")
    sorted_vals = values[order]
    ranks = np.empty(values.size, dtype=float)
    groups = []
    i = 0
    while i < values.size:
        j = i
        while j + 1 < values.size and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        groups.append(j - i + 1)
        i = j + 1
    return ranks, np.asarray(groups, dtype=float)


def _signed_rank_null_cdf(n: int) -> np.ndarray:
    """P(W+ <= w) for w = 0..n(n+1)/2 when every sign is a fair coin (no ties)."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):  # add rank r with sign + or -
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / 2.0**n


def wilcoxon_signed_rank(a: ArrayLike, b: ArrayLike) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test on ``b - a`` (zero differences dropped).

    The statistic is the rank sum of the positive differences. Without ties and with at most
    50 non-zero differences the p-value is exact; otherwise it is the normal approximation with
    the tie correction of the variance and no continuity correction.
    """
    x, y = _pair(a, b)
    d = y - x
    d = d[d != 0]
    n = int(d.size)
    if n == 0:
        return PairedTest("wilcoxon", 0.0, 1.0, int(x.size))
    ranks, ties = _rank_abs(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    if n <= EXACT_WILCOXON_MAX_N and np.all(ties == 1):
        cdf = _signed_rank_null_cdf(n)
        w = int(round(min(w_plus, n * (n + 1) / 2.0 - w_plus)))
        return PairedTest("wilcoxon-exact", w_plus, float(min(1.0, 2.0 * cdf[w])), int(x.size))
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(ties**3 - ties)) / 48.0
    if var <= 0:
        return PairedTest("wilcoxon-normal", w_plus, 1.0, int(x.size))
    z = (w_plus - mean) / math.sqrt(var)
    return PairedTest("wilcoxon-normal", w_plus, float(math.erfc(abs(z) / math.sqrt(2.0))),
                      int(x.size))


def paired_bootstrap_diff(a: ArrayLike, b: ArrayLike, *, n_resamples: int = 2000,
                          confidence: float = 0.95, seed: int = 0,
                          groups: ArrayLike | None = None) -> tuple[float, float, float]:
    """Mean of ``b - a`` and its seeded percentile bootstrap interval: ``(diff, low, high)``.

    The pairs are resampled together, so the interval reflects only within-sample variation;
    with ``groups`` (the sample id of each pair) whole samples are resampled, all their epochs
    together (see :func:`toolscore.stats.agreement.bootstrap_ci`).
    """
    x, y = _pair(a, b)
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    diff = float(np.mean(y - x))
    low, high = bootstrap_ci((x, y), lambda u, v: float(np.mean(v - u)),
                             n_resamples=n_resamples, confidence=confidence, seed=seed,
                             groups=groups)
    return diff, low, high
