"""ModelClient and the openai provider against the fake server: concurrency limits, usage and
latency accounting, request mapping, malformed tool calls passed through, record → replay."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import pytest
from support.testing.openai_server import (
    MALFORMED_ARGUMENTS,
    FakeOpenAIServer,
    ScriptedResponder,
    reply_to_completion,
    text_responder,
)

from toolscore.models import InfraError, ModelClient, RetryPolicy, get_model, list_models
from toolscore.models.openai.provider import parse_completion
from toolscore.types import ArgumentsError, GenerateConfig, Message, ToolCall, ToolSpec

TOOLS = [ToolSpec("add", "Add two numbers", {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]})]


def user(text: str) -> list[Message]:
    return [Message(role="system", content="You add."), Message(role="user", content=text)]


def fan_out(client: ModelClient, n: int, prefix: str = "q") -> list:
    async def go():
        return await asyncio.gather(*[client.generate(user(f"{prefix}{i}"), TOOLS)
                                      for i in range(n)])
    return asyncio.run(go())


def test_concurrency_limit_is_respected() -> None:
    with FakeOpenAIServer(latency=0.05) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url), max_concurrency=4)
        fan_out(client, 20)
        assert srv.requests == 20
        assert srv.max_in_flight == 4


def test_clients_of_one_model_share_the_limit() -> None:
    with FakeOpenAIServer(latency=0.05) as srv:
        model = get_model("openai/fake", base_url=srv.base_url)
        a = ModelClient(model, max_concurrency=3, role="assistant")
        b = ModelClient(model, max_concurrency=3, role="user")

        async def go():
            await asyncio.gather(*[c.generate(user(f"{c.role}{i}"), TOOLS)
                                   for i in range(8) for c in (a, b)])

        asyncio.run(go())
        assert srv.requests == 16 and srv.max_in_flight == 3


def test_32_concurrent_slow_requests_have_little_overhead() -> None:
    with FakeOpenAIServer(latency=0.1) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url), max_concurrency=64)
        fan_out(client, 4, "warm")  # connection set-up and lazy SDK imports
        start = time.monotonic()
        fan_out(client, 32)
        elapsed = time.monotonic() - start
        assert srv.max_in_flight == 32
        assert elapsed < 1.0, elapsed  # serial would be 3.2 s


def test_usage_and_latency_accounting() -> None:
    with FakeOpenAIServer(responder=text_responder("three word answer"), latency=0.02) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url))
        replies = fan_out(client, 5)
        for r in replies:
            assert r.usage.output_tokens == 3 and r.usage.input_tokens > 0
            assert r.usage.calls == 1 and r.usage.latency_s >= 0.02
            assert r.text == "three word answer" and r.finish_reason == "stop"
        assert client.calls == 5 and client.usage.calls == 5
        assert client.usage.output_tokens == 15
        assert client.usage.input_tokens == sum(r.usage.input_tokens for r in replies)
        assert client.usage.latency_s == pytest.approx(sum(r.usage.latency_s for r in replies))


def test_malformed_tool_arguments_pass_through() -> None:
    with FakeOpenAIServer(malformed_rate=1.0) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url))
        reply = asyncio.run(client.generate(user("1+2"), TOOLS))
        assert srv.requests == 1  # a model mistake is not retried
        call = reply.tool_calls[0]
        assert call.name == "add" and call.arguments == MALFORMED_ARGUMENTS
        with pytest.raises(ArgumentsError):
            call.parse_arguments()


def test_parse_completion_keeps_odd_arguments() -> None:
    resp = {"choices": [{"message": {"content": None, "tool_calls": [
        {"id": "c1", "function": {"name": "add", "arguments": "{'a': 1}"}},
        {"id": "c2", "function": {"name": "add", "arguments": None}}]},
        "finish_reason": "tool_calls"}]}
    reply = parse_completion(resp)
    assert [c.arguments for c in reply.tool_calls] == ["{'a': 1}", ""]
    with pytest.raises(InfraError):
        parse_completion({"choices": []})


def test_request_mapping_on_the_wire() -> None:
    history = [
        Message(role="system", content="You add."),
        Message(role="user", content="1+2?"),
        Message(role="assistant", tool_calls=[ToolCall("call_1", "add", '{"a": 1, "b": 2}')]),
        Message(role="tool", content='{"response": 3, "exception": null}',
                tool_call_id="call_1", name="add"),
    ]
    with FakeOpenAIServer(responder=text_responder("3")) as srv:
        model = get_model("openai/fake", base_url=srv.base_url)
        client = ModelClient(model)
        cfg = GenerateConfig(temperature=0.5, max_tokens=77, seed=11, tool_choice="add")
        asyncio.run(client.generate(history, TOOLS, cfg))
        asyncio.run(client.generate(history, [], GenerateConfig(tool_choice="required")))
        req, bare = srv.received
    assert req["model"] == "fake" and req["temperature"] == 0.5
    assert req["max_tokens"] == 77 and req["seed"] == 11
    assert req["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert req["tools"][0]["function"]["name"] == "add"
    assert "not sent" not in json.dumps(req)
    assert req["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b": 2}'
    assert req["messages"][3] == {"role": "tool", "content": '{"response": 3, "exception": null}',
                                  "tool_call_id": "call_1"}
    assert "tools" not in bare and "tool_choice" not in bare


def test_scripted_responder_and_models_endpoint() -> None:
    convo = user("hello")
    scripted = ScriptedResponder(fallback=None)
    scripted.add(convo, Message(role="assistant", content="hi there"))
    with FakeOpenAIServer(responder=scripted, model="fake-1") as srv:
        client = ModelClient(get_model("openai/fake-1", base_url=srv.base_url),
                             retry=RetryPolicy(max_attempts=1))
        assert asyncio.run(client.generate(convo, TOOLS)).text == "hi there"
        with pytest.raises(InfraError, match="500"):
            asyncio.run(client.generate(user("unknown"), TOOLS))
        with urllib.request.urlopen(srv.base_url + "/models") as resp:
            assert json.load(resp)["data"][0]["id"] == "fake-1"
    body = reply_to_completion(Message(role="assistant", content="a b"), prompt_tokens=4)
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}


def test_record_then_replay(tmp_path: Path) -> None:
    rec = tmp_path / "rec.jsonl"
    convos = [user(f"{i}+{i}") for i in range(3)]
    with FakeOpenAIServer() as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url), record_path=rec)
        live = [asyncio.run(client.generate(c, TOOLS)) for c in convos]
    assert len(rec.read_text().splitlines()) == 3
    replay = get_model(f"replay:{rec}")
    assert replay.name == f"replay:{rec}"
    rclient = ModelClient(replay)
    again = [asyncio.run(rclient.generate(c, TOOLS)) for c in convos]
    assert [r.message for r in again] == [r.message for r in live]
    with pytest.raises(InfraError, match="rec.jsonl") as err:
        asyncio.run(rclient.generate(user("never seen"), TOOLS))
    assert not err.value.retryable and rclient.calls == 4


def test_get_model_names(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="known: .*openai") as err:
        get_model("mystery/x")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError):
        get_model("gpt-4o")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert get_model("openai/x").cache_identity()["base_url"] == "http://127.0.0.1:9/v1"
    assert get_model("oracle").name == "oracle"
    infos = {i["provider"]: i for i in list_models()}
    assert set(infos) == {"agent-http", "openai", "openai-responses", "anthropic", "local",
                          "litellm", "oracle", "replay"}
    assert infos["oracle"]["installed"] and infos["openai"]["installed"]
    assert infos["local"]["example"] == "local/smollm2"
    assert json.loads(json.dumps(list_models())) == list_models()


def test_api_key_is_redacted_from_errors() -> None:
    secret = "sk-echoed-secret-123"

    def echo_key(request: dict) -> dict:
        raise RuntimeError(f"Incorrect API key provided: {secret}")

    with FakeOpenAIServer(responder=echo_key) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url, api_key=secret),
                             retry=RetryPolicy(max_attempts=1))
        with pytest.raises(InfraError) as err:
            asyncio.run(client.generate(user("hi"), TOOLS))
    assert secret not in str(err.value) and "***" in str(err.value)


def test_warnings_show_endpoint_text_never_obey_it(caplog: pytest.LogCaptureFixture) -> None:
    """An endpoint's error body quoted in a warning reaches any log handler (stderr by default)
    with its escape sequences and bidi overrides shown as text (issue 10, item 9)."""

    def hostile(request: dict) -> dict:
        raise RuntimeError("bad \x1b[2J\x1b]0;pwned\x07 \u202eevil")

    with FakeOpenAIServer(responder=hostile) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url, api_key="k"),
                             retry=RetryPolicy(max_attempts=1))
        with pytest.raises(InfraError):
            asyncio.run(client.generate(user("hi"), TOOLS))
    err = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("toolscore"))
    assert "failed" in err and "\\x1b[2J" in err and "\\u202e" in err
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err


def test_loop_table_keeps_a_value_per_loop_and_forgets_a_loop_that_is_gone() -> None:
    import gc

    from toolscore.models.loopbound import LoopTable

    table: LoopTable[str] = LoopTable()
    one, two = asyncio.new_event_loop(), asyncio.new_event_loop()
    table.set(one, "a")
    table.set(two, "b")
    for _ in range(2):  # alternating: the last loop asked is never taken for the other
        assert (table.get(one), table.get(two)) == ("a", "b")
    assert table.pop(one) == "a" and table.get(one) is None and table.get(two) == "b"
    two.close()
    del two
    gc.collect()
    assert len(table._items) == 0 and table.get(one) is None
    one.close()
