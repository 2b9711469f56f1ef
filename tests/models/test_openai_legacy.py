"""The legacy ``functions`` request shape of the openai provider, over a real socket: what is
sent, how a ``function_call`` reply is read, which shape ``auto`` picks, and the switch to
``tools`` when an endpoint refuses the legacy shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models.openai.legacy import official, wants_functions
from toolscore.models.openai.provider import OpenAIModel
from toolscore.types import GenerateConfig, Message, ToolCall, ToolSpec

SPEC = ToolSpec("AddAlarm", "Set an alarm.",
                {"type": "object", "properties": {"time": {"type": "string"}}},
                {"required": ["time"]})
HISTORY = [
    Message(role="system", content="sys"),
    Message(role="user", content="wake me at 7"),
    Message(role="assistant", content=None,
            tool_calls=[ToolCall("c1", "AddAlarm", '{"time": "07:00:00"}')]),
    Message(role="tool", content='{"response": 1, "exception": null}', tool_call_id="c1",
            name="AddAlarm"),
]


def legacy_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Answer as the legacy API does: a ``function_call`` when offered ``functions``, else a
    ``tool_calls`` entry; the text says which shape arrived."""
    if "functions" in request:
        message = {"role": "assistant", "content": None,
                   "function_call": {"name": "AddAlarm", "arguments": '{"time": "08:00:00"}'}}
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "x", "type": "function",
             "function": {"name": "AddAlarm", "arguments": '{"time": "09:00:00"}'}}]}
    return {"id": "c", "object": "chat.completion", "model": request["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def _generate(server: FakeOpenAIServer, config: GenerateConfig, base_url: str | None = None):
    async def go():
        model = OpenAIModel("fake-model", base_url=base_url or server.base_url, api_key="k")
        try:
            replies = [await model.generate(HISTORY, [SPEC], config) for _ in range(2)]
        finally:
            await model.aclose()
        return model, replies
    return asyncio.run(go())


def test_functions_shape_sent_as_the_legacy_api_took_it() -> None:
    with FakeOpenAIServer(legacy_responder) as server:
        _, replies = _generate(server, GenerateConfig(temperature=None, max_tokens=None,
                                                      seed=None, tool_choice=None,
                                                      call_api="functions"))
        body = server.received[0]
    assert list(body) == ["model", "messages", "functions"]  # nothing else: no sampling field
    assert body["functions"] == [{"name": "AddAlarm", "description": "Set an alarm.",
                                  "parameters": SPEC.parameters, "required": ["time"]}]
    assert body["messages"][2] == {"role": "assistant", "content": None, "function_call": {
        "name": "AddAlarm", "arguments": '{"time": "07:00:00"}'}}
    assert body["messages"][3] == {"role": "function", "name": "AddAlarm",
                                   "content": '{"response": 1, "exception": null}'}
    reply = replies[0]
    assert reply.api == "functions"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("AddAlarm",
                                                                  '{"time": "08:00:00"}')]


def test_a_tool_choice_goes_as_function_call() -> None:
    with FakeOpenAIServer(legacy_responder) as server:
        _generate(server, GenerateConfig(tool_choice="AddAlarm", call_api="functions"))
        body = server.received[0]
    assert body["function_call"] == {"name": "AddAlarm"} and "tool_choice" not in body
    assert body["temperature"] == 0.0 and body["max_tokens"] == 512


def test_refused_functions_switch_to_tools_for_the_rest_of_the_run() -> None:
    with FakeOpenAIServer(legacy_responder, accepts_functions=False) as server:
        model, replies = _generate(server, GenerateConfig(call_api="functions"))
        shapes = ["functions" if "functions" in r else "tools" for r in server.received]
    assert shapes == ["functions", "tools", "tools"]  # asked once, then never again
    assert [r.api for r in replies] == ["tools", "tools"]
    assert "Unrecognized request argument" in (model.functions_refused or "")
    assert replies[0].tool_calls[0].arguments == '{"time": "09:00:00"}'


def test_auto_is_the_legacy_shape_only_for_openais_own_api() -> None:
    assert official(None) and official("https://api.openai.com/v1")
    assert not official("http://127.0.0.1:8000/v1") and not official("https://x.example/v1")
    auto = GenerateConfig(call_api="auto")
    assert wants_functions(auto, [SPEC], True) and not wants_functions(auto, [SPEC], False)
    assert not wants_functions(auto, [], True)  # nothing to offer: the usual request
    # "required" has no legacy equivalent: the tools shape says it
    assert not wants_functions(GenerateConfig(tool_choice="required", call_api="functions"),
                               [SPEC], True)
    with FakeOpenAIServer(legacy_responder) as server:
        _, replies = _generate(server, auto)  # a local endpoint: tools
        assert all("tools" in r and "functions" not in r for r in server.received)
    assert [r.api for r in replies] == ["tools", "tools"]


def test_usual_requests_are_unchanged() -> None:
    with FakeOpenAIServer(legacy_responder) as server:
        _, replies = _generate(server, GenerateConfig())
        body = server.received[0]
    assert "tools" in body and "functions" not in body
    assert replies[0].api is None
    assert "call_api" not in GenerateConfig().to_dict()  # cache keys of old requests kept
    assert GenerateConfig(call_api="functions").to_dict()["call_api"] == "functions"


@pytest.mark.parametrize("content", [None, "I will set it."])
def test_a_function_call_reply_keeps_its_text(content: str | None) -> None:
    from toolscore.models.openai.provider import parse_completion

    reply = parse_completion({"choices": [{"message": {
        "role": "assistant", "content": content,
        "function_call": {"name": "AddAlarm", "arguments": "{}"}}}]})
    assert reply.text == content
    assert [(c.id, c.name) for c in reply.tool_calls] == [("call_0", "AddAlarm")]
    assert json.loads(reply.tool_calls[0].arguments) == {}
