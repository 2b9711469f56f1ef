"""pass@k, pass^k, flip rate and the noise floor against values computed by hand, and the
``report`` command that shows them for a run with several epochs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.overview import run_overview
from toolscore.stats.repeats import (
    Z95,
    empirical_noise_floor,
    flip_rate,
    noise_floor,
    pass_at_k,
    pass_at_k_sample,
    pass_hat_k,
    pass_hat_k_sample,
    per_sample_variance,
    repeat_summary,
)

# successes per sample over 3 epochs: c = 3, 1, 0, 2
OUTCOMES = {"a": [True, True, True], "b": [True, False, False],
            "c": [False, False, False], "d": [True, True, False]}


def test_pass_at_k_by_hand() -> None:
    assert pass_at_k(OUTCOMES, 1) == pytest.approx(6 / 12)
    # per sample 1 - C(n-c,2)/C(3,2): a 1, b 1 - 1/3, c 0, d 1
    assert pass_at_k(OUTCOMES, 2) == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)
    assert pass_at_k(OUTCOMES, 3) == pytest.approx(3 / 4)
    assert pass_at_k_sample(10, 3, 4) == pytest.approx(1 - math.comb(7, 4) / math.comb(10, 4))


def test_pass_hat_k_by_hand() -> None:
    assert pass_hat_k(OUTCOMES, 1) == pytest.approx(0.5)
    # per sample C(c,2)/C(3,2): a 1, b 0, c 0, d 1/3
    assert pass_hat_k(OUTCOMES, 2) == pytest.approx((1 + 1 / 3) / 4)
    assert pass_hat_k(OUTCOMES, 3) == pytest.approx(1 / 4)
    assert pass_hat_k_sample(5, 4, 2) == pytest.approx(6 / 10)
    assert math.isnan(pass_hat_k(OUTCOMES, 4))  # no sample has 4 attempts
    with pytest.raises(ValueError):
        pass_hat_k_sample(3, 4, 1)


def test_flip_rate_and_variance_by_hand() -> None:
    assert flip_rate(OUTCOMES) == 0.5  # b and d
    assert per_sample_variance(3, 1) == pytest.approx(1 * 2 / (3 * 2))
    assert per_sample_variance(2, 1) == pytest.approx(0.5)
    assert math.isnan(flip_rate({"x": [True]}))


def test_noise_floor_by_hand() -> None:
    # mean unbiased variance (0 + 1/3 + 0 + 1/3) / 4 = 1/6, n = 4: 1.96 * sqrt(2 * (1/6) / 4)
    assert noise_floor(OUTCOMES) == pytest.approx(Z95 * math.sqrt(1 / 12))
    assert noise_floor(OUTCOMES, runs_per_side=3) == pytest.approx(Z95 / 6)
    assert noise_floor({"x": [True, True], "y": [False, False]}) == 0.0
    assert math.isnan(noise_floor({"x": [True]}))


def test_empirical_noise_floor_by_enumeration() -> None:
    # b and d each contribute +1, -1 or 0 with prob 1/3; a and c nothing. |diff| over 4 samples
    # is 0 (p 1/3), 0.25 (p 4/9) or 0.5 (p 2/9): the 95% quantile is 0.5.
    assert empirical_noise_floor(OUTCOMES, seed=1) == pytest.approx(0.5)


def test_empirical_noise_floor_agrees_with_the_formula_on_many_samples() -> None:
    rng = np.random.default_rng(0)
    p = rng.random(500)
    outcomes = {str(i): list(rng.random(4) < p[i]) for i in range(500)}
    analytic, empirical = noise_floor(outcomes), empirical_noise_floor(outcomes, seed=0)
    assert empirical == pytest.approx(analytic, rel=0.15)


def test_repeat_summary_shape() -> None:
    s = repeat_summary(OUTCOMES)
    assert (s["samples"], s["epochs"], s["attempts"]) == (4, 3, 12)
    assert s["pass_at_k"]["2"] == pytest.approx(pass_at_k(OUTCOMES, 2))
    assert s["samples_at_k"] == {"1": 4, "2": 4, "3": 4}
    assert s["noise_floor_k_epochs"] == pytest.approx(Z95 / 6)


def write_epochs_run(path: Path) -> Path:
    """OUTCOMES as a 3-epoch run; a and b in split easy, c and d in hard; one errored record."""
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": "m", "epochs": 3,
                        "benchmark_config": {"embedder_id": "hash-1", "strict": False,
                                             "seed": 0}})
    for epoch in range(3):
        for sid, results in OUTCOMES.items():
            record: dict[str, Any] = {"id": sid, "epoch": epoch,
                                      "meta": {"split": "easy" if sid in "ab" else "hard"},
                                      "status": "ok", "output": {},
                                      "scores": {"success": results[epoch]},
                                      "usage": {"input_tokens": 100, "output_tokens": 20,
                                                "calls": 2}, "time_s": 0.5}
            store.append(record)
    store.append({"id": "e", "epoch": 0, "meta": {"split": "hard"}, "status": "error",
                  "error": "infrastructure: 503", "usage": {"input_tokens": 7}})
    return path


def test_run_overview_repeats_per_split(tmp_path: Path) -> None:
    doc = run_overview(write_epochs_run(tmp_path / "run"))
    splits = doc["repeats"]["splits"]
    assert doc["repeats"]["metric"] == "success"
    assert splits["all"] == repeat_summary(OUTCOMES)
    assert splits["easy"]["pass_hat_k"]["3"] == pytest.approx(0.5)
    assert splits["hard"]["flip_rate"] == pytest.approx(0.5)
    assert doc["counts"]["all"] == {"samples": 5, "records": 13, "errors": 1}
    assert doc["usage"]["tokens"] == 12 * 120 + 7
    assert doc["usage"]["tokens_per_run"] == pytest.approx((12 * 120 + 7) / 3)
    assert doc["embedder"] == "hash-1" and doc["seeds"] == {"seed": 0}


def test_cli_report_json_and_table(tmp_path: Path) -> None:
    run = write_epochs_run(tmp_path / "run")
    cli = CliRunner()
    done = cli.invoke(app, ["report", str(run), "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["repeats"]["splits"]["all"]["pass_at_k"]["3"] == pytest.approx(0.75)
    table = cli.invoke(app, ["report", str(run)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "pass^3" in table.stdout and "noise floor" in table.stdout
    assert cli.invoke(app, ["report", str(tmp_path)]).exit_code == 2


def test_single_epoch_run_has_no_repeats(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "one")
    store.write_config({"benchmark": "demo", "model": "m", "epochs": 1})
    store.append({"id": "a", "epoch": 0, "status": "ok", "scores": {"success": True}})
    assert run_overview(store.path)["repeats"] is None
