"""The rule is declared, not listed: an option declared ``runs_code`` is withheld from every
stored run of every benchmark, toolscore's or a new one, without the benchmark doing more."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolscore
from toolscore.benchmarks.base import Benchmark, Sample, option
from toolscore.benchmarks.registry import benchmark_class
from toolscore.entrypoints import BENCHMARKS

MARKER: list[Path] = []


@dataclass
class HookOptions:
    hook: str | None = option(None, "A command run when the benchmark is built.",
                              runs_code="runs this command")
    size: int = option(2, "Samples.")


class HookBenchmark(Benchmark):
    """A benchmark of someone else's making whose option runs a command when it is built
    (here: writes the marker)."""

    name = "hooked"
    Options = HookOptions

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> HookBenchmark:
        if options.hook:
            MARKER[0].write_text(options.hook)
        return cls(options.size)

    def __init__(self, size: int) -> None:
        self.size = size

    def uses_model(self) -> bool:
        return False

    def samples(self) -> list[Sample]:
        return [Sample(f"s{i}", i) for i in range(self.size)]

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> Any:
        return {"value": sample.data}

    def score(self, output: Any, sample: Sample) -> dict[str, Any]:
        return {"even": output["value"] % 2 == 0}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return {"overall": {"n": len(records)}}


@pytest.fixture
def hooked(tmp_path: Path) -> Any:
    BENCHMARKS.register("hooked", HookBenchmark)
    MARKER[:] = [tmp_path / "marker"]
    yield tmp_path / "marker"
    BENCHMARKS.unregister("hooked")


def test_a_new_benchmarks_declared_option_is_never_acted_on_from_a_run(
        hooked: Path, tmp_path: Path) -> None:
    run = toolscore.evaluate("hooked", hook="touch it", out=tmp_path / "run")
    assert hooked.read_text() == "touch it"  # given by the caller: it runs
    hooked.unlink()
    from toolscore.report.view import run_view

    view = run_view(run.config.to_dict())  # a report: shown generically, nothing run
    assert not view.rebuilt and "hook" in (view.note or "")
    assert toolscore.load_run(run.path).records
    with pytest.raises(ValueError, match=r"hook 'touch it' runs this command.*-T hook="):
        toolscore.score(run.path)
    with pytest.raises(ValueError, match="--hook 'touch it'.*--allow-run-commands"):
        toolscore.resume(run.path)
    assert not hooked.exists()
    toolscore.score(run.path, hook="touch it")  # repeated by the caller
    assert hooked.exists()
    hooked.unlink()
    toolscore.resume(run.path, allow_run_commands=True)
    assert hooked.exists()


def test_every_option_that_starts_or_loads_something_is_declared() -> None:
    """toolscore's own: an MCP server command, plugin sets, the free-running protocol (an
    agent driven over HTTP), a user model's provider."""
    declared = {name: {f.name for f in dataclasses.fields(benchmark_class(name).Options)
                       if f.metadata.get("runs_code")}
                for name in ("tooltalk", "demo", "autode", "tooleval", "tooleval-winrate",
                             "acs")}
    assert declared == {"tooltalk": {"mcp_server", "plugins", "protocol"},
                        "demo": {"mcp_server", "plugins", "protocol"},
                        "autode": {"user_model"}, "tooleval": set(), "tooleval-winrate": set(),
                        "acs": set()}
    tooltalk = benchmark_class("tooltalk")
    assert tooltalk.runs_code({"plugins": ["tooltalk"], "protocol": "reference"}) == {}
    assert set(tooltalk.runs_code({"plugins": ["someone-elses"], "mcp_server": "x",
                                   "protocol": "free-running"})) == {"plugins", "mcp_server",
                                                                     "protocol"}
    autode = benchmark_class("autode")
    assert autode.runs_code({"user_model": "openai/gpt-4o-mini"}) == {}
    # a provider installed nowhere loads nothing (building the model says it is unknown);
    # one from another package is withheld: test_foreign_code.py
    assert autode.runs_code({"user_model": "nowhere/model"}) == {}
