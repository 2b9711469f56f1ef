"""The paired bootstrap of a headline difference from group totals gives the very numbers of the
generic bootstrap (what lets a leaderboard of 1,000 runs test 2,000 pairs in a second)."""

from __future__ import annotations

import numpy as np
import pytest

from toolscore.report.intervals import mean_of, ratio_of
from toolscore.stats import bootstrap_ci
from toolscore.stats.sums import paired_sums_bootstrap_ci


def generic(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...], empty: float,
            groups: list[str] | None, seed: int) -> tuple[float, float]:
    def stat(*c: np.ndarray) -> float:
        return mean_of(c[0]) if len(c) == 1 else ratio_of(c[0], c[1], empty)

    return bootstrap_ci((*a, *b), lambda *c: stat(*c[len(a):]) - stat(*c[:len(a)]),
                        n_resamples=300, seed=seed, groups=groups)


@pytest.mark.parametrize("ratio", [False, True])
@pytest.mark.parametrize("shape", ["rows", "balanced", "unbalanced"])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_numbers_as_the_generic_bootstrap(ratio: bool, shape: str, seed: int) -> None:
    rng = np.random.default_rng(seed + 100)
    n = 30
    groups = {"rows": None, "balanced": [f"s{i // 3}" for i in range(n)],
              "unbalanced": [f"s{min(i // 4, 5)}" for i in range(n)]}[shape]
    def side() -> tuple[np.ndarray, ...]:
        nums = rng.integers(0, 4, size=n).astype(float)
        if not ratio:
            return (rng.integers(0, 2, size=n).astype(bool).astype(float),)
        return nums, nums + rng.integers(0, 3, size=n) * (rng.random(n) < 0.7)
    a, b = side(), side()
    fast = paired_sums_bootstrap_ci(a, b, empty=float("nan"), n_resamples=300, seed=seed,
                                    groups=groups)
    assert fast == generic(a, b, float("nan"), groups, seed)


def test_fractions_are_left_to_the_generic_bootstrap() -> None:
    a, b = (np.array([0.5, 1 / 3, 1.0]),), (np.array([1.0, 0.0, 1.0]),)
    assert paired_sums_bootstrap_ci(a, b, n_resamples=50) is None
