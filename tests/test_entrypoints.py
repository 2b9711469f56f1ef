"""The extension registries: toolscore's own entries are found through its entry points like any
package's, names registered at run time work everywhere a name does, and every failure is one
line that says what is known or which distribution is at fault. Fake distributions are real
``*.dist-info`` folders on sys.path (see ``support.dists``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.dists import install

import toolscore
from toolscore.benchmarks.base import Benchmark, Column, Sample, option
from toolscore.benchmarks.demo import DemoBenchmark
from toolscore.benchmarks.registry import benchmark_class, list_benchmarks, make_benchmark
from toolscore.entrypoints import BENCHMARKS, GROUPS, PROVIDERS, ExtensionError, Registry

BUILTIN_BENCHMARKS = {"demo", "tooltalk", "autode", "tooleval", "acs"}

BENCHMARK_MODULE = '''
from toolscore.benchmarks.base import Benchmark


class Listed(Benchmark):
    name = "listed"
    description = "an installed benchmark"


NOT_A_BENCHMARK = 42


def __getattr__(name):
    if name == "Exploding":
        raise RuntimeError("no benchmark today")
    raise AttributeError(name)
'''


@dataclass
class CountOptions:
    n: int = option(3, "How many samples.")


class CountBenchmark(Benchmark):
    """A benchmark that calls no model: sample i scores 1 when i is even."""

    name = "count"
    description = "counts (registered at run time)"
    Options = CountOptions
    columns = [Column("even", "even")]

    def __init__(self, n: int) -> None:
        self.n = n

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> CountBenchmark:
        return cls(options.n)

    def uses_model(self) -> bool:
        return False

    def samples(self) -> list[Sample]:
        return [Sample(str(i), i) for i in range(self.n)]

    async def run_sample(self, sample: Sample, model: Any, epoch: int) -> Any:
        return {"value": sample.data}

    def score(self, output: Any, sample: Sample) -> dict[str, Any]:
        return {"even": float(output["value"] % 2 == 0)}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        scores = [r["scores"]["even"] for r in records if r["status"] == "ok"]
        return {"overall": {"even": sum(scores) / len(scores), "n": len(scores)}}


@pytest.fixture
def registered() -> Any:
    BENCHMARKS.register("count", CountBenchmark)
    yield CountBenchmark
    BENCHMARKS.unregister("count")


def test_builtins_are_found_through_their_entry_points() -> None:
    assert set(BENCHMARKS.names()) >= BUILTIN_BENCHMARKS
    assert PROVIDERS.names() == ["agent-http", "anthropic", "litellm", "local", "openai",
                                 "openai-responses", "oracle", "replay"]
    demo = BENCHMARKS.extension("demo")
    assert demo.builtin and demo.target == "toolscore.benchmarks.demo:DemoBenchmark"
    assert BENCHMARKS.listing()["demo"] == "toolscore.benchmarks.demo:DemoBenchmark (built-in)"
    assert BENCHMARKS.load("demo") is DemoBenchmark
    assert benchmark_class("demo") is DemoBenchmark
    assert set(GROUPS.values()) == {"toolscore.benchmarks", "toolscore.providers",
                                    "toolscore.judges", "toolscore.plugins",
                                    "toolscore.exports"}


def test_runtime_registration_works_wherever_a_name_does(registered: Any,
                                                         tmp_path: Path) -> None:
    assert "count" in BENCHMARKS.names()
    assert BENCHMARKS.listing()["count"] == "registered at run time"
    assert list_benchmarks()["count"] == "counts (registered at run time)"
    assert make_benchmark("count", n=4).n == 4
    run = toolscore.evaluate("count", out=tmp_path / "run", n="5")  # CLI strings are coerced
    assert run.metrics == {"overall": {"even": 0.6, "n": 5}}
    assert run.config.benchmark == "count" and run.config.options == {"n": 5}
    assert toolscore.score(run.path).metrics == run.metrics  # rebuilt from run.json by name
    BENCHMARKS.unregister("count")
    with pytest.raises(ExtensionError, match="unknown benchmark 'count'"):
        BENCHMARKS.load("count")


def test_a_separate_registry_sees_only_its_group() -> None:
    registry = Registry("toolscore.nothing-here", "gadget")
    assert registry.names() == [] and registry.listing() == {}
    registry.register("g", object)
    assert registry.load("g") is object and registry.names() == ["g"]
    with pytest.raises(ExtensionError, match=r"^unknown gadget 'h'; known: g$"):
        registry.load("h")
    registry.unregister("g")
    with pytest.raises(ExtensionError, match=r"^unknown gadget 'g'; known: none$"):
        registry.load("g")


def test_unknown_name_lists_the_known_ones(registered: Any) -> None:
    with pytest.raises(ExtensionError) as err:
        make_benchmark("nope")
    message = str(err.value)
    assert message.startswith("unknown benchmark 'nope'; known: ") and "\n" not in message
    known = message.split("known: ")[1].split(", ")
    assert BUILTIN_BENCHMARKS | {"count"} <= set(known) and known == sorted(known)


def install_benchmarks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       entry_points: dict[str, str], dist: str = "bench_dist") -> str:
    return install(tmp_path, monkeypatch, entry_points, dist=dist,
                   module_source=BENCHMARK_MODULE, group="toolscore.benchmarks")


def test_an_installed_benchmark_is_listed_with_its_distribution(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = install_benchmarks(tmp_path, monkeypatch, {"listed": "{module}:Listed"})
    assert BENCHMARKS.listing()["listed"] == f"{module}:Listed (bench-dist 0.1)"
    extension = BENCHMARKS.extension("listed")
    assert not extension.builtin and extension.dist_id == "bench-dist 0.1"
    assert benchmark_class("listed").description == "an installed benchmark"
    assert list_benchmarks()["listed"] == "an installed benchmark"


@pytest.mark.parametrize(("target", "expected"), [
    ("missing_module_{module}:Listed", "ModuleNotFoundError"),
    ("{module}:Missing", "AttributeError"),
    ("{module}:Exploding", "RuntimeError: no benchmark today"),
])
def test_a_broken_entry_point_names_its_distribution(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     target: str, expected: str) -> None:
    module = install_benchmarks(tmp_path, monkeypatch, {"broken": target}, dist="broken_dist")
    assert "broken" in BENCHMARKS.names()  # listing imports nothing, so it is still listed
    with pytest.raises(ExtensionError) as err:
        make_benchmark("broken")
    message = str(err.value)
    assert message.startswith("cannot load benchmark 'broken' from distribution "
                              "'broken-dist 0.1'") and "\n" not in message
    assert f"(entry point broken = {target.format(module=module)})" in message
    assert expected in message
    assert "cannot be loaded" in list_benchmarks()["broken"]  # the listing survives it


def test_an_entry_point_that_is_not_a_benchmark(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    install_benchmarks(tmp_path, monkeypatch, {"number": "{module}:NOT_A_BENCHMARK"})
    with pytest.raises(ExtensionError, match="benchmark 'number': the entry point gives 42, "
                                             "not a toolscore.benchmarks.base.Benchmark"):
        benchmark_class("number")


def test_builtin_names_cannot_be_taken_and_clashes_are_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = install_benchmarks(tmp_path, monkeypatch, {"demo": "{module}:Listed"},
                                dist="squatter")
    assert benchmark_class("demo") is DemoBenchmark
    assert BENCHMARKS.listing()["demo"].endswith(
        f"; ignored, the name is built-in: {module}:Listed (squatter 0.1)")
    install_benchmarks(tmp_path, monkeypatch, {"twice": "{module}:Listed"}, dist="first")
    install_benchmarks(tmp_path, monkeypatch, {"twice": "{module}:Listed"}, dist="second")
    with pytest.raises(ExtensionError) as err:
        benchmark_class("twice")
    message = str(err.value)
    assert message.startswith("benchmark 'twice' is declared by several distributions: ")
    assert message.endswith("; uninstall all but one")
    assert "'first 0.1'" in message and "'second 0.1'" in message
