"""Every option a benchmark declares reaches the benchmark it builds (``bench.options``, what it
reads) and the run's run.json: set to a value other than its default, it is stored as set; an
option that cannot be set here without starting something or naming a user's own file is
stored as its default. Covers every registered benchmark and the example plugin package's
(``examples/plugin_package``, loaded from its source folder)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from support.data import dataset, present

from toolscore.benchmarks.options import options_to_json
from toolscore.benchmarks.registry import benchmark_class, list_benchmarks, make_benchmark
from toolscore.entrypoints import BENCHMARKS
from toolscore.runs.api import evaluate

ROOT = Path(__file__).resolve().parents[2]
COUNTER_SRC = ROOT / "examples" / "plugin_package" / "src"
TOOLTALK_LIKE = ("tooltalk", "demo", "counter")
DATASETS = {"tooltalk": "tooltalk", "autode": "autode", "tooleval": "tooleval",
            "tooleval-winrate": "tooleval", "acs": "acs", "bfcl": "bfcl"}


def _answers() -> Path:
    return dataset("tooleval") / "converted" / "gpt-3.5-turbo_CoT"


def _demo_data() -> Path:
    from toolscore.benchmarks.demo import data_dir

    return data_dir()


# (benchmark, option) -> value, or (value, other options it needs, data folder it needs);
# "default": stored as its default (it would start a process, or it names a user's file)
GIVEN: dict[tuple[str, str], Any] = {
    **{(b, "embedder"): "hashing" for b in TOOLTALK_LIKE},
    **{(b, "plugins"): lambda: (["demo"], {}, _demo_data()) for b in TOOLTALK_LIKE},
    **{(b, "mcp_server"): "default" for b in TOOLTALK_LIKE},
    ("autode", "user_model"): "oracle",
    ("autode", "user_base_url"): "http://127.0.0.1:9/v1",
    ("autode", "apis"): "default", ("autode", "scripts"): "default",
    **{("acs", k): (v, {"judge": "llm"}, None)
       for k, v in (("shots", 2), ("shot_reasons", True), ("votes", 3))},
    ("acs", "judge_config"): "default", ("acs", "csv"): "default",
    ("acs", "judge_base_url"): "http://127.0.0.1:9/v1",
    ("tooleval", "answers"): lambda: (_answers(), {}, None),
    **{(b, k): "default" for b in ("tooleval", "tooleval-winrate")
       for k in ("test_ids", "evaluator", "judge_config")},
    **{(b, "subset"): ["G1_tool"] for b in ("tooleval", "tooleval-winrate")},
    ("tooleval-winrate", "candidate"): lambda: (_answers(), {"reference": _answers()}, None),
    ("tooleval-winrate", "reference"): lambda: (_answers(), {"candidate": _answers()}, None),
    ("bfcl", "category"): ["live_simple"],
    ("bfcl", "mode"): "default",  # one mode so far
}
# what a benchmark needs whatever the option
BASE: dict[str, Any] = {"tooleval-winrate": lambda: {"candidate": _answers(),
                                                     "reference": _answers()}}


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """The example package's benchmark, registered as an installed one would be."""
    monkeypatch.syspath_prepend(str(COUNTER_SRC))
    from toolscore_counter.benchmark import CounterBenchmark

    BENCHMARKS.register("counter", CounterBenchmark)
    try:
        yield CounterBenchmark
    finally:
        BENCHMARKS.unregister("counter")


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def _other(hint: Any, default: Any) -> Any:
    """A valid value of type ``hint`` other than ``default``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _other(inner[0], default)
    if typing.get_origin(hint) is Literal:
        return next(a for a in typing.get_args(hint) if a != default)
    if hint is bool:
        return not default
    if hint is int:
        return (default or 2) + 1
    if hint is float:
        return 0.5 if default != 0.5 else 0.25
    raise AssertionError(f"no value chosen for type {hint}: add it to GIVEN")


def _cases(name: str, cls: type) -> Iterator[tuple[str, Any, dict[str, Any], Any]]:
    """(option, value or "default", other options, data folder) for each declared option."""
    hints = typing.get_type_hints(cls.Options)
    for f in dataclasses.fields(cls.Options):
        if f.metadata.get("cli") is False:
            continue  # Python only (an object): not stored in run.json
        given = GIVEN.get((name, f.name))
        if callable(given):
            given = given()
        if isinstance(given, tuple):
            yield f.name, *given
        elif given is not None:
            yield f.name, given, {}, None
        else:
            yield f.name, _other(hints[f.name], _default(f)), {}, None


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _check_every_option(name: str) -> None:
    cls = benchmark_class(name)
    if name in DATASETS and not present(DATASETS[name]):
        dataset(DATASETS[name])  # skips (or fails when data is required)
    base = BASE.get(name, dict)()
    default = make_benchmark(name, download=False, **base)
    stored = options_to_json(default.options)
    assert stored == options_to_json(cls.Options(**base)), name
    for option, value, extra, data in _cases(name, cls):
        if value == "default":
            assert option in stored, (name, option)
            continue
        bench = make_benchmark(name, data, download=False, **{**base, **extra, option: value})
        assert isinstance(bench.options, cls.Options), name
        assert options_to_json(bench.options)[option] == _json(value), (name, option)
        bench.config()  # the configuration run.json stores is derived from them


@pytest.mark.parametrize("name", [n for n in list_benchmarks() if n != "counter"])
def test_every_declared_option_reaches_the_benchmark(name: str) -> None:
    _check_every_option(name)


def test_the_example_packages_benchmark_takes_every_option(counter: type) -> None:
    from toolscore.benchmarks.tooltalk.options import ToolTalkOptions

    # ToolTalk's class over the package's data and plugin: ToolTalk's options, all of them
    assert {f.name for f in dataclasses.fields(counter.Options)} >= {
        f.name for f in dataclasses.fields(ToolTalkOptions)}
    _check_every_option("counter")


@pytest.mark.parametrize("name", ["demo", "counter"])
def test_run_json_stores_the_options_the_benchmark_ran_with(name: str, counter: type,
                                                            tmp_path: Path) -> None:
    given = {"split": "easy", "tools": "exact", "strict": True, "embedder": "hashing",
             "max_calls_per_turn": 5, "max_tokens": 100, "seed": 1, "call_api": "tools"}
    run = evaluate(name, "oracle", out=tmp_path / "run", limit=1, cache=None, **given)
    doc = json.loads((run.path / "run.json").read_text())
    cls = benchmark_class(name)
    assert doc["options"] == options_to_json(cls.Options(**given))
    config = doc["benchmark_config"]
    assert {k: config[k] for k in ("split", "tools", "strict", "embedder", "max_tokens", "seed",
                                   "max_calls_per_turn", "call_api")} == {
        **{k: v for k, v in given.items() if k != "max_calls_per_turn"},
        "max_calls_per_turn": 5}
    assert run.metrics is not None and run.error_count() == (0, 1)
