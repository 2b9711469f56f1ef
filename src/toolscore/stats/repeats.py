"""What running every sample K times (``--epochs K``) tells about a model and about the benchmark.

A single run hides two things: how *reliable* the model is (does it solve a task every time, or
only sometimes?) and how *noisy* the score is (would the same model score two points lower
tomorrow?). With K epochs per sample both can be measured:

- **pass@k** (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): the chance
  that at least one of k attempts succeeds. For a sample with ``c`` successes in ``n`` attempts
  the unbiased estimator is ``1 - C(n-c, k) / C(n, k)``, averaged over samples.
- **pass^k** (Yao et al. 2024, tau-bench): the chance that *all* k attempts succeed, estimated per
  sample by ``C(c, k) / C(n, k)`` and averaged over samples. It falls with k for an unreliable
  model even when pass@1 is high, which is what a user who asks the same thing twice meets.
- **flip rate**: the fraction of samples whose outcome differs across epochs.
- **noise floor**: the smallest difference in success rate between two single runs (one epoch
  each) of the *same* model that is real at 95%; any smaller difference between two systems is
  indistinguishable from rerunning one of them. See :func:`noise_floor`.

Inputs are outcomes grouped by sample: ``{sample_id: [success of epoch 0, epoch 1, ...]}``.
Samples with fewer attempts than a statistic needs are left out of it (and counted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Outcomes = Mapping[str, Sequence[bool]]
Z95 = 1.959963984540054  # two-sided 95% normal quantile


def pass_at_k_sample(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one sample: ``1 - C(n-c, k) / C(n, k)`` (needs ``n >= k``)."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k_sample(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one sample: ``C(c, k) / C(n, k)`` (needs ``n >= k``)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def _counts(outcomes: Outcomes) -> list[tuple[int, int]]:
    return [(len(v), int(sum(bool(x) for x in v))) for v in outcomes.values()]


def pass_at_k(outcomes: Outcomes, k: int) -> float:
    """Mean pass@k over the samples with at least ``k`` attempts (``nan`` if there are none)."""
    return _mean_over(_counts(outcomes), k, pass_at_k_sample)


def pass_hat_k(outcomes: Outcomes, k: int) -> float:
    """Mean pass^k over the samples with at least ``k`` attempts (``nan`` if there are none)."""
    return _mean_over(_counts(outcomes), k, pass_hat_k_sample)


def _mean_over(counts: list[tuple[int, int]], k: int, per_sample: Any) -> float:
    # counted once per summary, not once per k: 357 epochs made the report quadratic; and
    # each distinct (n, c) is worked out once per k (samples often share one: all passed)
    seen: dict[tuple[int, int], float] = {}
    vals = []
    for n, c in counts:
        if n >= k:
            v = seen.get((n, c))
            if v is None:
                v = seen[(n, c)] = per_sample(n, c, k)
            vals.append(v)
    return float(np.mean(vals)) if vals else float("nan")


def flip_rate(outcomes: Outcomes) -> float:
    """Fraction of samples (with >= 2 attempts) that both passed and failed across epochs."""
    counts = [(n, c) for n, c in _counts(outcomes) if n >= 2]
    if not counts:
        return float("nan")
    return sum(1 for n, c in counts if 0 < c < n) / len(counts)


def per_sample_variance(n: int, c: int) -> float:
    """Unbiased estimate of a sample's Bernoulli variance p(1-p): ``c (n - c) / (n (n - 1))``.

    The plug-in ``p̂ (1 - p̂)`` underestimates it by a factor ``(n - 1) / n``, which matters at the
    small K used in practice (half the variance at K = 2).
    """
    if n < 2:
        raise ValueError(f"need at least 2 attempts, got {n}")
    return c * (n - c) / (n * (n - 1))


def noise_floor(outcomes: Outcomes, *, runs_per_side: int = 1) -> float:
    """Smallest difference in success rate between two runs of the same model that is real at 95%.

    Model each sample i as a coin with its own success probability p_i (the samples are fixed,
    only the model's sampling varies). The success rate of one single-epoch run is
    ``S = (1/n) Σ X_i``, so two independent runs differ by ``D = S_1 - S_2`` with mean 0 and
    ``Var(D) = (2/n²) Σ p_i (1 - p_i) = 2 · v̄ / n``, where ``v̄`` is the mean per-sample
    Bernoulli variance, estimated from the K epochs by :func:`per_sample_variance`. Hence::

        noise_floor = 1.96 · sqrt(2 · v̄ / n)

    ``runs_per_side = m`` gives the floor for two runs that each average m epochs (variance / m).
    Only samples with >= 2 attempts enter; ``nan`` if there are none. A model that is perfectly
    consistent has a floor of 0: every difference from it is real (given the same samples).
    """
    if runs_per_side < 1:
        raise ValueError(f"runs_per_side must be >= 1, got {runs_per_side}")
    v = [per_sample_variance(n, c) for n, c in _counts(outcomes) if n >= 2]
    if not v:
        return float("nan")
    return float(Z95 * math.sqrt(2.0 * float(np.mean(v)) / (len(v) * runs_per_side)))


def empirical_noise_floor(outcomes: Outcomes, *, n_resamples: int = 2000, confidence: float = 0.95,
                          seed: int = 0) -> float:
    """The noise floor without the normal approximation: simulate pairs of single runs.

    Each resample builds two "runs" by drawing, for every sample, two *different* epochs at
    random, and records the difference of their success rates; the floor is the ``confidence``
    quantile of the absolute differences. It agrees with :func:`noise_floor` for large n and is
    the safer number for small n or success rates near 0 or 1. Seeded, so it is reproducible.
    """
    rows = [np.asarray(v, dtype=float) for v in outcomes.values() if len(v) >= 2]
    if not rows:
        return float("nan")
    width = max(r.size for r in rows)
    table = np.zeros((len(rows), width))
    sizes = np.array([r.size for r in rows])
    for i, r in enumerate(rows):
        table[i, :r.size] = r
    rng = np.random.default_rng(seed)
    first = np.floor(rng.random((n_resamples, len(rows))) * sizes).astype(int)
    second = np.floor(rng.random((n_resamples, len(rows))) * (sizes - 1)).astype(int)
    second += second >= first  # a different epoch, uniformly among the others
    idx = np.arange(len(rows))
    diffs = (table[idx, first] - table[idx, second]).mean(axis=1)
    return float(np.quantile(np.abs(diffs), confidence))


def repeat_summary(outcomes: Outcomes, *, seed: int = 0) -> dict[str, Any]:
    """All repeat statistics of one group of samples, as a JSON-able dict.

    ``k`` runs over 1..K where K is the largest number of attempts any sample has; a pass@k or
    pass^k value uses only the samples with at least k attempts (``samples_at_k`` says how many).
    """
    counts = _counts(outcomes)
    epochs = max((n for n, _ in counts), default=0)
    ks = range(1, epochs + 1)
    return {
        "samples": len(counts),
        "epochs": epochs,
        "attempts": sum(n for n, _ in counts),
        "pass_at_k": {str(k): _mean_over(counts, k, pass_at_k_sample) for k in ks},
        "pass_hat_k": {str(k): _mean_over(counts, k, pass_hat_k_sample) for k in ks},
        "samples_at_k": {str(k): sum(1 for n, _ in counts if n >= k) for k in ks},
        "flip_rate": flip_rate(outcomes),
        "noise_floor": noise_floor(outcomes),
        "noise_floor_k_epochs": noise_floor(outcomes, runs_per_side=epochs) if epochs else None,
        "noise_floor_empirical": empirical_noise_floor(outcomes, seed=seed),
    }
