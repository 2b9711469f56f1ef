"""The agreement statistics against hand-computed values and, where it has one, scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolscore.stats import bootstrap_ci, cohen_kappa, icc3, icc3k, pearson_r
from toolscore.stats.agreement import pearson_repeated

sps = pytest.importorskip("scipy.stats")

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; they report ICC(3,1) = .71 and
# ICC(3,k) = .91.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                 [6, 2, 4, 7]]


# -- Pearson ---------------------------------------------------------------------------------------
def test_pearson_hand_computed() -> None:
    # dx = (-1, 0, 1), dy = (-4/3, -1/3, 5/3): r = 3 / sqrt(2 * 14/3)
    assert pearson_r([1, 2, 3], [1, 2, 4]) == pytest.approx(3 / math.sqrt(28 / 3))
    assert pearson_r([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_pearson_matches_scipy() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    assert pearson_r(x, y) == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)


def test_pearson_degenerate() -> None:
    assert math.isnan(pearson_r([1, 1, 1], [1, 2, 3]))
    assert math.isnan(pearson_r([1], [2]))
    with pytest.raises(ValueError, match="differ in length"):
        pearson_r([1, 2], [1, 2, 3])


def test_pearson_repeated_pairs_every_trial_with_the_reference() -> None:
    trials = [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]  # two trials x three targets
    reference = [1.0, 0.0, 1.0]
    # x = (1, 0, 1, 0, 0, 1), y = (1, 0, 1, 1, 0, 1): dx = x - 1/2, dy = y - 2/3;
    # sum dx dy = 1, sum dx^2 = 3/2, sum dy^2 = 4/3, so r = 1 / sqrt(2)
    assert pearson_repeated(trials, reference) == pytest.approx(1 / math.sqrt(2))
    # not the Pearson of the trial means (1/2, 0, 1), which is 0.866
    means = np.mean(trials, axis=0)
    assert pearson_r(means, reference) == pytest.approx(math.sqrt(3) / 2)
    # one trial: the same as pearson_r; a missing (nan) score leaves only its own pair out
    assert pearson_repeated([trials[0]], reference) == pytest.approx(1.0)
    gappy = [[1.0, 0.0, 1.0], [0.0, float("nan"), 1.0]]
    x, y = [1.0, 0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 1.0, 1.0]
    assert pearson_repeated(gappy, reference) == pytest.approx(pearson_r(x, y))
    with pytest.raises(ValueError, match="trials x 3 targets"):
        pearson_repeated([[1.0, 2.0]], reference)


# -- ICC -------------------------------------------------------------------------------------------
def test_icc3_hand_computed() -> None:
    # rows (1,2), (2,3), (3,5): MS_rows = 19/6, MS_error = 1/6 -> ICC(3,1) = 0.9, ICC(3,k) = 18/19
    ratings = [[1, 2], [2, 3], [3, 5]]
    assert icc3(ratings) == pytest.approx(0.9)
    assert icc3k(ratings) == pytest.approx(18 / 19)


def test_icc3_shrout_fleiss() -> None:
    assert icc3(SHROUT_FLEISS) == pytest.approx(0.71, abs=0.005)
    assert icc3k(SHROUT_FLEISS) == pytest.approx(0.91, abs=0.005)


def test_icc3_mean_squares_match_scipy_anova() -> None:
    # With one rating per cell the two-way residual equals the interaction; check MS_rows via the
    # one-way F of scipy on the transposed table (targets as groups) as an independent route.
    x = np.array(SHROUT_FLEISS, dtype=float)
    n, k = x.shape
    f_rows = sps.f_oneway(*x).statistic  # between-target F, error = within-target
    ms_rows = k * ((x.mean(1) - x.mean()) ** 2).sum() / (n - 1)
    ms_within = ((x - x.mean(1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    assert f_rows == pytest.approx(ms_rows / ms_within)


def test_icc3_is_consistency_not_absolute_agreement() -> None:
    base = np.array([[1, 2], [2, 3], [3, 5], [4, 4]], dtype=float)
    shifted = base + np.array([0.0, 10.0])  # one rater uniformly 10 points higher
    assert icc3(shifted) == pytest.approx(icc3(base))
    assert icc3([[1, 1], [2, 2], [3, 3]]) == pytest.approx(1.0)


def test_icc3_degenerate() -> None:
    assert math.isnan(icc3([[1, 2]]))
    assert math.isnan(icc3([[1, 1], [1, 1]]))
    with pytest.raises(ValueError, match="2-d"):
        icc3([1, 2, 3])


# -- Cohen's kappa ---------------------------------------------------------------------------------
def test_kappa_textbook_example() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = .7, p_e = .5, kappa = .4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_hand_computed_and_edges() -> None:
    # p_o = 3/4; marginals (1/2, 1/2) and (1/4, 3/4) -> p_e = 1/2 -> kappa = 1/2
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    assert cohen_kappa([True, False], [True, False], labels=[True, False, None]) == 1.0
    with pytest.raises(ValueError, match="not in labels"):
        cohen_kappa([1, 2], [1, 3], labels=[1, 2])


# -- bootstrap -------------------------------------------------------------------------------------
def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    x = np.random.default_rng(2).normal(5.0, 1.0, size=40)
    ci = bootstrap_ci(x, np.mean, seed=7)
    assert ci == bootstrap_ci(x, np.mean, seed=7)
    assert ci != bootstrap_ci(x, np.mean, seed=8)
    assert ci[0] < x.mean() < ci[1]


def test_bootstrap_agrees_with_scipy_percentile() -> None:
    x = np.random.default_rng(3).normal(0.0, 1.0, size=60)
    ours = bootstrap_ci(x, np.mean, n_resamples=20000, seed=0)
    theirs = sps.bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                           rng=np.random.default_rng(0)).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.02)
    assert ours[1] == pytest.approx(theirs.high, abs=0.02)


def test_bootstrap_paired_resamples_rows_together() -> None:
    x = np.arange(30, dtype=float)
    low, high = bootstrap_ci((x, 2 * x + 1), pearson_r, n_resamples=200)
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)  # pairs never break up


def test_bootstrap_degenerate() -> None:
    assert all(math.isnan(v) for v in bootstrap_ci((np.ones(5), np.arange(5.0)), pearson_r))
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], np.mean, confidence=1.5)
