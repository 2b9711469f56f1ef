"""The group-total bootstrap gives bit for bit the row-by-row bootstrap's interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolscore.stats import bootstrap_ci
from toolscore.stats.sums import mean_of, ratio_of, sums_bootstrap_ci


def _rows(nums, dens, groups, empty, seed, n_resamples=300):  # type: ignore[no-untyped-def]
    x = np.asarray(nums, dtype=float)
    if dens is None:
        return bootstrap_ci(x, mean_of, n_resamples=n_resamples, seed=seed, groups=groups)
    return bootstrap_ci((x, np.asarray(dens, dtype=float)), lambda a, b: ratio_of(a, b, empty),
                        n_resamples=n_resamples, seed=seed, groups=groups)


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("layout", ["rows", "balanced", "unbalanced"])
@pytest.mark.parametrize("ratio", [False, True])
def test_identical_to_the_row_bootstrap(layout: str, ratio: bool) -> None:
    rng = np.random.default_rng(7)
    for trial in range(15):
        n = int(rng.integers(1, 200))
        nums = rng.integers(0, 4, n).astype(float)
        dens = rng.integers(0, 3, n) if ratio else None  # ints: zero totals happen
        groups = {"rows": None, "balanced": [f"s{i // 4}" for i in range(n)],
                  "unbalanced": [str(g) for g in rng.integers(0, max(1, n // 3), n)]}[layout]
        empty = [0.0, 1.0, float("nan")][trial % 3]
        got = sums_bootstrap_ci(nums, dens, empty=empty, n_resamples=300, seed=trial,
                                groups=groups)
        assert _same(got, _rows(nums, dens, groups, empty, trial)), (layout, ratio, trial)


def test_booleans_count_one_and_zero() -> None:
    outcomes = [True, False, True, True] * 10
    groups = [f"s{i % 10}" for i in range(40)]
    got = sums_bootstrap_ci(np.array(outcomes, dtype=float), n_resamples=500, groups=groups)
    assert got == _rows(outcomes, None, groups, 0.0, 0, n_resamples=500)
    assert 0.5 < got[0] <= 0.75 <= got[1] < 1.0


def test_fractions_and_huge_sums_take_the_row_path() -> None:
    """Where another summation order could move the last bit, the rows are summed as before:
    thirds (not exact in binary) and integers whose sums pass 2**53."""
    rng = np.random.default_rng(3)
    thirds = rng.integers(0, 4, 90) / 3
    groups = [f"s{i % 9}" for i in range(90)]
    assert sums_bootstrap_ci(thirds, n_resamples=200, groups=groups) == _rows(
        thirds, None, groups, 0.0, 0, n_resamples=200)
    huge = np.array([2.0**52 + 1, 3.0, 2.0**52 - 7] * 4)
    assert sums_bootstrap_ci(huge, np.ones(12), n_resamples=200) == _rows(
        huge, np.ones(12), None, 0.0, 0, n_resamples=200)


def test_degenerate_and_bad_input() -> None:
    assert all(math.isnan(v) for v in sums_bootstrap_ci([]))
    assert all(math.isnan(v) for v in sums_bootstrap_ci([1.0, 2.0], [0.0, 0.0]))
    assert sums_bootstrap_ci([1.0, 2.0], [0.0, 0.0], empty=1.0) == (1.0, 1.0)
    with pytest.raises(ValueError, match="differ in length"):
        sums_bootstrap_ci([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="one label per row"):
        sums_bootstrap_ci([1.0, 2.0], groups=["a"])
    with pytest.raises(ValueError, match="n_resamples"):
        sums_bootstrap_ci([1.0], n_resamples=0)
