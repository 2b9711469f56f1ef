"""A sample whose scoring fails (the embedder's cache on a full disk, a scorer's bug) is an
error record like any harness failure: the other samples and the run go on, the output is
kept for inspection, and the resume scores it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import toolscore as api
from toolscore.benchmarks.base import parse_options
from toolscore.benchmarks.demo import DemoBenchmark, DemoOptions


class _FailingScorer(DemoBenchmark):
    fail = True

    def score(self, output: Any, sample: Any) -> Any:
        if self.fail and sample.id == "demo-shopping-list":
            raise OSError(28, "No space left on device")
        return super().score(output, sample)


def test_a_scoring_failure_is_an_error_record_and_the_resume_scores_it(tmp_path: Path) -> None:
    bench = _FailingScorer.create(None, parse_options(DemoOptions, {"embedder": "hashing"},
                                                      "demo"))
    run = api.evaluate(bench, "oracle", out=tmp_path / "run", cache=None)
    errored = [r for r in run.records if r["status"] != "ok"]
    assert [r["id"] for r in errored] == ["demo-shopping-list"]
    assert errored[0]["error"] == ("harness: scoring: OSError: [Errno 28] No space left on "
                                   "device") and errored[0]["output"]
    assert run.error_count() == (1, len(run.records))
    bench.fail = False
    again = api.resume(tmp_path / "run", benchmark=bench)
    assert again.summary["run_now"] == 1 and again.error_count()[0] == 0

