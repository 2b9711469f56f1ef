"""A run whose stderr is not a terminal prints plain progress lines every few seconds (issue 11):
a long run in a log must not look like a hang, and a short one must print nothing."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from toolscore import Benchmark, Column, Sample
from toolscore.records import RunStore
from toolscore.runs.progress import Progress, mode_of
from toolscore.runs.runner import RunOptions, execute_run


class Sleepy(Benchmark):
    """Every sample takes ``delay`` seconds, like a slow model call."""

    name = "sleepy-test"
    columns = [Column("n", "n", "count")]

    def __init__(self, delay: float, n: int = 4) -> None:
        super().__init__()
        self.delay, self.n = delay, n

    def samples(self) -> list[Sample]:
        return [Sample(f"s{i}", i, {}) for i in range(self.n)]

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        await asyncio.sleep(self.delay)
        return {"i": sample.data}

    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        return {}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return {"n": len(records)}

    def uses_model(self) -> bool:
        return False


def _run(tmp_path: Any, delay: float, interval: float, monkeypatch: Any) -> str:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr("toolscore.runs.progress.LINE_INTERVAL_S", interval)
    store = RunStore(tmp_path / "run")
    options = RunOptions(max_concurrency=1, progress="lines")
    # the interval is read when the Progress is made, so patching the module default works
    summary = asyncio.run(execute_run(Sleepy(delay), None, store, options))
    assert summary.done == 4
    return stream.getvalue()


def test_a_long_run_prints_plain_lines_and_a_final_count(tmp_path: Any, monkeypatch: Any) -> None:
    out = _run(tmp_path, delay=0.15, interval=0.1, monkeypatch=monkeypatch)
    lines = out.splitlines()
    assert len(lines) >= 3, out
    assert all(line.startswith("progress: ") for line in lines)
    assert "\x1b" not in out  # plain text, no terminal control sequences
    assert lines[-1].startswith("progress: 4/4 samples  errors 0")


def test_a_short_run_prints_nothing(tmp_path: Any, monkeypatch: Any) -> None:
    assert _run(tmp_path, delay=0.0, interval=5.0, monkeypatch=monkeypatch) == ""


def test_modes() -> None:
    assert [mode_of(p) for p in (True, "bar", "lines", False, None)] == [
        "bar", "bar", "lines", "off", "off"]
    with pytest.raises(ValueError, match="progress must be"):
        mode_of("spinner")
    assert Progress(False, None).mode == "off"  # type: ignore[arg-type]
