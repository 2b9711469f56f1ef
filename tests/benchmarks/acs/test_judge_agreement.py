"""Classification metrics against hand computations, and ``judge-agreement`` for acs-verify."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.data import ROOT as _DATA_ROOT
from support.data import needs

from toolscore.cli import app
from toolscore.stats.classification import (
    METRICS,
    accuracy,
    accuracy_all,
    balanced_accuracy,
    classification_report,
    coverage,
    kappa,
    per_class_accuracy,
    predicted_positive_rate,
)

ACS = _DATA_ROOT / "acs" / "acs_dev.csv"

# 6 rows, one abstention. Decided: rows 0-4; right: 0, 1, 3.
GOLD = [True, True, True, False, False, False]
PRED: list[bool | None] = [True, True, False, False, True, None]


def test_metrics_match_hand_computation() -> None:
    assert coverage(GOLD, PRED) == pytest.approx(5 / 6)
    assert accuracy(GOLD, PRED) == pytest.approx(3 / 5)
    assert accuracy_all(GOLD, PRED) == pytest.approx(3 / 6)
    assert per_class_accuracy(GOLD, PRED) == {True: pytest.approx(2 / 3),
                                              False: pytest.approx(1 / 2)}
    assert balanced_accuracy(GOLD, PRED) == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert predicted_positive_rate(GOLD, PRED) == pytest.approx(3 / 5)
    # decided rows: observed 3/5; chance 3/5*3/5 + 2/5*2/5 = 0.52; (0.6-0.52)/0.48 = 1/6
    assert kappa(GOLD, PRED) == pytest.approx(1 / 6)


def test_degenerate_inputs_give_nan_not_errors() -> None:
    assert math.isnan(accuracy([True], [None]))
    assert math.isnan(kappa([True, True], [True, True]))  # chance agreement 1
    assert math.isnan(per_class_accuracy([True], [True])[False])
    assert balanced_accuracy([True], [True]) == 1.0
    with pytest.raises(ValueError):
        accuracy([True], [True, False])


def test_report_points_groups_and_seeded_intervals() -> None:
    groups = ["a", "a", "b", "b", "b", "a"]
    rep = classification_report(GOLD, PRED, groups=groups, clusters=[0, 0, 1, 1, 2, 2],
                                n_resamples=300, seed=3)
    m = rep.overall.metrics
    assert set(m) == set(METRICS)
    assert m["accuracy"].value == pytest.approx(0.6) and m["kappa"].value == pytest.approx(1 / 6)
    for e in m.values():
        assert e.low <= e.value + 1e-12 and e.value <= e.high + 1e-12
    assert (rep.overall.n, rep.overall.decided, rep.overall.positives) == (6, 5, 3)
    # group a: rows 0, 1, 5 -> decided 0, 1 both right
    a = rep.groups["a"]
    assert a.n == 3 and a.metrics["accuracy"].value == 1.0
    assert a.metrics["coverage"].value == pytest.approx(2 / 3)
    # group b: rows 2, 3, 4 -> right only row 3
    assert rep.groups["b"].metrics["accuracy"].value == pytest.approx(1 / 3)
    again = classification_report(GOLD, PRED, groups=groups, clusters=[0, 0, 1, 1, 2, 2],
                                  n_resamples=300, seed=3)
    assert json.dumps(again.to_dict()) == json.dumps(rep.to_dict())  # nan-safe comparison
    none = classification_report(GOLD, PRED, n_resamples=0)
    assert math.isnan(none.overall.metrics["accuracy"].low) and not none.groups


def test_clustered_bootstrap_is_wider_for_correlated_rows() -> None:
    # 20 clusters of 10 identical rows: resampling rows would pretend 200 independent rows.
    gold = [True] * 200
    pred = [c % 2 == 0 for c in range(20) for _ in range(10)]
    clusters = [c for c in range(20) for _ in range(10)]
    rows = classification_report(gold, pred, n_resamples=500).overall.metrics["accuracy"]
    clus = classification_report(gold, pred, clusters=clusters,
                                 n_resamples=500).overall.metrics["accuracy"]
    assert rows.value == clus.value == 0.5
    assert clus.high - clus.low > 1.5 * (rows.high - rows.low)


needs_acs = needs("acs")


@needs_acs
def test_judge_agreement_acs_verify_on_dev() -> None:
    from toolscore.benchmarks.acs.data import load_rows
    from toolscore.benchmarks.acs.verify import verify

    rows = load_rows(ACS)
    labels = [verify(r.request, r.response, r.constraint, r.domain).label for r in rows]
    expected = accuracy([r.label for r in rows], labels)
    res = CliRunner().invoke(app, ["judge-agreement", "--data", str(ACS), "--resamples", "50",
                                   "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["rows"] == len(rows) == 322 and doc["requests"] == 80 and doc["errors"] == 0
    overall = doc["report"]["overall"]["metrics"]
    assert overall["accuracy"]["value"] == pytest.approx(expected)
    # every row decided and right: 322/322 (on the rows acs-verify's rules were written from)
    assert overall["coverage"]["value"] == overall["accuracy"]["value"] == 1.0
    assert doc["report"]["overall"]["decided"] == 322 and doc["abstentions"] == 0
    assert set(doc["report"]["groups"]) == {r.domain for r in rows}
    assert sum(g["n"] for g in doc["report"]["groups"].values()) == 322
    assert doc["baseline_always_satisfied"] == pytest.approx(sum(r.label for r in rows) / 322)


@needs_acs
def test_judge_agreement_table_kind_groups_and_limit() -> None:
    res = CliRunner().invoke(app, ["judge-agreement", "--data", str(ACS), "--resamples", "20",
                                   "--group", "kind", "--limit", "30"])
    assert res.exit_code == 0, res.output
    assert "on 30 ACS rows" in res.stdout and "kappa" in res.stdout and "\nkind" in res.stdout


def test_judge_agreement_user_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["judge-agreement", "--group", "colour"])
    assert bad.exit_code == 2
    shots = runner.invoke(app, ["judge-agreement", "--shots", "2"])
    assert shots.exit_code == 2
    missing = runner.invoke(app, ["judge-agreement", "--data", str(tmp_path / "none.csv")])
    assert missing.exit_code == 2
