"""The bootstrap of the classification metrics, computed in blocks, against the per-resample
definition: the same numbers to the last digit for every seed, size, clustering and mix of
abstentions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolscore.stats.agreement import bootstrap_ci
from toolscore.stats.classification import (
    METRICS,
    _arrays,
    _metrics_arrays,
    _units,
    classification_report,
    resampled_metrics,
    resampled_metrics_loop,
)


def _data(seed: int, n: int, n_clusters: int | None, abstain: float, agree: float
          ) -> tuple[list[bool], list[bool | None], list[int] | None, list[str]]:
    rng = np.random.default_rng(1000 + seed)
    gold = [bool(x) for x in rng.random(n) < 0.6]
    pred: list[bool | None] = [None if rng.random() < abstain
                               else (g if rng.random() < agree else not g) for g in gold]
    clusters = ([int(c) for c in rng.integers(0, n_clusters, size=n)] if n_clusters
                else None)
    groups = [str(x) for x in rng.choice(["a", "b", "c"], size=n)]
    return gold, pred, clusters, groups


def _intervals_one_metric_at_a_time(g: np.ndarray, p: np.ndarray, clusters: list[int] | None,
                                    n_resamples: int, confidence: float, seed: int
                                    ) -> dict[str, tuple[float, float]]:
    """Each metric's interval from ``bootstrap_ci`` over the unit ids, one resample at a time."""
    units = _units(g.size, clusters)
    ids = np.arange(len(units))

    def stat(name: str):  # noqa: ANN202
        def f(picked: np.ndarray) -> float:
            rows = np.concatenate([units[u] for u in picked])
            return _metrics_arrays(g[rows], p[rows])[name]
        return f

    return {name: bootstrap_ci(ids, stat(name), n_resamples=n_resamples,
                               confidence=confidence, seed=seed) for name in METRICS}


CASES = [  # seed, rows, clusters (None: rows), abstention rate, agreement
    (0, 1, None, 0.0, 0.9),
    (1, 7, None, 0.3, 0.5),
    (2, 40, 9, 0.1, 0.8),
    (3, 120, 30, 0.0, 1.0),   # a perfect judge: kappa 1 or undefined
    (4, 200, None, 0.5, 0.6),
    (5, 333, 80, 0.05, 0.7),
    (6, 60, 3, 0.9, 0.5),     # mostly abstentions: many undefined resamples
]


@pytest.mark.parametrize(("seed", "n", "n_clusters", "abstain", "agree"), CASES)
def test_blocks_equal_the_loop_to_the_last_digit(seed: int, n: int, n_clusters: int | None,
                                                 abstain: float, agree: float) -> None:
    gold, pred, clusters, _ = _data(seed, n, n_clusters, abstain, agree)
    g, p = _arrays(gold, pred)
    units = _units(g.size, clusters)
    for resamples in (1, 255, 257, 600):
        fast = resampled_metrics(g, p, units, resamples, seed)
        slow = resampled_metrics_loop(g, p, units, resamples, seed)
        for name in METRICS:
            assert fast[name].shape == (resamples,)
            assert np.array_equal(fast[name], slow[name], equal_nan=True), name
            assert fast[name].tobytes() == slow[name].tobytes(), name


@pytest.mark.parametrize(("seed", "n", "n_clusters", "abstain", "agree"), CASES)
def test_report_intervals_are_bootstrap_ci_per_metric(seed: int, n: int,
                                                      n_clusters: int | None, abstain: float,
                                                      agree: float) -> None:
    gold, pred, clusters, groups = _data(seed, n, n_clusters, abstain, agree)
    rep = classification_report(gold, pred, groups=groups, clusters=clusters,
                                n_resamples=400, confidence=0.9, seed=seed)
    g, p = _arrays(gold, pred)
    expected = _intervals_one_metric_at_a_time(g, p, clusters, 400, 0.9, seed)
    got = {name: (e.low, e.high) for name, e in rep.overall.metrics.items()}
    assert json.dumps(got) == json.dumps(expected)  # nan-safe, every digit
    for key, group in rep.groups.items():
        idx = np.array([i for i, k in enumerate(groups) if k == key])
        sub = [clusters[i] for i in idx] if clusters is not None else None
        expected = _intervals_one_metric_at_a_time(g[idx], p[idx], sub, 400, 0.9, seed)
        got = {name: (e.low, e.high) for name, e in group.metrics.items()}
        assert json.dumps(got) == json.dumps(expected)


def test_smaller_blocks_for_many_units_draw_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolscore.stats.classification as classification

    gold, pred, clusters, _ = _data(9, 150, 40, 0.2, 0.7)
    g, p = _arrays(gold, pred)
    units = _units(g.size, clusters)
    whole = resampled_metrics(g, p, units, 300, 9)
    monkeypatch.setattr(classification, "GATHERED", 40 * 5 * 7)  # blocks of 7 resamples
    for name, values in resampled_metrics(g, p, units, 300, 9).items():
        assert values.tobytes() == whole[name].tobytes()


def test_no_rows_and_no_resamples() -> None:
    g, p = _arrays([], [])
    assert all(v.size == 0 for v in resampled_metrics(g, p, [], 100, 0).values())
    rep = classification_report([], [], n_resamples=50)
    assert all(np.isnan(e.low) and np.isnan(e.high) for e in rep.overall.metrics.values())
    with pytest.raises(ValueError, match="confidence"):
        classification_report([True], [True], n_resamples=10, confidence=1.0)
    classification_report([True], [True], n_resamples=0, confidence=1.0)  # no interval asked
