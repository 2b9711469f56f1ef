"""Agreement between two ways of scoring the same things, and bootstrap intervals around it.

An automatic evaluation is only worth running if it ranks and spaces systems the way people do,
so every method that claims to stand in for human judgement reports how closely it agrees with
them. These are small pure functions over numpy arrays, so each can be checked against hand
computations and against scipy where scipy has an equivalent. Degenerate input (a constant
column, fewer than two targets) gives ``nan`` rather than an exception: a run where every
system scored the same is a finding to report, not a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"x and y differ in length ({a.size} vs {b.size})")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite numbers")
    return a, b


def pearson_r(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson's correlation coefficient; ``nan`` when there are < 2 pairs or a constant side."""
    a, b = _pair(x, y)
    if a.size < 2:
        return float("nan")
    da, db = a - a.mean(), b - b.mean()
    denom = np.sqrt(np.dot(da, da) * np.dot(db, db))
    if denom == 0:
        return float("nan")
    return float(np.clip(np.dot(da, db) / denom, -1.0, 1.0))


def pearson_repeated(per_trial: ArrayLike, reference: ArrayLike) -> float:
    """Pearson's r of every (trial, target) score against the reference's score of that
    target, the reference repeated for each trial.

    ``per_trial`` is trials x targets (``nan`` where a trial lacks a target), ``reference`` one
    score per target. This is how AutoDE's reference code computes its sample-level Pearson
    for runs with several trials; it differs from :func:`pearson_r` over trial means (it keeps
    the trial-to-trial noise in the method's scores, so it is lower), and equals it for one
    trial.
    """
    x = np.asarray(per_trial, dtype=float)
    ref = np.asarray(reference, dtype=float).ravel()
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != ref.size:
        raise ValueError(f"per_trial must be trials x {ref.size} targets, got shape {x.shape}")
    tiled = np.broadcast_to(ref, x.shape)
    keep = ~np.isnan(x)
    return pearson_r(x[keep], tiled[keep])


def _two_way_mean_squares(ratings: ArrayLike) -> tuple[float, float, int, int]:
    """(mean square between targets, residual mean square, n targets, k raters)."""
    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"ratings must be a 2-d array (targets x raters), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("ratings must be finite numbers")
    n, k = x.shape
    if n < 2 or k < 2:
        return float("nan"), float("nan"), n, k
    grand = x.mean()
    ss_rows = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_error = float(((x - grand) ** 2).sum()) - ss_rows - ss_cols
    return ss_rows / (n - 1), ss_error / ((n - 1) * (k - 1)), n, k


def icc3(ratings: ArrayLike) -> float:
    """ICC(3,1): two-way mixed effects, consistency, single rater (Shrout & Fleiss 1979).

    ``ratings`` is targets x raters (e.g. assistants x evaluation methods). Consistency means a
    rater that is uniformly higher or lower is not penalised, only disagreement in the pattern:
    ``(MS_rows - MS_error) / (MS_rows + (k - 1) MS_error)``. This is the form that reproduces the
    AutoDE paper's Table 2 (pingouin calls it ``ICC3``).
    """
    ms_rows, ms_error, _, k = _two_way_mean_squares(ratings)
    denom = ms_rows + (k - 1) * ms_error
    if not np.isfinite(denom) or denom == 0:
        return float("nan")
    return float((ms_rows - ms_error) / denom)


def icc3k(ratings: ArrayLike) -> float:
    """ICC(3,k): as :func:`icc3` but for the mean of the k raters, ``1 - MS_error / MS_rows``."""
    ms_rows, ms_error, _, _ = _two_way_mean_squares(ratings)
    if not np.isfinite(ms_rows) or ms_rows == 0:
        return float("nan")
    return float((ms_rows - ms_error) / ms_rows)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable],
                labels: Sequence[Hashable] | None = None) -> float:
    """Cohen's kappa for two raters labelling the same items: agreement beyond chance.

    ``labels`` fixes the category set (labels nobody used still count, with zero mass). When
    chance agreement is already 1 (both raters always give the same single label) kappa is
    undefined and ``nan`` is returned.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b differ in length ({len(a)} vs {len(b)})")
    if not a:
        return float("nan")
    cats = list(dict.fromkeys(labels if labels is not None else [*a, *b]))
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    for u, v in zip(a, b, strict=True):
        if u not in index or v not in index:
            raise ValueError(f"label {u if u not in index else v!r} is not in labels")
        table[index[u], index[v]] += 1
    return kappa_of_table(table)


def kappa_of_table(table: np.ndarray) -> float:
    """Cohen's kappa from a float table of counts (rows: the first rater's labels, columns:
    the second's, in one order); ``nan`` when chance agreement is 1. Divides ``table`` in
    place. The one computation of :func:`cohen_kappa`, so any caller that counts the table
    itself gets the same float."""
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected == 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def cluster_members(groups: ArrayLike | Sequence[Hashable]) -> list[list[int]] | None:
    """The rows of each distinct label of ``groups``, labels in order of first appearance (the
    order the cluster bootstrap draws them in); None when every row is its own group."""
    labels = np.asarray(groups).ravel().tolist()
    order: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        order.setdefault(label, []).append(i)
    if len(order) == len(labels):
        return None
    return list(order.values())


def group_resamples(groups: ArrayLike, n_resamples: int,
                    rng: np.random.Generator) -> Iterator[np.ndarray] | None:
    """Row indices of ``n_resamples`` cluster resamples, one array at a time: the distinct
    labels of ``groups`` (in order of first appearance) are drawn with replacement and each
    brings all its rows. None when every row is its own group (then plain row resampling is
    the same thing). Yielded lazily: 2,000 resamples of 10,000 rows would be 160 MB at once."""
    members = cluster_members(groups)
    if members is None:
        return None
    draws = rng.integers(0, len(members), size=(n_resamples, len(members)))
    if len({len(m) for m in members}) == 1:  # balanced (every sample has k epochs): vectorised
        table = np.array(members)
        return (table[row].reshape(-1) for row in draws)
    return (np.concatenate([members[g] for g in row]) for row in draws)


def _row_resamples(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    # row by row draws the same stream as one (n_resamples, n) draw, without holding it
    for _ in range(n_resamples):
        yield rng.integers(0, n, size=n)


def bootstrap_ci(data: ArrayLike | Sequence[ArrayLike], statistic: Callable[..., float], *,
                 n_resamples: int = 2000, confidence: float = 0.95,
                 seed: int = 0, groups: ArrayLike | None = None) -> tuple[float, float]:
    """Percentile bootstrap confidence interval for ``statistic``, reproducible from ``seed``.

    ``data`` is one array, or a tuple of equally long arrays that are resampled together (row
    indices are shared, so paired data stay paired): ``bootstrap_ci((x, y), pearson_r)``.
    ``groups`` (one label per row, e.g. the sample id of each (sample, epoch) record) makes it
    a cluster bootstrap: labels are resampled and keep all their rows together, because repeated
    runs of one sample are not independent evidence. With one row per label the result is
    exactly the plain bootstrap's. Resamples where the statistic is ``nan`` (e.g. a constant
    resample) are dropped; if all of them are, the interval is ``(nan, nan)``.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    paired = isinstance(data, tuple)
    arrays = [np.asarray(d) for d in (data if paired else (data,))]  # type: ignore[union-attr]
    n = len(arrays[0])
    if any(len(arr) != n for arr in arrays):
        raise ValueError("paired arrays differ in length")
    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    if groups is not None and len(np.asarray(groups).ravel()) != n:
        raise ValueError("groups must have one label per row")
    clustered = group_resamples(groups, n_resamples, rng) if groups is not None else None
    idx = clustered if clustered is not None else _row_resamples(n, n_resamples, rng)
    values = np.array([statistic(*(arr[row] for arr in arrays)) for row in idx], dtype=float)
    return percentile_interval(values, confidence)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap statistics (non-finite ones dropped; nan, nan if
    none is left)."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high)
