"""ToolTalk's runner sends no temperature, token limit, seed or tool choice: the default mode
leaves them unset (not sent), a value the user sets is sent and the run is labelled, and
toolscore's own modes (strict, the demo) keep their greedy, bounded, seeded requests."""

from __future__ import annotations

from pathlib import Path

from support.child import run_in_child

from toolscore.benchmarks.base import Benchmark
from toolscore.benchmarks.demo import DemoBenchmark, data_dir
from toolscore.benchmarks.tooltalk.benchmark import REFERENCE_SAMPLING, ToolTalkBenchmark
from toolscore.models.anthropic_provider import build_request
from toolscore.models.openai.params import settings_and_drops
from toolscore.report.view import RunView
from toolscore.types import GenerateConfig, ToolSpec

TOOL = ToolSpec("Add", "adds", {"type": "object", "properties": {"a": {"type": "number"}}})


def request_settings(config: GenerateConfig, has_tools: bool) -> dict[str, object]:
    """The generation settings a chat model's request carries."""
    return settings_and_drops(config, has_tools)[0]


def _bench(**kwargs: object) -> ToolTalkBenchmark:
    return ToolTalkBenchmark(Path("unused"), **kwargs)  # type: ignore[arg-type]


def test_the_default_mode_sends_no_sampling_field() -> None:
    bench = _bench()
    config = bench.generate_config(0)
    assert request_settings(config, has_tools=True) == {}
    assert bench.config()["sampling"] == REFERENCE_SAMPLING
    assert bench.mode_label() == "reference"


def test_a_value_the_user_sets_is_sent_and_labelled() -> None:
    bench = _bench(max_tokens=700)
    assert request_settings(bench.generate_config(0), has_tools=True) == {"max_tokens": 700}
    assert "deviates from the reference: max_tokens=700" in bench.config()["sampling"]
    assert bench.mode_label() == "reference, deviating sampling"


def test_toolscores_own_modes_keep_their_sampling() -> None:
    own = {"tool_choice": "auto", "temperature": 0.0, "max_tokens": 512, "seed": 0}
    assert request_settings(_bench(strict=True).generate_config(0), has_tools=True) == own
    demo = DemoBenchmark(data_dir(), max_tokens=512, seed=0)
    assert request_settings(demo.generate_config(0), has_tools=True) == own
    assert demo.mode_label() == "reference"


def test_model_arguments_label_a_reference_run_as_deviating() -> None:
    config = {"benchmark": "tooltalk", "benchmark_config": {"sampling": REFERENCE_SAMPLING},
              "model_args": {"temperature": 0.0}}
    view = RunView(config, Benchmark, Benchmark(), False)
    assert view.mode() == "deviating sampling (model arguments temperature=0.0)"
    assert RunView({**config, "model_args": {}}, Benchmark, Benchmark(), False).mode() is None
    # options and model arguments both set: one label naming the model arguments
    both = {**config, "benchmark_config": {"sampling": "deviates from the reference: seed=1 "
                                           "sent", "mode": "reference, deviating sampling"}}
    assert RunView(both, Benchmark, Benchmark(), False).mode() == \
        "reference, deviating sampling (model arguments temperature=0.0)"


def test_other_providers_and_the_local_engine_take_unset_values() -> None:
    unset = GenerateConfig(temperature=None, max_tokens=None, seed=None, tool_choice=None)
    request = build_request("claude", [], [TOOL], unset)
    assert "temperature" not in request and "tool_choice" not in request
    # the embedded engine (native code: in a child process) reads an unset choice as "auto"
    said = run_in_child("benchmarks.tooltalk.test_reference_sampling:engine_plans_alike")
    assert said.strip() == "alike"


def engine_plans_alike() -> None:
    from toolscore.models.local.engine import plan

    unset = GenerateConfig(temperature=None, max_tokens=None, seed=None, tool_choice=None)
    auto = plan([TOOL], GenerateConfig(tool_choice="auto", max_tokens=None))
    print("alike" if plan([TOOL], unset) == auto else "different")
