"""Intervals over runs with several epochs resample samples, keeping a sample's epochs together:
a run whose epochs are identical copies carries no more evidence than one epoch, so it must get
the same interval; single-epoch runs keep exactly the plain bootstrap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolscore.benchmarks.base import Benchmark
from toolscore.records import RunStore
from toolscore.report import intervals
from toolscore.report.compare import compare_runs
from toolscore.stats import bootstrap_ci
from toolscore.stats.paired import paired_bootstrap_diff

RNG = np.random.default_rng(7)
PASS_A = [bool(x) for x in RNG.random(30) < 0.5]
PASS_B = [bool(x) for x in RNG.random(30) < 0.7]
F1_A = [float(x) for x in RNG.random(30)]
F1_B = [float(x) for x in RNG.random(30)]


def _run(path: Path, success: list[bool], f1: list[float], epochs: int) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": path.name, "epochs": epochs,
                        "benchmark_config": {}})
    for e in range(epochs):
        for i, (s, f) in enumerate(zip(success, f1, strict=True)):
            store.append({"id": f"s{i:02d}", "epoch": e, "status": "ok",
                          "meta": {"split": "easy" if i % 2 else "hard"},
                          "scores": {"success": s, "f1": f}})
    return path


def test_grouped_bootstrap_of_copies_equals_single() -> None:
    x = RNG.random(25)
    single = bootstrap_ci(x, np.mean, n_resamples=500, seed=3)
    copies = np.concatenate([x, x, x])
    ids = [f"s{i}" for i in range(25)] * 3
    assert bootstrap_ci(copies, np.mean, n_resamples=500, seed=3,
                        groups=ids) == pytest.approx(single, abs=1e-12)
    # treating the copies as independent narrows the interval: the defect being fixed
    naive = bootstrap_ci(copies, np.mean, n_resamples=500, seed=3)
    assert naive[1] - naive[0] < single[1] - single[0]
    # one row per group is exactly the plain bootstrap
    assert bootstrap_ci(x, np.mean, n_resamples=500, seed=3,
                        groups=[str(i) for i in range(25)]) == single


def test_unbalanced_groups_and_bad_labels() -> None:
    x = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    low, high = bootstrap_ci(x, np.mean, n_resamples=300, groups=["a", "a", "b", "b", "b", "c"])
    assert 0.0 <= low <= high <= 1.0
    with pytest.raises(ValueError, match="one label per row"):
        bootstrap_ci(x, np.mean, groups=["a"])


def test_compare_identical_epochs_give_the_single_epoch_interval(tmp_path: Path) -> None:
    one = compare_runs(_run(tmp_path / "a1", PASS_A, F1_A, 1),
                       _run(tmp_path / "b1", PASS_B, F1_B, 1), n_resamples=400)
    three = compare_runs(_run(tmp_path / "a3", PASS_A, F1_A, 3),
                         _run(tmp_path / "b3", PASS_B, F1_B, 3), n_resamples=400)
    assert one["bootstrap"]["resampled"] == "(sample, epoch) pairs"
    assert three["bootstrap"]["resampled"].startswith("samples")
    assert three["bootstrap"]["samples"] == 30 and three["shared"] == 90
    for m1, m3 in zip(one["per_sample"], three["per_sample"], strict=True):
        assert m1["metric"] == m3["metric"]
        assert m3["diff"] == pytest.approx(m1["diff"])
        assert (m3["ci_low"], m3["ci_high"]) == pytest.approx((m1["ci_low"], m1["ci_high"]))
        assert m1["resampled"] == "(sample, epoch) pairs" and m3["resampled"] == "samples"
    for split in ("easy", "hard"):
        a, b = one["by_split"][split], three["by_split"][split]
        assert (b["ci_low"], b["ci_high"]) == pytest.approx((a["ci_low"], a["ci_high"]))
    assert any("resample samples" in w for w in three["warnings"])


def test_single_epoch_compare_is_unchanged(tmp_path: Path) -> None:
    """The plain paired bootstrap over pairs in (epoch, id) order, as before."""
    result = compare_runs(_run(tmp_path / "a", PASS_A, F1_A, 1),
                          _run(tmp_path / "b", PASS_B, F1_B, 1), n_resamples=400, seed=5)
    row = next(m for m in result["per_sample"] if m["metric"] == "f1")
    diff, low, high = paired_bootstrap_diff(F1_A, F1_B, n_resamples=400, seed=5)
    assert (row["diff"], row["ci_low"], row["ci_high"]) == (diff, low, high)


def _records(epochs: int) -> list[dict[str, Any]]:
    return [{"id": f"s{i:02d}", "epoch": e, "status": "ok", "meta": {},
             "scores": {"success": s, "f1": f}}
            for i, (s, f) in enumerate(zip(PASS_A, F1_A, strict=True)) for e in range(epochs)]


def test_html_headline_resamples_samples() -> None:
    specs = Benchmark.interval_metrics(_records(1))  # generic: the mean of success and of f1
    assert [m.numerator for m in specs] == ["success", "f1"]
    one = intervals.headline(_records(1), None, specs, n_resamples=300)
    three = intervals.headline(_records(3), None, specs, n_resamples=300)
    assert intervals.resampled_unit(_records(1)) == "records"
    assert intervals.resampled_unit(_records(3)) == "samples"
    for m1, m3 in zip(one["all"] if "all" in one else next(iter(one.values())),
                      three["all"] if "all" in three else next(iter(three.values())),
                      strict=True):
        assert (m3["low"], m3["high"]) == pytest.approx((m1["low"], m1["high"]))
        assert m3["n"] == 3 * m1["n"]
