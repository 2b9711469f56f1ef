"""Run comparison and the paired tests behind it, on synthetic run directories with known flips.

The p-values are checked against scipy (an independent implementation) and the flipped samples
against the ones planted in the synthetic runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.compare import compare_runs, config_warnings
from toolscore.stats.paired import (
    binom_two_sided,
    mcnemar_exact,
    paired_bootstrap_diff,
    sign_test,
    wilcoxon_signed_rank,
)

sps = pytest.importorskip("scipy.stats")

CONFIG: dict[str, Any] = {
    "benchmark": "demo", "model": "m", "epochs": 1, "versions": {"toolscore": "0.1.0"},
    "benchmark_config": {"data_dir": "/d", "embedder": "hashing", "embedder_id": "hash-1",
                         "strict": False, "seed": 0},
}


def write_run(path: Path, success: dict[str, bool], *, soft: dict[str, float] | None = None,
              errors: tuple[str, ...] = (), config: dict[str, Any] | None = None) -> Path:
    """A run directory with one epoch; ``soft`` adds a continuous score per sample."""
    store = RunStore(path)
    store.write_config({**CONFIG, **(config or {})})
    for i, (sid, ok) in enumerate(success.items()):
        record: dict[str, Any] = {"id": sid, "epoch": 0,
                                  "meta": {"split": "easy" if i % 2 else "hard"},
                                  "usage": {"input_tokens": 10, "output_tokens": 2}, "time_s": 0.1}
        if sid in errors:
            record.update(status="error", error="infrastructure: timeout")
        else:
            scores: dict[str, Any] = {"success": ok, "matches": 1, "outcomes": [{"turn": 1}]}
            if soft is not None:
                scores["soft_success"] = soft[sid]
            record.update(status="ok", output={}, scores=scores)
        store.append(record)
    return path


IDS = [f"s{i:02d}" for i in range(20)]
A_PASS = set(IDS[:10])
LOST = {"s01", "s04"}              # pass in A, fail in B
GAINED = {"s10", "s11", "s12", "s15", "s19"}  # fail in A, pass in B


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(3)
    soft_a = {s: float(rng.random()) for s in IDS}
    soft_b = {s: float(np.clip(v + rng.normal(0.1, 0.2), 0.0, 1.0)) for s, v in soft_a.items()}
    a = write_run(tmp_path / "a", {s: s in A_PASS for s in IDS}, soft=soft_a)
    b = write_run(tmp_path / "b", {s: (s in A_PASS) != (s in LOST | GAINED) for s in IDS},
                  soft=soft_b)
    return a, b


def test_compare_reports_exactly_the_planted_flips(runs: tuple[Path, Path]) -> None:
    result = compare_runs(*runs)
    flips = result["flips"]
    assert flips["metric"] == "success"
    assert {f["id"] for f in flips["pass_a_fail_b"]} == LOST
    assert {f["id"] for f in flips["fail_a_pass_b"]} == GAINED
    assert result["shared"] == 20
    easy, hard = result["by_split"]["easy"], result["by_split"]["hard"]  # odd ids are easy
    assert (easy["n"], hard["n"]) == (10, 10)
    gained_easy = sum(1 for s in GAINED if int(s[1:]) % 2)
    lost_easy = sum(1 for s in LOST if int(s[1:]) % 2)
    assert easy["diff"] == pytest.approx((gained_easy - lost_easy) / 10)
    assert easy["p_value"] == pytest.approx(
        sps.binomtest(gained_easy, gained_easy + lost_easy, 0.5).pvalue)


def test_success_uses_exact_mcnemar_matching_scipy(runs: tuple[Path, Path]) -> None:
    row = compare_runs(*runs)["per_sample"][0]
    assert row["metric"] == "success" and row["kind"] == "binary"
    assert row["test"] == "mcnemar-exact"
    expected = sps.binomtest(len(GAINED), len(GAINED) + len(LOST), 0.5).pvalue
    assert row["p_value"] == pytest.approx(expected, rel=1e-12)
    assert row["mean_a"] == pytest.approx(0.5)
    assert row["mean_b"] == pytest.approx(0.5 + (len(GAINED) - len(LOST)) / 20)
    assert row["diff"] == pytest.approx((len(GAINED) - len(LOST)) / 20)
    assert row["ci_low"] <= row["diff"] <= row["ci_high"]


def test_continuous_score_uses_wilcoxon_matching_scipy(runs: tuple[Path, Path]) -> None:
    rows = {r["metric"]: r for r in compare_runs(*runs)["per_sample"]}
    soft = rows["soft_success"]
    a, b = ([r["scores"]["soft_success"] for r in RunStore(run).records()] for run in runs)
    assert soft["kind"] == "continuous" and soft["rate"] is True
    assert soft["p_value"] == pytest.approx(sps.wilcoxon(np.array(b) - np.array(a)).pvalue)
    assert "outcomes" not in rows  # nested scores are not compared
    assert rows["matches"]["rate"] is False  # an integer score is a count
    sign = {r["metric"]: r for r in compare_runs(*runs, continuous_test="sign")["per_sample"]}
    assert sign["soft_success"]["test"] == "sign"


def test_compare_is_reproducible_from_its_seed(runs: tuple[Path, Path]) -> None:
    assert compare_runs(*runs, seed=5) == compare_runs(*runs, seed=5)


def test_errored_and_missing_samples_are_left_out_with_a_warning(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", {s: True for s in IDS}, errors=("s03",))
    b = write_run(tmp_path / "b", {s: False for s in IDS[:15]}, errors=("s07",))
    result = compare_runs(a, b)
    assert result["shared"] == 13
    assert (result["only_a"], result["errors_a"], result["errors_b"]) == (5, 1, 1)
    assert len(result["flips"]["pass_a_fail_b"]) == 13
    text = " ".join(result["warnings"])
    assert "5 only in A" in text and "1 errors in A, 1 in B" in text


def test_config_differences_are_warned() -> None:
    changed = {**CONFIG, "benchmark_config": {**CONFIG["benchmark_config"], "data_dir": "/e",
                                              "embedder": "minilm", "embedder_id": "minilm-x",
                                              "strict": True, "judge": "gpt"}}
    warnings = config_warnings(CONFIG, changed)
    groups = [w.split(" differs")[0] for w in warnings]
    assert groups == ["dataset", "embedder", "mode", "judge"]
    assert config_warnings(CONFIG, CONFIG) == []


def test_cli_compare_json_and_table(runs: tuple[Path, Path]) -> None:
    cli = CliRunner()
    done = cli.invoke(app, ["compare", str(runs[0]), str(runs[1]), "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert {f["id"] for f in doc["flips"]["fail_a_pass_b"]} == GAINED
    assert doc["per_sample"][0]["metric"] == "success"
    table = cli.invoke(app, ["compare", str(runs[0]), str(runs[1]), "--metric", "success"])
    assert table.exit_code == 0 and "mcnemar-exact" in table.stdout
    missing = cli.invoke(app, ["compare", str(runs[0]), str(runs[0].parent / "nope")])
    assert missing.exit_code == 2


# -- the paired tests on their own -----------------------------------------------------------
@pytest.mark.parametrize(("k", "n"), [(0, 0), (0, 5), (3, 10), (5, 10), (9, 9), (17, 40)])
def test_binomial_p_matches_scipy(k: int, n: int) -> None:
    expected = 1.0 if n == 0 else sps.binomtest(k, n, 0.5).pvalue
    assert binom_two_sided(k, n) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_and_sign_test_by_hand() -> None:
    a = [1, 1, 1, 0, 0, 0, 1, 0]
    b = [0, 0, 1, 1, 0, 1, 1, 1]
    res = mcnemar_exact(a, b)  # discordant: 2 lost, 3 gained
    assert (res.statistic, res.n) == (3.0, 8)
    assert res.p_value == pytest.approx(1.0)  # C(5,0..2)/32 * 2 = 16/32 * 2
    sign = sign_test([0.1, 0.5, 0.5, 0.2], [0.3, 0.5, 0.9, 0.6])
    assert sign.p_value == pytest.approx(0.25)  # 3 of 3 positive: 2 * 1/8


def test_wilcoxon_matches_scipy_exact_and_with_ties() -> None:
    rng = np.random.default_rng(0)
    for n in (6, 15, 40, 80):
        a = rng.normal(size=n)
        b = a + rng.normal(0.2, 1.0, size=n)
        method = "exact" if n <= 50 else "asymptotic"
        assert wilcoxon_signed_rank(a, b).p_value == pytest.approx(
            sps.wilcoxon(b - a, method=method).pvalue, rel=1e-9)
    a = np.array([0, 0.5, 1, 1, 0.5, 0, 1, 0.5, 0.25, 0])
    b = np.array([1, 0.5, 0.5, 1, 1, 1, 0, 1, 0.75, 0.5])
    assert wilcoxon_signed_rank(a, b).p_value == pytest.approx(
        sps.wilcoxon(b - a, method="asymptotic", correction=False).pvalue, rel=1e-9)
    assert wilcoxon_signed_rank([1, 2], [1, 2]).p_value == 1.0


def test_paired_bootstrap_interval() -> None:
    a = np.zeros(50)
    b = np.r_[np.ones(10), np.zeros(40)]
    diff, low, high = paired_bootstrap_diff(a, b, seed=1)
    assert diff == pytest.approx(0.2)
    assert 0.05 < low < 0.2 < high < 0.35
    assert paired_bootstrap_diff(a, b, seed=1) == (diff, low, high)
