"""judge-agreement on any human-labelled set: labels and verdicts joined from files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolscore.data import DataError
from toolscore.judges.labels import join_labels


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    # humans: a,b,c positive; d,e negative. judge: a ok, b wrong, c abstains, d ok, e wrong;
    # f was never judged.
    labels = _write(tmp_path / "labels.jsonl", [
        {"id": "a", "label": True, "domain": "x"}, {"id": "b", "label": "yes", "domain": "x"},
        {"id": "c", "label": 1, "domain": "y"}, {"id": "d", "label": "no", "domain": "y"},
        {"id": "e", "label": False, "domain": "y"}, {"id": "f", "label": True, "domain": "y"}])
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("id,verdict\na,pass\nb,fail\nc,\nd,fail\ne,pass\n")
    return labels, verdicts


def test_join_counts_unjudged_and_parses_label_spellings(files) -> None:
    labels, verdicts = files
    items, unjudged = join_labels(labels, verdicts, verdict_field="verdict",
                                  group_field="domain")
    assert unjudged == 1
    assert [(i.id, i.human, i.label, i.group) for i in items] == [
        ("a", True, True, "x"), ("b", True, False, "x"), ("c", True, None, "y"),
        ("d", False, False, "y"), ("e", False, True, "y")]


def test_cli_reports_hand_computed_metrics(files) -> None:
    labels, verdicts = files
    done = subprocess.run(
        [sys.executable, "-m", "toolscore.cli", "judge-agreement", "--labels", str(labels),
         "--verdicts", str(verdicts), "--verdict-field", "verdict", "--group-field", "domain",
         "--resamples", "0", "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(done.stdout)
    m = {k: v["value"] for k, v in doc["report"]["overall"]["metrics"].items()}
    # decided: a(T,T) b(T,F) d(F,F) e(F,T) -> 2 of 4 right; c abstained
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["accuracy_all"] == pytest.approx(2 / 5)
    assert m["coverage"] == pytest.approx(4 / 5)
    assert m["balanced_accuracy"] == pytest.approx(0.5)
    assert m["kappa"] == pytest.approx(0.0)
    assert doc["unjudged"] == 1 and doc["abstentions"] == 1
    assert set(doc["report"]["groups"]) == {"x", "y"}


def test_unknown_ids_and_bad_labels_are_one_line_errors(tmp_path: Path, files) -> None:
    labels, _ = files
    stray = _write(tmp_path / "stray.jsonl", [{"id": "zz", "label": True}])
    with pytest.raises(DataError, match="'zz' has no human label"):
        join_labels(labels, stray)
    bad = _write(tmp_path / "bad.jsonl", [{"id": "a", "label": "maybe-ish"}])
    with pytest.raises(DataError, match="not a yes/no label"):
        join_labels(labels, bad)
