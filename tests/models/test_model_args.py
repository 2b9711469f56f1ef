"""Run-level model arguments (issue 10, item 10): validated, applied over the benchmark's
settings, part of the cache key only when set, mapped per provider and model family, and
recorded in run.json so a resume sends the same requests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.models.anthropic_provider import build_request as anthropic_request
from toolscore.models.cache import cache_key
from toolscore.models.factory import make_client
from toolscore.models.modelargs import ModelArgs, parse_pairs
from toolscore.models.openai.params import model_family
from toolscore.models.openai.provider import build_request, request_body
from toolscore.records import RunStoreError
from toolscore.types import GenerateConfig, Message, ToolSpec

IDENTITY = {"provider": "openai", "model": "gpt-4o", "base_url": ""}
HI = [Message(role="user", content="hi")]
TOOLS = [ToolSpec("f", "d")]
BENCHMARK = GenerateConfig(temperature=0.0, max_tokens=512, seed=0)  # what ToolTalk asks


def test_unset_arguments_keep_the_cache_keys_of_earlier_versions() -> None:
    # Keys computed with toolscore before model arguments existed (commit 8cf0fe8).
    assert cache_key(IDENTITY, HI, TOOLS, GenerateConfig()) == (
        "1e71d8b46e1badf033eb2ce293ae083ba030000c142926ce6757011d70d73c65")
    old = GenerateConfig(temperature=0.7, max_tokens=None, seed=None, top_p=0.9,
                         tool_choice="required", epoch=2)
    assert cache_key(IDENTITY, HI, [], old) == (
        "df30f72856a5489f19380d4d59c3c287d5fe498da3d56c876b5b98c555625cb9")
    assert ModelArgs().apply(BENCHMARK) is BENCHMARK


@pytest.mark.parametrize("args", [
    {"temperature": 1.0}, {"max_tokens": 2000}, {"seed": 7}, {"top_p": 0.5},
    {"reasoning_effort": "low"}, {"reasoning_effort": "high"}, {"presence_penalty": 0.1},
    {"extra_body": {"x": 1}}, {"extra_body": {"x": 2}},
])
def test_every_argument_changes_the_cache_key(args: dict) -> None:
    base = cache_key(IDENTITY, HI, TOOLS, BENCHMARK)
    keys = {cache_key(IDENTITY, HI, TOOLS, ModelArgs.from_dict(a).apply(BENCHMARK))
            for a in ({**args}, {})}
    assert len(keys) == 2 and base in keys


def test_an_argument_equal_to_the_benchmarks_value_keeps_its_key() -> None:
    same = ModelArgs.from_dict({"temperature": 0, "max_tokens": 512}).apply(BENCHMARK)
    assert cache_key(IDENTITY, HI, TOOLS, same) == cache_key(IDENTITY, HI, TOOLS, BENCHMARK)


def test_arguments_replace_only_what_they_set() -> None:
    config = GenerateConfig(temperature=0.0, max_tokens=512, seed=3, tool_choice="required",
                            epoch=4, extra={"stop": ["x"]})
    got = ModelArgs.from_dict({"max_completion_tokens": 4096, "reasoning_effort": "low",
                               "frequency_penalty": 0.5}).apply(config)
    assert (got.temperature, got.max_tokens, got.seed, got.tool_choice, got.epoch) == (
        0.0, 4096, 3, "required", 4)
    assert got.reasoning_effort == "low"
    assert got.extra == {"stop": ["x"], "frequency_penalty": 0.5}


@pytest.mark.parametrize("args, message", [
    ({"temperature": "hot"}, "'temperature': 'hot' is not a number"),
    ({"temperature": True}, "'temperature': True is not a number"),
    ({"temperature": -1}, "'temperature': -1 must be >= 0.0"),
    ({"top_p": 1.5}, "'top_p': 1.5 must be between 0.0 and 1.0"),
    ({"max_tokens": 0}, "'max_tokens': 0 must be >= 1"),
    ({"max_tokens": 1.5}, "'max_tokens': 1.5 is not an integer"),
    ({"seed": "x"}, "'seed': 'x' is not an integer"),
    ({"reasoning_effort": ""}, "'reasoning_effort': '' is not a level name"),
    ({"reasoning_effort": 3}, "'reasoning_effort': 3 is not a level name"),
    ({"messages": []}, "'messages': set by the benchmark's protocol"),
    ({"tool_choice": "none"}, "'tool_choice': set by the benchmark's protocol"),
    ({"stream": True}, "'stream': set by the benchmark's protocol"),
    ({"max_tokens": 5, "max_completion_tokens": 6}, "'max_completion_tokens': given twice"),
    ({"bad key": 1}, "'bad key': not a parameter name"),
    ({"extra_body": [1]}, "'extra_body': [1] is not a JSON object"),
    ({"stop": float("nan")}, "'stop': not a JSON value"),
])
def test_bad_arguments_are_one_line_errors(args: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        ModelArgs.from_dict(args)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_pairs_are_read_as_json_else_text() -> None:
    assert parse_pairs(["top_p=0.9", "reasoning-effort=low", 'extra_body={"x": 1}',
                        'stop=["a","b"]', "seed=3", "user=alice=bob"]) == {
        "top_p": 0.9, "reasoning_effort": "low", "extra_body": {"x": 1}, "stop": ["a", "b"],
        "seed": 3, "user": "alice=bob"}
    with pytest.raises(ValueError, match="-M 'top_p': expected KEY=VALUE"):
        parse_pairs(["top_p"])
    with pytest.raises(ValueError, match="given twice"):
        parse_pairs(["seed=1", "seed=2"])


@pytest.mark.parametrize("model, family", [
    ("gpt-4o", "chat"), ("gpt-4o-mini", "chat"), ("gpt-3.5-turbo", "chat"),
    ("gpt-5-chat-latest", "chat"), ("llama-3.1-8b", "chat"), ("omni-moderation", "chat"),
    ("o1", "reasoning"), ("o1-2024-12-17", "reasoning"), ("o3-mini", "reasoning"),
    ("o4-mini", "reasoning"), ("gpt-5", "reasoning"), ("gpt-5-mini", "reasoning"),
    ("gpt-5.1", "reasoning"), ("openai/o3-mini", "reasoning"), ("O3", "reasoning"),
    ("o1-mini", "o1-mini"), ("o1-preview-2024-09-12", "o1-mini"),
])
def test_model_families(model: str, family: str) -> None:
    assert model_family(model).name.startswith(family)


def test_a_chat_model_gets_what_was_asked_in_the_order_it_always_had() -> None:
    config = ModelArgs.from_dict({"top_p": 0.9, "reasoning_effort": "low",
                                  "presence_penalty": 0.1}).apply(BENCHMARK)
    req = build_request("gpt-4o", HI, TOOLS, config)
    assert list(req) == ["model", "messages", "tools", "tool_choice", "temperature",
                         "max_tokens", "seed", "top_p", "reasoning_effort", "presence_penalty"]
    assert (req["temperature"], req["max_tokens"], req["top_p"]) == (0.0, 512, 0.9)
    plain = build_request("gpt-4o", HI, TOOLS, BENCHMARK)
    assert "reasoning_effort" not in plain and "max_completion_tokens" not in plain


def test_a_reasoning_model_gets_max_completion_tokens_and_no_sampling_parameters() -> None:
    config = ModelArgs.from_dict({"reasoning_effort": "high", "top_p": 0.5,
                                  "presence_penalty": 0.1, "user": "u1"}).apply(BENCHMARK)
    req = build_request("o3-mini", HI, TOOLS, config)
    assert req["max_completion_tokens"] == 512 and "max_tokens" not in req
    for dropped in ("temperature", "top_p", "presence_penalty"):
        assert dropped not in req
    assert (req["reasoning_effort"], req["seed"], req["user"]) == ("high", 0, "u1")
    older = build_request("o1-mini", HI, [], config)
    assert "reasoning_effort" not in older and older["max_completion_tokens"] == 512
    forced = build_request("o3-mini", HI, [], config, max_tokens_param="max_tokens")
    assert forced["max_tokens"] == 512  # an explicit provider option wins over the table


def test_extra_body_is_merged_last_and_never_dropped() -> None:
    config = ModelArgs.from_dict({"extra_body": {"temperature": 1, "x": {"y": 2}},
                                  "seed": 5}).apply(BENCHMARK)
    req = build_request("o3", HI, [], config)
    assert (req["temperature"], req["x"], req["seed"]) == (1, {"y": 2}, 5)
    assert "extra_body" not in req


@pytest.mark.parametrize("model", ["gpt-4o", "o3-mini", "o1-mini"])
def test_the_http_body_is_the_request(model: str) -> None:
    config = ModelArgs.from_dict({"reasoning_effort": "low", "top_p": 0.3, "stop": ["z"],
                                  "extra_body": {"k": 1}}).apply(BENCHMARK)
    for tools in (TOOLS, []):
        assert json.loads(request_body(model, HI, tools, config)) == build_request(
            model, HI, tools, config)


def test_anthropic_maps_what_applies_and_refuses_reasoning_effort() -> None:
    config = ModelArgs.from_dict({"max_tokens": 900, "temperature": 0.5, "top_p": 0.8,
                                  "top_k": 5, "seed": 9}).apply(BENCHMARK)
    req = anthropic_request("claude-x", HI, TOOLS, config)
    assert (req["max_tokens"], req["temperature"], req["top_p"], req["top_k"]) == (
        900, 0.5, 0.8, 5)
    assert "seed" not in req
    with pytest.raises(ValueError, match="anthropic/ models take no reasoning_effort"):
        anthropic_request("claude-x", HI, TOOLS,
                          ModelArgs.from_dict({"reasoning_effort": "low"}).apply(BENCHMARK))


def test_anthropic_refuses_reasoning_effort_before_any_call() -> None:
    pytest.importorskip("anthropic")
    with pytest.raises(ValueError, match="take no reasoning_effort"):
        make_client("anthropic/claude-x", api_key="k", cache=None,
                    model_args={"reasoning_effort": "low"})


def _generate(client, config: GenerateConfig):
    return asyncio.run(client.generate(HI, TOOLS, config))


def test_the_server_receives_the_mapped_request_and_the_cache_tells_settings_apart(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(model="o3-mini") as srv:
        low = make_client("openai/o3-mini", base_url=srv.base_url, cache=cache,
                          model_args={"reasoning_effort": "low", "max_tokens": 2048})
        _generate(low, BENCHMARK)
        sent = srv.received[-1]
        assert sent["max_completion_tokens"] == 2048 and sent["reasoning_effort"] == "low"
        assert "temperature" not in sent and "max_tokens" not in sent
        _generate(low, BENCHMARK)  # the same settings: a cache hit
        assert srv.requests == 1
        high = make_client("openai/o3-mini", base_url=srv.base_url, cache=cache,
                           model_args={"reasoning_effort": "high", "max_tokens": 2048})
        _generate(high, BENCHMARK)  # another setting never reuses the first one's reply
        assert srv.requests == 2 and srv.received[-1]["reasoning_effort"] == "high"
        plain = make_client("openai/o3-mini", base_url=srv.base_url, cache=cache)
        _generate(plain, BENCHMARK)
        assert srv.requests == 3 and "reasoning_effort" not in srv.received[-1]
        assert srv.received[-1]["max_completion_tokens"] == 512
        # the same model in another role (a user agent, a judge) keeps the arguments
        _generate(low.with_role("user"), GenerateConfig(max_tokens=256, epoch=1))
        assert srv.received[-1]["max_completion_tokens"] == 2048


def test_a_chat_models_request_is_unchanged_without_arguments(tmp_path: Path) -> None:
    with FakeOpenAIServer() as srv:
        _generate(make_client("openai/fake", base_url=srv.base_url, cache=None), BENCHMARK)
        assert {k: v for k, v in srv.received[-1].items() if k not in ("messages", "tools")} \
            == {"model": "fake", "tool_choice": "auto", "temperature": 0.0,
                "max_tokens": 512, "seed": 0}


def test_evaluate_records_the_arguments_and_resume_sends_them_again(tmp_path: Path) -> None:
    args = {"temperature": 0.7, "top_p": 0.9, "extra_body": {"x": 1}}
    out = tmp_path / "run"
    with FakeOpenAIServer() as srv:
        toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                           out=out, limit=1, embedder="hashing", model_args=args)
        assert srv.requests > 0
        for sent in srv.received:
            assert (sent["temperature"], sent["top_p"], sent["x"]) == (0.7, 0.9, 1)
            assert sent["max_tokens"] == 512  # unset: the benchmark's value stands
        stored = json.loads((out / "run.json").read_text())
        assert stored["model_args"] == args
        (out / "samples.jsonl").write_text("")
        before = srv.requests
        toolscore.resume(out)
        assert srv.requests > before
        for sent in srv.received[before:]:
            assert (sent["temperature"], sent["top_p"], sent["x"]) == (0.7, 0.9, 1)


def test_a_bad_stored_argument_names_run_json(tmp_path: Path) -> None:
    out = tmp_path / "run"
    toolscore.evaluate("demo", "oracle", cache=None, out=out, limit=1, embedder="hashing")
    doc = json.loads((out / "run.json").read_text())
    assert doc["model_args"] == {}
    doc["model_args"] = {"temperature": "hot"}
    (out / "run.json").write_text(json.dumps(doc))
    with pytest.raises(RunStoreError, match="run.json: field 'model_args'.*'temperature'"):
        toolscore.resume(out)
