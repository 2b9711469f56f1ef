"""Bootstrap intervals of a mean or of a ratio of sums, computed from group totals.

The report's headline metrics are means (success rate) or ratios of sums (ToolTalk's
precision = matched calls / calls made, summed over conversations). The generic
:func:`~toolscore.stats.agreement.bootstrap_ci` gathers every resampled row and sums it again:
2,000 resamples of 10,000 (sample, epoch) records is 20 million gathered values per metric,
most of the HTML report's statistics time. Summing each group (a sample's epochs) once and
adding up the group totals a resample draws gives the same sums with a 28-column gather
instead of a 10,000-column one.

The same *numbers*, not nearly the same: this path is taken only when every value is an
integer (counts, and booleans as 1/0) and no sum can reach 2**53, where float addition is
exact in any order, so each resample's sum, its ratio and its mean are bit for bit what the
row-by-row computation gives, and the resamples are drawn from the same seeded stream in the
same order (:func:`~toolscore.stats.agreement.cluster_members` and the row draws of
``bootstrap_ci``). Fractional values (a soft success of 1/3) go through ``bootstrap_ci``
itself, since summing them in another order could move the last bit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from toolscore.stats.agreement import bootstrap_ci, cluster_members, percentile_interval

EXACT = 2.0**53  # below this every integer is a float, and so is every sum of them
BATCH = 64  # resamples drawn at once when every row is its own group (64 x 10,000 values)


def mean_of(nums: np.ndarray) -> float:
    """The mean, ``nan`` for no values (the headline "mean of" metric)."""
    return float(np.mean(nums)) if len(nums) else float("nan")


def ratio_of(nums: np.ndarray, dens: np.ndarray, empty: float) -> float:
    """``sum(nums) / sum(dens)``, ``empty`` when the denominator sums to zero."""
    total = float(dens.sum())
    return float(nums.sum()) / total if total else empty


def _integers(values: np.ndarray, bound: float) -> np.ndarray | None:
    """``values`` as int64 when they are all integers and ``bound`` keeps sums exact."""
    if not values.size or not np.all(np.isfinite(values)) or bound >= EXACT:
        return None
    as_int = values.astype(np.int64)
    return as_int if np.array_equal(as_int, values) else None


def _draws(n_rows: int, n_groups: int, clustered: bool, n_resamples: int,
           rng: np.random.Generator) -> Iterator[np.ndarray]:
    """The resamples' group draws, in blocks of rows, from the stream ``bootstrap_ci`` uses:
    one (resamples, groups) draw for clusters, one row of ``n_rows`` per resample otherwise
    (numpy fills a block of rows from the same stream as the rows one at a time)."""
    if clustered:
        yield rng.integers(0, n_groups, size=(n_resamples, n_groups))
        return
    for start in range(0, n_resamples, BATCH):
        yield rng.integers(0, n_rows, size=(min(BATCH, n_resamples - start), n_rows))


def sums_bootstrap_ci(nums: ArrayLike, dens: ArrayLike | None = None, *,
                      empty: float = float("nan"), n_resamples: int = 2000,
                      confidence: float = 0.95, seed: int = 0,
                      groups: ArrayLike | None = None) -> tuple[float, float]:
    """Percentile interval of ``mean(nums)`` (``dens`` None) or of ``sum(nums) / sum(dens)``
    (``empty`` when the denominator sums to zero): exactly
    ``bootstrap_ci(nums, mean_of, ...)`` / ``bootstrap_ci((nums, dens), ratio_of, ...)`` with
    the same seed and ``groups``, computed from group totals when that is exact (see the
    module docstring)."""
    x = np.asarray(nums, dtype=float)
    y = None if dens is None else np.asarray(dens, dtype=float)
    if y is not None and len(y) != len(x):
        raise ValueError("paired arrays differ in length")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    labels = _labels(groups) if groups is not None else None
    if labels is not None and len(labels) != len(x):
        raise ValueError("groups must have one label per row")
    members = _members(labels) if labels is not None else None
    exact = _exact_sums(x, y, members)
    if exact is None or len(x) == 0:
        if y is None:
            return bootstrap_ci(x, mean_of, n_resamples=n_resamples, confidence=confidence,
                                seed=seed, groups=groups)
        return bootstrap_ci((x, y), lambda a, b: ratio_of(a, b, empty),
                            n_resamples=n_resamples, confidence=confidence, seed=seed,
                            groups=groups)
    totals, sizes = exact
    rng = np.random.default_rng(seed)
    parts = []
    for draw in _draws(len(x), len(sizes), members is not None, n_resamples, rng):
        top = totals[0][draw].sum(axis=1).astype(float)
        if y is None:
            parts.append(top / sizes[draw].sum(axis=1).astype(float))
            continue
        bottom = totals[1][draw].sum(axis=1).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0),
                                  empty))
    return percentile_interval(np.concatenate(parts), confidence)


def _labels(groups: ArrayLike) -> tuple[object, ...]:
    """The labels as a tuple of Python values (a list of text ids as it is: no numpy copy)."""
    if isinstance(groups, (list, tuple)) and all(type(g) is str for g in groups):
        return tuple(groups)
    return tuple(np.asarray(groups).ravel().tolist())


_LAST: list[tuple[tuple[object, ...], list[list[int]] | None]] = []


def _members(labels: tuple[object, ...]) -> list[list[int]] | None:
    """:func:`cluster_members` of ``labels``, remembered for the next call: a report asks for
    every headline metric of a split with the same sample ids."""
    last = _LAST[0] if _LAST else None  # read once: another thread may replace it
    if last is not None and last[0] == labels:
        return last[1]
    members = cluster_members(list(labels))
    _LAST[:] = [(labels, members)]
    return members


def _exact_sums(x: np.ndarray, y: np.ndarray | None, members: list[list[int]] | None
                ) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Per group: the int64 totals of each column and the row count; None when summing in
    another order might not give the same floats (fractions, or sums near 2**53)."""
    n_groups = len(members) if members is not None else len(x)
    columns = []
    for values in (x,) if y is None else (x, y):
        # a resample draws n_groups groups: its sum is at most n_groups x the largest
        # group's absolute total, itself at most the column's absolute total
        as_int = _integers(values, float(np.abs(values).sum()) * n_groups)
        if as_int is None:
            return None
        columns.append(as_int)
    if members is None:
        return columns, np.ones(len(x), dtype=np.int64)
    label = np.empty(len(x), dtype=np.int64)
    for g, rows in enumerate(members):
        label[rows] = g
    totals = []
    for c in columns:
        total = np.zeros(n_groups, dtype=np.int64)
        np.add.at(total, label, c)
        totals.append(total)
    return totals, np.bincount(label, minlength=n_groups).astype(np.int64)


def paired_sums_bootstrap_ci(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...], *,
                             empty: float = float("nan"), n_resamples: int = 2000,
                             confidence: float = 0.95, seed: int = 0,
                             groups: ArrayLike | None = None) -> tuple[float, float] | None:
    """Percentile interval of ``stat(b) - stat(a)`` over paired resamples, ``stat`` being
    the mean of ``(nums,)`` or the ratio of sums of ``(nums, dens)``: exactly
    ``bootstrap_ci((*a, *b), lambda *c: stat(*c[len(a):]) - stat(*c[:len(a)]), ...)`` with
    the same seed and ``groups``, from group totals. None when that would not be exact (see
    the module docstring): the caller then runs ``bootstrap_ci`` itself."""
    n = len(a[0])
    if n == 0 or not 0 < confidence < 1 or n_resamples < 1:
        return None
    labels = _labels(groups) if groups is not None else None
    if labels is not None and len(labels) != n:
        return None
    members = _members(labels) if labels is not None else None
    first, second = (_exact_sums(np.asarray(side[0], dtype=float),
                                 None if len(side) == 1 else np.asarray(side[1], dtype=float),
                                 members) for side in (a, b))
    if first is None or second is None:
        return None
    sizes = first[1].astype(float)
    columns = [[t.astype(float) for t in side[0]] for side in (first, second)]
    rng = np.random.default_rng(seed)
    parts = []
    for draw in _draws(n, len(sizes), members is not None, n_resamples, rng):
        # how often each resample draws each group, then every sum as one product: integers
        # below 2**53 add up exactly in any order, so these are the gathered rows' sums
        k = len(sizes)
        counts = np.bincount((draw + (np.arange(len(draw)) * k)[:, None]).ravel(),
                             minlength=len(draw) * k).reshape(len(draw), k).astype(float)
        values = []
        for totals in columns:
            top = counts @ totals[0]
            if len(totals) == 1:
                values.append(top / (counts @ sizes))
                continue
            bottom = counts @ totals[1]
            with np.errstate(divide="ignore", invalid="ignore"):
                values.append(np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0),
                                       empty))
        with np.errstate(invalid="ignore"):
            parts.append(values[1] - values[0])
    return percentile_interval(np.concatenate(parts), confidence)
