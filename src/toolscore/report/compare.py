"""Compare two runs sample by sample: is B better than A, by how much, and is it more than noise?

Two runs of one benchmark score the same (sample, epoch) pairs, so the comparison is *paired*.
Only pairs that finished (status ``ok``) in both runs are compared; an infrastructure error is
not the assistant's failure and must not count against either side.

The headline rows (``headline``) are the benchmark's own figures, computed by its definitions
(``Benchmark.interval_metrics``: a ratio of sums or a mean) so they are the numbers ``toolscore
report`` gives, with a paired bootstrap interval and test (see
:mod:`toolscore.report.compare_headline`). The per-sample rows (``per_sample``) compare the mean
of every numeric per-sample score, labelled as such: for a metric the benchmark micro-averages
they answer a different question (a sample with no actions counts as 100% action precision).
Each per-sample difference is the mean of per-sample differences, with a seeded paired bootstrap
interval and a paired test (exact McNemar for pass/fail scores, Wilcoxon signed-rank or the sign
test for numeric ones).

Numbers are only comparable when everything but the thing under test is the same, so the result
also carries warnings when the runs differ in dataset, embedder, judge, mode or any other
benchmark setting — a 3-point gain from switching the embedder is not a better assistant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolscore.models.prices import Prices
from toolscore.records import RunStore
from toolscore.report.compare_cost import compare_costs
from toolscore.report.compare_headline import compare_headline_metric
from toolscore.report.view import RunView, run_view
from toolscore.stats.paired import (
    mcnemar_exact,
    paired_bootstrap_diff,
    sign_test,
    wilcoxon_signed_rank,
)

PER_SAMPLE = "mean over (sample, epoch) pairs of the per-sample score"
CONTINUOUS_TESTS = {"wilcoxon": wilcoxon_signed_rank, "sign": sign_test}
# benchmark_config keys grouped under the name a warning gives them
_KEY_GROUPS = (
    ("dataset", ("data_dir", "data", "checksum", "sha256", "dataset")),
    ("embedder", ("embedder",)),
    ("judge", ("judge",)),
)
# benchmark_config keys that name the scoring or protocol mode
MODE_KEYS = ("mode", "strict", "protocol")
NOT_COMPARABLE = ("protocol differs: {a} vs {b}: a free-running agent keeps its own history "
                  "(no ground-truth re-injection per turn), so these figures are not "
                  "comparable")
Key = tuple[str, int]


def _load(path: str | Path) -> tuple[dict[str, Any], dict[Key, dict[str, Any]]]:
    store = RunStore(path)
    config = store.read_config()  # the benchmark's summary of each output: no transcripts
    return config, store.latest(run_view(config).cls.summary_output)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _metric_names(records: Sequence[dict[str, Any]], primary: str | None) -> list[str]:
    """Numeric scalar score names: the primary metric, pass/fail ones, rates, then counts."""
    names: dict[str, None] = {}
    for r in records:
        for key, value in (r.get("scores") or {}).items():
            if isinstance(value, (bool, int, float)):
                names[key] = None
    kinds: dict[str, set[type]] = {n: set() for n in names}
    for r in records:
        for key, value in (r.get("scores") or {}).items():
            if key in kinds:
                kinds[key].add(type(value))

    def rank(name: str) -> int:  # the primary metric, pass/fail, rates, then counts
        if name == primary:
            return 0
        return 1 if kinds[name] == {bool} else 3 if int in kinds[name] else 2

    return sorted(names, key=rank)


def _group(key: str) -> str:
    if key.lower() in MODE_KEYS:
        return "mode"
    for group, needles in _KEY_GROUPS:
        if any(n in key.lower() for n in needles):
            return group
    return "benchmark config"


def config_warnings(config_a: dict[str, Any], config_b: dict[str, Any]) -> list[str]:
    """One line per setting that differs between the runs (other than the model)."""
    out: list[str] = []
    if config_a.get("benchmark") != config_b.get("benchmark"):
        out.append(f"benchmark differs: {config_a.get('benchmark')!r} vs "
                   f"{config_b.get('benchmark')!r}")
    bench_a = config_a.get("benchmark_config") or {}
    bench_b = config_b.get("benchmark_config") or {}
    keys = list(dict.fromkeys([*bench_a, *bench_b]))
    if "embedder_id" in bench_a and "embedder_id" in bench_b and "embedder" in keys:
        keys.remove("embedder")  # the id says it more precisely
    for key in keys:
        if bench_a.get(key) != bench_b.get(key):
            out.append(f"{_group(key)} differs: {key} = {bench_a.get(key)!r} vs "
                       f"{bench_b.get(key)!r}")
    for key in sorted(set(config_a) | set(config_b)):  # run-level judge or dataset identities
        if _group(key) in ("dataset", "judge") and config_a.get(key) != config_b.get(key):
            out.append(f"{_group(key)} differs: {key} = {config_a.get(key)!r} vs "
                       f"{config_b.get(key)!r}")
    ver_a = (config_a.get("versions") or {}).get("toolscore")
    ver_b = (config_b.get("versions") or {}).get("toolscore")
    if ver_a != ver_b:
        out.append(f"scored by different toolscore versions: {ver_a} vs {ver_b} "
                   "(rescore both with `toolscore score` to compare like with like)")
    return out


def _flips(shared: list[Key], recs_a: dict[Key, dict[str, Any]],
           recs_b: dict[Key, dict[str, Any]], metric: str) -> dict[str, Any]:
    lost: list[dict[str, Any]] = []
    gained: list[dict[str, Any]] = []
    for key in shared:
        a = (recs_a[key].get("scores") or {}).get(metric)
        b = (recs_b[key].get("scores") or {}).get(metric)
        if not isinstance(a, bool) or not isinstance(b, bool) or a == b:
            continue
        item = {"id": key[0], "epoch": key[1],
                "split": (recs_a[key].get("meta") or {}).get("split")}
        (lost if a else gained).append(item)
    return {"metric": metric, "pass_a_fail_b": lost, "fail_a_pass_b": gained}


def compare_metric(name: str, a: Sequence[Any], b: Sequence[Any], *, continuous_test: str,
                   n_resamples: int, seed: int,
                   groups: Sequence[str] | None = None) -> dict[str, Any]:
    """Means, paired difference with bootstrap interval, and paired test for one metric.

    Pairs where either side is missing (``None``, nan) are dropped; ``n`` says how many were
    used. A metric whose values are all booleans is tested with exact McNemar. ``groups`` (the
    sample id of each pair) makes the bootstrap resample samples with all their epochs;
    ``resampled`` says which unit was resampled and ``n_samples`` how many there were.
    """
    labels = list(groups) if groups is not None else [str(i) for i in range(len(a))]
    pairs = [(_number(x), _number(y), isinstance(x, bool) and isinstance(y, bool), g)
             for x, y, g in zip(a, b, labels, strict=True)]
    used = [p for p in pairs if p[0] is not None and p[1] is not None]
    xs = np.array([u[0] for u in used], dtype=float)
    ys = np.array([u[1] for u in used], dtype=float)
    used_groups = [u[3] for u in used]
    n_samples = len(set(used_groups))
    unit = "samples" if n_samples < len(used) else "(sample, epoch) pairs"
    binary = bool(used) and all(u[2] for u in used)
    counts = any(type(v) is int for v in (*a, *b))  # integer scores are counts, not rates
    in_unit = bool(np.all((xs >= 0) & (xs <= 1)) and np.all((ys >= 0) & (ys <= 1)))
    row: dict[str, Any] = {"metric": name, "kind": "binary" if binary else "continuous",
                           "n": len(used), "n_samples": n_samples, "resampled": unit,
                           "rate": bool(used) and in_unit and not counts}
    if not used:
        return {**row, "mean_a": None, "mean_b": None, "diff": None, "ci_low": None,
                "ci_high": None, "test": None, "statistic": None, "p_value": None}
    diff, low, high = paired_bootstrap_diff(
        xs, ys, n_resamples=n_resamples, seed=seed,
        groups=used_groups if unit == "samples" else None)
    test = mcnemar_exact(xs, ys) if binary else CONTINUOUS_TESTS[continuous_test](xs, ys)
    return {**row, "mean_a": float(xs.mean()), "mean_b": float(ys.mean()), "diff": diff,
            "ci_low": low, "ci_high": high, "test": test.test, "statistic": test.statistic,
            "p_value": test.p_value}


def compare_runs(run_a: str | Path, run_b: str | Path, *, metrics: Sequence[str] | None = None,
                 continuous_test: str = "wilcoxon", n_resamples: int = 2000,
                 seed: int = 0, prices: Prices = None) -> dict[str, Any]:
    """Paired comparison of two run directories; a JSON-able dict (see the module docstring).

    ``diff`` is always B minus A. ``metrics`` restricts the comparison to the named scores and
    headline metrics (by label, scores.json key or score name; default: all). The bootstrap
    and the permutation test are seeded, so the same two runs always give the same result.
    ``cost`` is what each run cost per model role (:mod:`toolscore.report.compare_cost`).
    """
    if continuous_test not in CONTINUOUS_TESTS:
        raise ValueError(f"unknown test {continuous_test!r}; choose one of "
                         f"{', '.join(CONTINUOUS_TESTS)}")
    config_a, recs_a = _load(run_a)
    config_b, recs_b = _load(run_b)
    view_a, view_b = run_view(config_a), run_view(config_b)
    ok_a = {k for k, r in recs_a.items() if r.get("status") == "ok"}
    ok_b = {k for k, r in recs_b.items() if r.get("status") == "ok"}
    shared = sorted(ok_a & ok_b, key=lambda k: (k[1], k[0]))
    shared_recs = [recs_a[k] for k in shared] + [recs_b[k] for k in shared]
    groups = [k[0] for k in shared]
    several_epochs = len(set(groups)) < len(shared)
    primary = view_a.primary_metric(shared_recs)
    wanted = set(metrics) if metrics is not None else None
    names = [n for n in _metric_names(shared_recs, primary) if wanted is None or n in wanted]
    per_sample = []
    for name in names:
        a = [(recs_a[k].get("scores") or {}).get(name) for k in shared]
        b = [(recs_b[k].get("scores") or {}).get(name) for k in shared]
        per_sample.append({**compare_metric(name, a, b, continuous_test=continuous_test,
                                            n_resamples=n_resamples, seed=seed,
                                            groups=groups), "view": PER_SAMPLE})
    pairs = [(recs_a[k], recs_b[k]) for k in shared]
    headline = [compare_headline_metric(
                    m, pairs, groups, continuous_tests=CONTINUOUS_TESTS,
                    continuous_test=continuous_test, n_resamples=n_resamples, seed=seed,
                    grouped=several_epochs)
                for m in view_a.interval_metrics(shared_recs)
                if wanted is None or wanted & {m.label, m.key, m.numerator}]
    headline = [h for h in headline if h["n"]]
    if wanted is not None and shared:
        known = set(names) | {x for h in headline for x in (h["metric"], h["key"])}
        unknown = sorted(wanted - known)
        if unknown:
            raise ValueError(f"--metric {unknown[0]!r}: neither a headline metric nor a "
                             "numeric per-sample score of these runs")
    warnings = _warnings(config_a, config_b, view_a, view_b, recs_a, recs_b, ok_a, ok_b,
                         shared, several_epochs)
    flips = _flips(shared, recs_a, recs_b, primary) if primary else None
    by_split = _by_split(shared, recs_a, recs_b, primary, continuous_test, n_resamples, seed) \
        if primary else {}
    return {
        "run_a": _describe(run_a, config_a, view_a), "run_b": _describe(run_b, config_b, view_b),
        "shared": len(shared), "only_a": len(set(recs_a) - set(recs_b)),
        "only_b": len(set(recs_b) - set(recs_a)),
        "errors_a": sum(1 for k in set(recs_a) & set(recs_b) if k not in ok_a),
        "errors_b": sum(1 for k in set(recs_a) & set(recs_b) if k not in ok_b),
        "continuous_test": continuous_test, "primary_metric": primary,
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "confidence": 0.95,
                      "resampled": "samples (all epochs of a sample together)"
                      if several_epochs else "(sample, epoch) pairs",
                      "samples": len(set(groups))},
        "headline": headline, "per_sample": per_sample, "by_split": by_split, "flips": flips,
        "warnings": warnings, "cost": compare_costs(config_a, list(recs_a.values()), config_b,
                                                    list(recs_b.values()), prices),
    }


def _warnings(config_a: dict[str, Any], config_b: dict[str, Any], view_a: RunView,
              view_b: RunView, recs_a: dict[Key, dict[str, Any]],
              recs_b: dict[Key, dict[str, Any]], ok_a: set[Key], ok_b: set[Key],
              shared: list[Key], several_epochs: bool) -> list[str]:
    warnings = config_warnings(config_a, config_b)
    protocol_a, protocol_b = view_a.protocol(), view_b.protocol()
    if protocol_a != protocol_b:
        warnings.insert(0, NOT_COMPARABLE.format(a=protocol_a or "reference",
                                                 b=protocol_b or "reference"))
    mode_a, mode_b = view_a.mode(), view_b.mode()
    if mode_a != mode_b and not any(w.startswith("mode differs") for w in warnings):
        warnings.append(f"mode differs: {mode_a!r} vs {mode_b!r}")
    for view in (view_a, view_b):
        if view.note:
            warnings.append(view.note)
    only_a, only_b = len(set(recs_a) - set(recs_b)), len(set(recs_b) - set(recs_a))
    if only_a or only_b:
        warnings.append(f"samples in only one run are not compared: {only_a} only in A, "
                        f"{only_b} only in B")
    err_a = sum(1 for k in set(recs_a) & set(recs_b) if k not in ok_a)
    err_b = sum(1 for k in set(recs_a) & set(recs_b) if k not in ok_b)
    if err_a or err_b:
        warnings.append(f"samples that errored in either run are not compared: {err_a} errors "
                        f"in A, {err_b} in B")
    if not shared:
        warnings.append("the runs share no successfully finished (sample, epoch): "
                        "nothing to compare")
    if several_epochs:
        warnings.append("several epochs of a sample: the bootstrap intervals and the "
                        "permutation test resample samples (all their epochs together), but "
                        "McNemar, Wilcoxon and sign tests count each (sample, epoch) as a "
                        "separate pair, so their p-values are somewhat optimistic")
    return warnings


def _by_split(shared: list[Key], recs_a: dict[Key, dict[str, Any]],
              recs_b: dict[Key, dict[str, Any]], metric: str, continuous_test: str,
              n_resamples: int, seed: int) -> dict[str, dict[str, Any]]:
    """The primary metric compared within each split (a gain on easy can hide a loss on hard)."""
    splits: dict[str, list[Key]] = {}
    for key in shared:
        split = (recs_a[key].get("meta") or {}).get("split")
        if split is not None:
            splits.setdefault(str(split), []).append(key)
    return {split: compare_metric(
                metric, [(recs_a[k].get("scores") or {}).get(metric) for k in keys],
                [(recs_b[k].get("scores") or {}).get(metric) for k in keys],
                continuous_test=continuous_test, n_resamples=n_resamples, seed=seed,
                groups=[k[0] for k in keys])
            for split, keys in sorted(splits.items())}


def _describe(path: str | Path, config: dict[str, Any], view: RunView) -> dict[str, Any]:
    bench = config.get("benchmark_config") or {}
    return {"path": str(path), "benchmark": config.get("benchmark"), "model": config.get("model"),
            "embedder": bench.get("embedder_id") or bench.get("embedder"),
            "mode": view.mode(), **view.roles(), "epochs": config.get("epochs")}
