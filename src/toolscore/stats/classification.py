"""How well a binary judge agrees with human labels: accuracy and friends, with intervals.

A judge that says "satisfied" to everything scores 60% on ACS, so accuracy alone hides the
failure the ACS paper reports (judges skewed towards "satisfied"). Every metric here therefore
comes next to the accuracy on each class, the predicted-positive rate and Cohen's kappa, all with
percentile bootstrap intervals from a fixed seed (``agreement.bootstrap_ci``).

Judges may abstain (``None``). Conventions, fixed once here:

- ``coverage`` is the share of rows the judge decided;
- ``accuracy_all`` counts an abstention as wrong;
- every other metric is computed on the decided rows only.

Rows are often not independent (ACS rows of one request share one response), so the bootstrap
can resample whole *clusters* (e.g. requests) instead of rows: pass ``clusters``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from toolscore.stats.agreement import cohen_kappa, kappa_of_table, percentile_interval

#: Metric names in display order.
METRICS = ("coverage", "accuracy", "accuracy_all", "balanced_accuracy", "accuracy_pos",
           "accuracy_neg", "predicted_pos_rate", "kappa")

_NAN = float("nan")


def _arrays(gold: Sequence[bool], pred: Sequence[bool | None]) -> tuple[np.ndarray, np.ndarray]:
    """gold as 0/1, pred as 1/0/-1 (-1 = abstained)."""
    if len(gold) != len(pred):
        raise ValueError(f"gold and pred differ in length ({len(gold)} vs {len(pred)})")
    g = np.asarray([bool(x) for x in gold], dtype=np.int8)
    p = np.asarray([-1 if x is None else int(bool(x)) for x in pred], dtype=np.int8)
    return g, p


def _ratio(num: int | float, den: int | float) -> float:
    return float(num) / float(den) if den else _NAN


def coverage(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Share of rows the judge decided (did not abstain on)."""
    _, p = _arrays(gold, pred)
    return _ratio(int((p >= 0).sum()), p.size)


def accuracy(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Share of decided rows labelled as the human did."""
    g, p = _arrays(gold, pred)
    d = p >= 0
    return _ratio(int((p[d] == g[d]).sum()), int(d.sum()))


def accuracy_all(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Share of all rows labelled as the human did; an abstention counts as wrong."""
    g, p = _arrays(gold, pred)
    return _ratio(int((p == g).sum()), p.size)


def per_class_accuracy(gold: Sequence[bool], pred: Sequence[bool | None]
                       ) -> dict[bool, float]:
    """Accuracy on the decided rows of each human label (recall of that label)."""
    g, p = _arrays(gold, pred)
    return {c: _ratio(int(((g == c) & (p == c)).sum()), int(((g == c) & (p >= 0)).sum()))
            for c in (True, False)}


def balanced_accuracy(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Mean of the per-class accuracies (over the classes present among decided rows)."""
    parts = [v for v in per_class_accuracy(gold, pred).values() if v == v]
    return sum(parts) / len(parts) if parts else _NAN


def predicted_positive_rate(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Share of decided rows the judge labelled positive (e.g. "satisfied")."""
    _, p = _arrays(gold, pred)
    return _ratio(int((p == 1).sum()), int((p >= 0).sum()))


def kappa(gold: Sequence[bool], pred: Sequence[bool | None]) -> float:
    """Cohen's kappa between judge and humans on the decided rows."""
    pairs = [(bool(a), bool(b)) for a, b in zip(gold, pred, strict=True) if b is not None]
    if not pairs:
        return _NAN
    return cohen_kappa([a for a, _ in pairs], [b for _, b in pairs], labels=[True, False])


def _metrics_arrays(g: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Every metric from the 0/1 and 1/0/-1 arrays (one pass, used inside the bootstrap)."""
    n = p.size
    d = p >= 0
    nd = int(d.sum())
    right = int((p == g).sum())
    pos, neg = (g == 1) & d, (g == 0) & d
    acc_pos = _ratio(int((p[pos] == 1).sum()), int(pos.sum()))
    acc_neg = _ratio(int((p[neg] == 0).sum()), int(neg.sum()))
    parts = [v for v in (acc_pos, acc_neg) if v == v]
    return {
        "coverage": _ratio(nd, n),
        "accuracy": _ratio(right, nd),
        "accuracy_all": _ratio(right, n),
        "balanced_accuracy": sum(parts) / len(parts) if parts else _NAN,
        "accuracy_pos": acc_pos,
        "accuracy_neg": acc_neg,
        "predicted_pos_rate": _ratio(int((p == 1).sum()), nd),
        "kappa": _kappa_arrays(g[d], p[d]),
    }


def _kappa_arrays(g: np.ndarray, p: np.ndarray) -> float:
    if g.size == 0:
        return _NAN
    return cohen_kappa(g.tolist(), p.tolist(), labels=[1, 0])


@dataclass(frozen=True)
class Estimate:
    """A point value and its bootstrap interval (``nan`` where undefined)."""

    value: float
    low: float
    high: float


@dataclass
class GroupReport:
    """Agreement of a judge with humans on one set of rows."""

    n: int
    decided: int
    positives: int
    metrics: dict[str, Estimate] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "decided": self.decided, "positives": self.positives,
                "metrics": {k: asdict(v) for k, v in self.metrics.items()}}


@dataclass
class ClassificationReport:
    """Overall and per-group reports; ``groups`` is empty unless groups were given."""

    overall: GroupReport
    groups: dict[str, GroupReport]
    confidence: float
    n_resamples: int
    seed: int
    clustered: bool

    def to_dict(self) -> dict[str, Any]:
        return {"overall": self.overall.to_dict(),
                "groups": {k: v.to_dict() for k, v in self.groups.items()},
                "bootstrap": {"confidence": self.confidence, "n_resamples": self.n_resamples,
                              "seed": self.seed,
                              "resampled": "clusters" if self.clustered else "rows"}}


def _units(size: int, clusters: list[Hashable] | None) -> list[np.ndarray]:
    """The rows of each resampling unit: one row each, or the rows of each cluster (clusters
    in order of first appearance)."""
    if clusters is None:
        return [np.array([i]) for i in range(size)]
    index: dict[Hashable, list[int]] = {}
    for i, c in enumerate(clusters):
        index.setdefault(c, []).append(i)
    return [np.array(v) for v in index.values()]


def resampled_metrics_loop(g: np.ndarray, p: np.ndarray, units: list[np.ndarray],
                           n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """Every metric of each bootstrap resample of ``units``, one resample at a time: the
    definition :func:`resampled_metrics` computes in blocks (kept to check it against).

    The resamples are ``bootstrap_ci``'s draws over the unit ids (one seeded stream, a row of
    unit ids per resample); each resample gathers its units' rows and runs
    :func:`_metrics_arrays` on them."""
    rng = np.random.default_rng(seed)
    rows = [_metrics_arrays(g[r], p[r]) for r in
            (np.concatenate([units[u] for u in rng.integers(0, len(units), size=len(units))])
             for _ in range(n_resamples if units else 0))]
    return {name: np.array([m[name] for m in rows], dtype=float) for name in METRICS}


# The cells a row falls in: abstained, then (human, judge) = (1, 1), (1, 0), (0, 1), (0, 0).
_CELLS = 5
BLOCK = 256  # resamples drawn and counted at once (256 x units ids) ...
GATHERED = 1 << 22  # ... fewer when their gathered counts would pass 4M values (32 MB)


def _cells(g: np.ndarray, p: np.ndarray) -> np.ndarray:
    gi, pi = g.astype(np.int64), p.astype(np.int64)
    return np.where(pi < 0, 0, 1 + 2 * (1 - gi) + (1 - pi))


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` as floats, ``nan`` where ``den`` is 0 (:func:`_ratio`, element-wise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num.astype(float) / np.where(den != 0, den, 1).astype(float),
                        _NAN)


def _kappas(confusion: np.ndarray) -> np.ndarray:
    """Kappa of each row of (n x 4) counts (1, 1), (1, 0), (0, 1), (0, 0): once per distinct
    table, by the same float operations as :func:`cohen_kappa` (its chance term is a dot
    product, which BLAS may fuse; repeating it keeps every last digit)."""
    tables, back = np.unique(confusion, axis=0, return_inverse=True)
    values = np.array([kappa_of_table(t.reshape(2, 2).astype(float)) if t.sum() else _NAN
                       for t in tables], dtype=float)
    return values[back.reshape(-1)]


def _metrics_counts(c: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`_metrics_arrays` of many resamples from their cell counts (n x 5): the same
    integers divided the same way, so the same floats."""
    abstained, tp, fn, fp, tn = c.T
    n = c.sum(axis=1)
    nd = n - abstained
    right = tp + tn
    acc_pos, acc_neg = _divide(tp, tp + fn), _divide(tn, fp + tn)
    # sum(parts) / len(parts) over the defined ones: 0 + x + y is x + y, and x / 1 is x
    balanced = np.where(np.isnan(acc_pos), acc_neg,
                        np.where(np.isnan(acc_neg), acc_pos, (acc_pos + acc_neg) / 2))
    return {"coverage": _divide(nd, n), "accuracy": _divide(right, nd),
            "accuracy_all": _divide(right, n), "balanced_accuracy": balanced,
            "accuracy_pos": acc_pos, "accuracy_neg": acc_neg,
            "predicted_pos_rate": _divide(tp + fp, nd), "kappa": _kappas(c[:, 1:])}


def resampled_metrics(g: np.ndarray, p: np.ndarray, units: list[np.ndarray],
                      n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """:func:`resampled_metrics_loop`, number for number, without a Python loop per resample.

    Each unit's rows are counted once per cell (abstained and the four (human, judge) pairs);
    a block of resamples is drawn from the same stream in one call (numpy fills a block of
    rows with the draws it gives the rows one at a time) and each resample's cell counts are
    the sums of its units' counts. Every metric is a ratio of those integers, so the floats
    are the loop's to the last digit."""
    if not units or n_resamples < 1:
        return {name: np.array([], dtype=float) for name in METRICS}
    unit = np.concatenate([np.full(len(rows), u) for u, rows in enumerate(units)])
    counts = np.zeros((len(units), _CELLS), dtype=np.int64)
    np.add.at(counts, (unit, _cells(g, p)[np.concatenate(units)]), 1)
    rng = np.random.default_rng(seed)
    block = max(1, min(BLOCK, GATHERED // (len(units) * _CELLS)))
    blocks = [counts[rng.integers(0, len(units), size=(min(block, n_resamples - start),
                                                       len(units)))].sum(axis=1)
              for start in range(0, n_resamples, block)]
    return _metrics_counts(np.concatenate(blocks))


def _group_report(g: np.ndarray, p: np.ndarray, clusters: list[Hashable] | None,
                  n_resamples: int, confidence: float, seed: int) -> GroupReport:
    point = _metrics_arrays(g, p)
    if n_resamples > 0 and not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    # every metric's interval is bootstrap_ci's over the same resamples (same seed)
    boot = (resampled_metrics(g, p, _units(g.size, clusters), n_resamples, seed)
            if n_resamples > 0 else None)
    out: dict[str, Estimate] = {}
    for name in METRICS:
        low, high = (percentile_interval(boot[name], confidence) if boot is not None
                     else (_NAN, _NAN))
        out[name] = Estimate(point[name], low, high)
    return GroupReport(n=int(g.size), decided=int((p >= 0).sum()), positives=int(g.sum()),
                       metrics=out)


def classification_report(
    gold: Sequence[bool],
    pred: Sequence[bool | None],
    *,
    groups: Sequence[str] | None = None,
    clusters: Sequence[Hashable] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ClassificationReport:
    """All metrics with bootstrap intervals, overall and per group (groups sorted by name).

    ``clusters`` (e.g. the request of each row) makes the bootstrap resample whole clusters;
    ``n_resamples=0`` skips the intervals (they are ``nan``). The same ``seed`` gives the same
    intervals every time.
    """
    g, p = _arrays(gold, pred)
    for name, seq in (("groups", groups), ("clusters", clusters)):
        if seq is not None and len(seq) != g.size:
            raise ValueError(f"{name} has {len(seq)} entries for {g.size} rows")
    cl = list(clusters) if clusters is not None else None
    overall = _group_report(g, p, cl, n_resamples, confidence, seed)
    per: dict[str, GroupReport] = {}
    if groups is not None:
        for key in sorted(set(groups)):
            idx = np.array([i for i, k in enumerate(groups) if k == key])
            sub_cl = [cl[i] for i in idx] if cl is not None else None
            per[key] = _group_report(g[idx], p[idx], sub_cl, n_resamples, confidence, seed)
    return ClassificationReport(overall, per, confidence, n_resamples, seed,
                                clustered=clusters is not None)
