"""The Python API: toolscore.evaluate / resume / score / load_run, with a registered benchmark
or one defined right here, also from code that already runs an event loop (a notebook)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.data import needs

import toolscore
from toolscore import Benchmark, Column, Sample
from toolscore.benchmarks.base import OptionError
from toolscore.records import RunStore, RunStoreError


class Arithmetic(Benchmark):
    """Asks the model to add two numbers; the oracle cannot play (it needs ToolTalk steps), so a
    tiny provider of our own is used below through the model layer."""

    name = "arithmetic-test"
    columns = [Column("accuracy", "accuracy"), Column("n", "n", "count")]

    def samples(self) -> list[Sample]:
        return [Sample(f"q{i}", (i, i + 1), {"split": "even" if i % 2 == 0 else "odd"})
                for i in range(4)]

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
        return {"answer": sum(sample.data), "epoch": epoch}

    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        return {"correct": output["answer"] == sum(sample.data)}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        ok = [r for r in records if r["status"] == "ok"]
        return {"overall": {"accuracy": sum(r["scores"]["correct"] for r in ok) / len(ok),
                            "n": len(ok)},
                "errors": len(records) - len(ok)}

    def uses_model(self) -> bool:
        return False


def test_a_benchmark_object_runs_without_registration(tmp_path: Path) -> None:
    run = toolscore.evaluate(Arithmetic(), out=tmp_path / "run", epochs=2)
    assert run.config.model == "none" and run.config.epochs == 2
    assert run.metrics == {"overall": {"accuracy": 1.0, "n": 8}, "errors": 0}
    assert [(r["id"], r["epoch"]) for r in run.records][:3] == [("q0", 0), ("q0", 1), ("q1", 0)]
    frame = run.to_pandas()
    assert list(frame["correct"]) == [True] * 8 and set(frame["split"]) == {"even", "odd"}
    loaded = toolscore.load_run(tmp_path / "run")
    assert loaded.metrics == run.metrics and loaded.config == run.config
    # rescoring a run made with an unregistered benchmark needs the object again
    with pytest.raises(RunStoreError, match="pass the Benchmark object"):
        toolscore.score(tmp_path / "run")
    assert toolscore.score(tmp_path / "run", benchmark=Arithmetic()).metrics == run.metrics


@needs("tooltalk")
def test_evaluate_inside_a_running_event_loop(tmp_path: Path) -> None:
    async def notebook_cell() -> Any:
        return toolscore.evaluate("tooltalk", model="oracle", split="easy", embedder="hashing",
                                  cache=None, out=tmp_path / "run")

    run = asyncio.run(notebook_cell())
    assert run.metrics["easy"]["success_rate"] == 1.0
    assert run.metrics["easy"]["conversations"] == 28 and len(run.records) == 28
    assert run.config.options["split"] == "easy" and run.config.format_version == 2


@needs("tooltalk")
def test_evaluate_async_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run = asyncio.run(toolscore.evaluate_async("tooltalk", "oracle", split="easy", limit=5,
                                               embedder="hashing", cache=None, out=out))
    store = RunStore(out)
    lines = store.samples_path.read_text().splitlines()
    store.samples_path.write_text("\n".join(lines[:2]) + "\n")  # as if killed after two
    again = toolscore.resume(out)
    assert again.summary["skipped"] == 2 and again.summary["run_now"] == 3
    assert again.metrics == run.metrics
    with pytest.raises(RunStoreError, match="already a run directory"):
        toolscore.evaluate("tooltalk", "oracle", split="easy", out=out)


@needs("tooltalk")
def test_score_with_overrides_leaves_the_run_alone(tmp_path: Path) -> None:
    out = tmp_path / "run"
    toolscore.evaluate("tooltalk", "oracle", split="easy", embedder="hashing", cache=None,
                       out=out)
    before = (out / "scores.json").read_text()
    strict = toolscore.score(out, strict=True)
    assert strict.metrics["strict"] is True and strict.config.benchmark_config["strict"]
    assert (out / "scores.json").read_text() == before
    same = toolscore.score(out)
    assert json.loads(before) == same.metrics


@needs("tooltalk")
def test_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="unknown option 'splitt'.*split"):
        toolscore.evaluate("tooltalk", "oracle", splitt="easy", out=tmp_path / "a")
    with pytest.raises(OptionError, match="option 'split'.*'medium' is not one of"):
        toolscore.evaluate("tooltalk", "oracle", split="medium", out=tmp_path / "b")
    with pytest.raises(OptionError, match="needs a model"):
        toolscore.evaluate("tooltalk", split="easy", out=tmp_path / "c")
    with pytest.raises(LookupError, match="unknown benchmark 'nope'; known: .*tooltalk"):
        toolscore.evaluate("nope", "oracle")
    assert not any(tmp_path.iterdir())


@needs("tooltalk")
def test_a_run_written_by_0_1_0_still_loads_and_rescores(tmp_path: Path) -> None:
    """0.1.0 wrote run.json with a "request" (and options every benchmark had to swallow)."""
    out = tmp_path / "run"
    toolscore.evaluate("tooltalk", "oracle", split="easy", limit=3, embedder="hashing",
                       cache=None, out=out)
    config = json.loads((out / "run.json").read_text())
    old = {k: v for k, v in config.items() if k not in ("options", "data", "format_version",
                                                        "base_url", "timeout", "cache")}
    old["request"] = {"benchmark": "tooltalk", "model": "oracle", "data": config["data"],
                      "epochs": 1, "limit": 3, "max_concurrency": 8, "base_url": None,
                      "timeout": 120.0,
                      "options": {"split": "easy", "tools_mode": "all", "strict": False,
                                  "embedder": "hashing", "max_calls_per_turn": None}}
    (out / "run.json").write_text(json.dumps(old))
    loaded = toolscore.load_run(out)
    assert loaded.config.format_version == 1 and loaded.config.options["tools"] == "all"
    assert toolscore.score(out).metrics["easy"]["success_rate"] == 1.0
    (out / "run.json").write_text(json.dumps({"benchmark": "tooltalk", "model": "oracle"}))
    with pytest.raises(RunStoreError, match="field 'request': missing"):
        toolscore.load_run(out)
