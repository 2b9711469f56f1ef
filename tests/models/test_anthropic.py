"""The Anthropic mapping, offline: system prompt extracted, tool_use/tool_result blocks,
consecutive tool results merged into one user message, tool_choice, and the way back."""

from __future__ import annotations

import json

import pytest

from toolscore.models.anthropic_provider import (
    build_request,
    from_anthropic_messages,
    parse_response,
    to_anthropic_messages,
    tool_choice_param,
)
from toolscore.types import GenerateConfig, Message, ToolCall, ToolResult, ToolSpec

TOOLS = [ToolSpec("weather", "Weather for a city",
                  {"type": "object", "properties": {"city": {"type": "string"}}})]

CONVO = [
    Message(role="system", content="You are terse."),
    Message(role="user", content="Weather in Rome and Oslo?"),
    Message(role="assistant", content="Checking.", tool_calls=[
        ToolCall("toolu_1", "weather", '{"city": "Rome"}'),
        ToolCall("toolu_2", "weather", '{"city": "Oslo"}')]),
    ToolResult("toolu_1", "weather", response={"temp": 21}).to_message(),
    ToolResult("toolu_2", "weather", exception="city not found").to_message(),
    Message(role="assistant", content="Rome is 21C; Oslo is unknown."),
    Message(role="user", content="Thanks"),
]


def test_messages_map_to_anthropic_shape() -> None:
    system, msgs = to_anthropic_messages(CONVO)
    assert system == "You are terse."
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Rome"}},
        {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Oslo"}},
    ]
    results = msgs[2]["content"]  # both results merged into one user message
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert [b["tool_use_id"] for b in results] == ["toolu_1", "toolu_2"]
    assert "is_error" not in results[0] and results[1]["is_error"] is True


def test_round_trip() -> None:
    system, msgs = to_anthropic_messages(CONVO)
    back = from_anthropic_messages(system, json.loads(json.dumps(msgs)))
    assert back == CONVO


def test_tool_result_followed_by_user_text_is_one_user_message() -> None:
    convo = [Message(role="user", content="go"),
             Message(role="assistant", tool_calls=[ToolCall("t1", "weather", "{}")]),
             Message(role="tool", content="ok", tool_call_id="t1"),
             Message(role="user", content="and now?")]
    _, msgs = to_anthropic_messages(convo)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [b["type"] for b in msgs[2]["content"]] == ["tool_result", "text"]


def test_malformed_history_arguments_survive() -> None:
    convo = [Message(role="user", content="go"),
             Message(role="assistant", tool_calls=[ToolCall("t1", "weather", '{"city": ')])]
    system, msgs = to_anthropic_messages(convo)
    assert system is None
    assert msgs[1]["content"][0]["input"] == {"_raw_arguments": '{"city": '}
    assert from_anthropic_messages(None, msgs)[1].tool_calls[0].arguments == '{"city": '


@pytest.mark.parametrize("choice,expected", [
    ("auto", {"type": "auto"}), ("required", {"type": "any"}), ("none", {"type": "none"}),
    ("weather", {"type": "tool", "name": "weather"}),
])
def test_tool_choice(choice: str, expected: dict) -> None:
    assert tool_choice_param(choice) == expected
    req = build_request("claude-x", CONVO, TOOLS, GenerateConfig(tool_choice=choice))
    assert req["tool_choice"] == expected


def test_build_request() -> None:
    req = build_request("claude-x", CONVO, TOOLS,
                        GenerateConfig(max_tokens=None, temperature=0.2))
    assert req["model"] == "claude-x" and req["system"] == "You are terse."
    assert req["max_tokens"] == 1024 and req["temperature"] == 0.2
    assert req["tools"] == [{"name": "weather", "description": "Weather for a city",
                             "input_schema": TOOLS[0].parameters}]
    assert "seed" not in req and "script" not in req
    bare = build_request("claude-x", CONVO[1:2], [], GenerateConfig())
    assert "tools" not in bare and "tool_choice" not in bare and "system" not in bare


def test_parse_response() -> None:
    resp = {"id": "msg_1", "model": "claude-x", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": "toolu_9", "name": "weather",
                         "input": {"city": "Paris"}}],
            "usage": {"input_tokens": 42, "output_tokens": 7}}
    reply = parse_response(resp)
    assert reply.text == "Let me check." and reply.finish_reason == "tool_use"
    assert reply.tool_calls == [ToolCall("toolu_9", "weather", '{"city": "Paris"}')]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (42, 7)
    assert reply.model == "claude-x"


def test_sdk_objects_parse_too() -> None:
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import Message as SDKMessage

    msg = SDKMessage.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather",
                     "input": {"city": "Lima"}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 2}})
    reply = parse_response(msg)
    assert reply.tool_calls[0].parse_arguments() == {"city": "Lima"}
    assert reply.text is None and reply.usage.output_tokens == 2
    assert anthropic is not None
