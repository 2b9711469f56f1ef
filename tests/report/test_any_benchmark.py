"""report, HTML report, compare and export on a benchmark the report code has never heard of.

The benchmark is defined here and registered at run time: twelve items with a pass/fail score
and a numeric distance, no splits, a deterministic judge named in its configuration and a mode
of its own. Everything the report shows about it must come from the benchmark (its mode
label, its judge, its scores) or from the generic defaults of ``Benchmark``, and nothing from
another benchmark (no "success", no tools, no strict flag).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.benchmarks.base import Benchmark, Column, Sample, option
from toolscore.cli import app
from toolscore.entrypoints import BENCHMARKS
from toolscore.records import RunStore
from toolscore.report.compare import compare_runs
from toolscore.report.export.table import run_rows
from toolscore.report.html.page import render_html
from toolscore.report.html.samples import page_bodies
from toolscore.report.overview import run_overview
from toolscore.runs.api import evaluate

NAME = "tally-test"
ITEMS = 12
WRONG = {0, 3, 6, 9}  # the items an offset makes wrong
FOREIGN = ("success", "strict", "embedder", "error type", "precision", "tool")


def stored_outputs(page: str) -> str:
    """The stored outputs the page carries for records its benchmark shows nothing of."""
    return json.dumps([b.get("output") for b in page_bodies(page)])


def foreign(text: str) -> list[str]:
    """Words of other benchmarks (ToolTalk's) found in ``text``."""
    return [w for w in FOREIGN if re.search(rf"\b{w}\b", text)]


@dataclass
class TallyOptions:
    offset: int = option(0, "Added to every third answer (a worse system under test).")
    lenient: bool = option(False, "Accept answers within 1.5 (labelled as its own mode).")


class TallyBenchmark(Benchmark):
    """Doubling numbers, judged by a deterministic program; no model, no splits."""

    name = NAME
    description = "test: doubling numbers"
    Options = TallyOptions
    columns = [Column("pass_rate", "pass rate"), Column("mean_distance", "distance", "number")]

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> TallyBenchmark:
        return cls(options.offset, options.lenient)

    def __init__(self, offset: int = 0, lenient: bool = False) -> None:
        self.offset, self.lenient = offset, lenient

    def config(self) -> dict[str, Any]:
        return {"offset": self.offset, "lenient": self.lenient, "judge": "exact-number-v1"}

    def mode_label(self) -> str:
        return "lenient" if self.lenient else "exact"

    def uses_model(self) -> bool:
        return False

    def samples(self) -> list[Sample]:
        return [Sample(f"item-{i:02d}", i) for i in range(ITEMS)]

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        wrong = self.offset if sample.data in WRONG else 0
        return {"question": f"2 x {sample.data}", "answer": 2 * sample.data + wrong}

    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        distance = 1.5 * abs(output["answer"] - 2 * sample.data)
        return {"passed": distance <= (1.5 if self.lenient else 0.0), "distance": distance,
                "detail": {"expected": 2 * sample.data}}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        ok = [r["scores"] for r in records if r.get("status") == "ok"]
        return {"overall": {"pass_rate": sum(s["passed"] for s in ok) / len(ok),
                            "mean_distance": sum(s["distance"] for s in ok) / len(ok)},
                "errors": len(records) - len(ok)}


@pytest.fixture()
def registered() -> Iterator[None]:
    BENCHMARKS.register(NAME, TallyBenchmark)
    try:
        yield
    finally:
        BENCHMARKS.unregister(NAME)


def tally_run(path: Path, **options: Any) -> Path:
    return evaluate(NAME, None, out=path, cache=None, **options).path


@pytest.fixture()
def runs(registered: None, tmp_path: Path) -> tuple[Path, Path]:
    return tally_run(tmp_path / "a"), tally_run(tmp_path / "b", offset=2)


def test_report_names_the_benchmark_mode_and_judge(runs: tuple[Path, Path]) -> None:
    doc = run_overview(runs[1], n_resamples=300)
    assert (doc["mode"], doc["judge"], doc["user"], doc["note"]) == (
        "exact", "exact-number-v1", None, None)
    assert doc["primary_metric"] == "passed"  # the generic default: the first pass/fail score
    assert doc["breakdowns"] == [] and "strict" not in doc
    (rows,) = doc["intervals"]["splits"].values()  # no splits: one group
    by = {m["label"]: m for m in rows}
    assert set(by) == {"passed", "distance"}  # the nested "detail" is not a metric
    assert by["passed"]["kind"] == "rate" and by["distance"]["kind"] == "number"
    assert by["passed"]["value"] == pytest.approx((ITEMS - len(WRONG)) / ITEMS)
    assert by["distance"]["value"] == pytest.approx(len(WRONG) * 3.0 / ITEMS)
    assert by["passed"]["low"] <= by["passed"]["value"] <= by["passed"]["high"]

    done = CliRunner().invoke(app, ["report", str(runs[1])], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "exact mode" in text and "judge exact-number-v1" in text
    assert "pass rate" in text and "66.7%" in text
    assert not foreign(text)


def test_html_shows_the_stored_output_and_no_foreign_filters(runs: tuple[Path, Path]) -> None:
    page = render_html(runs[1], n_resamples=200)
    assert "exact-number-v1" in page and "<b>exact</b>" in page
    assert "2 x 9" in stored_outputs(page)  # no record_view: the stored output is shown
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert data["facets"] == [] and data["splits"] == ["all"]
    assert sum(s["failed"] for s in data["samples"]) == len(WRONG)
    body = page.split("<body>", 1)[1].split("<script", 1)[0]
    assert not foreign(body)


def test_compare_tests_the_generic_headline(runs: tuple[Path, Path]) -> None:
    result = compare_runs(*runs, n_resamples=500)
    head = {m["metric"]: m for m in result["headline"]}
    assert set(head) == {"passed", "distance"}
    assert head["passed"]["test"] == "mcnemar-exact"
    assert head["distance"]["test"].startswith("wilcoxon")
    assert (head["passed"]["value_a"], head["passed"]["value_b"]) == (1.0, pytest.approx(2 / 3))
    per = {m["metric"]: m for m in result["per_sample"]}
    for name in ("passed", "distance"):  # a mean is the same in both views
        assert head[name]["diff"] == pytest.approx(per[name]["diff"])
        assert head[name]["ci_low"] == pytest.approx(per[name]["ci_low"])
    assert result["primary_metric"] == "passed"
    assert {f["id"] for f in result["flips"]["pass_a_fail_b"]} == {
        f"item-{i:02d}" for i in WRONG}
    assert result["by_split"] == {}
    assert any("offset = 0 vs 2" in w for w in result["warnings"])
    assert result["run_a"]["mode"] == "exact" and result["run_a"]["judge"] == "exact-number-v1"


def test_compare_warns_about_a_different_mode(registered: None, tmp_path: Path) -> None:
    exact, lenient = tally_run(tmp_path / "e", offset=1), tally_run(tmp_path / "l", offset=1,
                                                                       lenient=True)
    result = compare_runs(exact, lenient, n_resamples=200)
    assert "mode differs: 'exact' vs 'lenient'" in result["warnings"]
    with pytest.raises(ValueError, match="--metric 'nope'"):
        compare_runs(exact, lenient, metrics=["nope"], n_resamples=50)
    only = compare_runs(exact, lenient, metrics=["distance"], n_resamples=50)
    assert [m["metric"] for m in only["headline"]] == ["distance"]
    assert [m["metric"] for m in only["per_sample"]] == ["distance"]


def test_export_has_the_scores_of_any_benchmark(runs: tuple[Path, Path]) -> None:
    columns, rows = run_rows(runs[1])
    assert "passed" in columns and "distance" in columns and "detail" not in columns
    assert len(rows) == ITEMS and sum(r["passed"] is False for r in rows) == len(WRONG)


def test_a_benchmark_no_longer_installed_still_reports(runs: tuple[Path, Path]) -> None:
    BENCHMARKS.unregister(NAME)
    doc = run_overview(runs[1], n_resamples=100)
    assert doc["note"] and "generically" in doc["note"]
    assert doc["mode"] is None and doc["primary_metric"] == "passed"
    page = render_html(runs[1], n_resamples=100)
    assert "generically" in page and "2 x 9" in stored_outputs(page)
    assert compare_runs(*runs, n_resamples=100)["headline"]


class BrokenView(TallyBenchmark):
    def record_view(self, record: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("turns")

    def breakdowns(self, records: list[dict[str, Any]]) -> list[Any]:
        raise RuntimeError("no tools here")


def test_a_failing_benchmark_hook_does_not_take_the_report_down(tmp_path: Path) -> None:
    BENCHMARKS.register(NAME, BrokenView)
    try:
        run = tally_run(tmp_path / "run")
        page = render_html(run, n_resamples=50)
        doc = run_overview(run, n_resamples=50)
    finally:
        BENCHMARKS.unregister(NAME)
    errors = [b["view"].get("view_error", "") for b in page_bodies(page)]
    assert len(errors) == ITEMS and all(e.startswith("KeyError") for e in errors)
    assert "2 x 9" in stored_outputs(page)  # the stored output is still shown
    assert "breakdowns failed: RuntimeError: no tools here" in doc["note"]
    assert len(RunStore(run).latest()) == ITEMS
