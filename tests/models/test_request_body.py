"""The HTTP body of an ``openai/`` request is the request, byte for byte, however it is built:
each message's JSON is kept by value (``openai_provider.MessageJSON``) and the tools' JSON by
tool list, so a body sent again, or a message edited between calls, must still be exactly what
one ``json.dumps`` of the whole request gives."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from toolscore.models.openai.params import model_family, settings_and_drops
from toolscore.models.openai.provider import (
    MessageJSON,
    openai_message_json,
    request_body,
    to_openai_messages,
)
from toolscore.types import GenerateConfig, Message, ToolCall, ToolSpec

TOOLS = [ToolSpec("f", "d", {"type": "object", "properties": {"a": {"type": "string"}}})]
CONVERSATION = [
    Message(role="system", content="You are helpful."),
    Message(role="user", content="Réveille-moi à 6h30 \u2603 \"quoted\" \\ \n"),
    Message(role="assistant", content=None,
            tool_calls=[ToolCall("c1", "f", '{"a": "x"}'), ToolCall("c2", "f", "{bad json")]),
    Message(role="tool", content='{"ok": true}', tool_call_id="c1", name="f"),
    Message(role="tool", content=None, tool_call_id="c2", name="f"),
    Message(role="assistant", content="done \ud800 lone surrogate"),
]


def whole(model: str, messages: list[Message], tools: list[ToolSpec],
          config: GenerateConfig) -> bytes:
    """The request in one json.dumps, tools last (as the body has always been laid out)."""
    settings = settings_and_drops(config, bool(tools), model_family(model))[0]
    req: dict[str, Any] = {"model": model, "messages": to_openai_messages(messages), **settings}
    if tools:
        req["tools"] = [t.to_openai() for t in tools]
    try:
        return json.dumps(req, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return b"unencodable"


def body(model: str, messages: list[Message], tools: list[ToolSpec],
         config: GenerateConfig) -> bytes:
    try:
        return request_body(model, messages, tools, config)
    except UnicodeEncodeError:  # a lone surrogate: the body cannot be sent, nor before
        return b"unencodable"


CONFIGS = [GenerateConfig(temperature=0.0, max_tokens=512, seed=0),
           GenerateConfig(temperature=0.7, max_tokens=None, seed=None,
                          extra={"stop": ["z"], "extra_body": {"k": 1}}),
           GenerateConfig(extra={"extra_body": {"model": "other", "messages": []}})]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("tools", [TOOLS, []])
def test_the_body_is_the_whole_request_byte_for_byte(config: GenerateConfig,
                                                     tools: list[ToolSpec]) -> None:
    for n in range(1, len(CONVERSATION) + 1):
        messages = CONVERSATION[:n]
        expected = whole("gpt-4o", messages, tools, config)
        assert body("gpt-4o", messages, tools, config) == expected
        assert body("gpt-4o", messages, tools, config) == expected  # from what was kept
        if config is not CONFIGS[2] and expected != b"unencodable":  # (CONFIGS[2]'s
            # extra_body replaces the messages)
            assert json.loads(expected)["messages"] == to_openai_messages(messages)


def test_an_edited_message_is_sent_as_edited() -> None:
    config = CONFIGS[0]
    messages = [Message(role="user", content="one"),
                Message(role="assistant", tool_calls=[ToolCall("c1", "f", "{}")])]
    body("gpt-4o", messages, TOOLS, config)
    messages[0].content = "two"
    messages[1].tool_calls[0].arguments = '{"a": "b"}'
    messages[1].tool_calls.append(ToolCall("c2", "f", "{}"))
    assert body("gpt-4o", messages, TOOLS, config) == whole("gpt-4o", messages, TOOLS, config)


def test_an_odd_message_is_rendered_not_kept() -> None:
    odd = Message(role="user", content=["a list", {"of": "parts"}])  # type: ignore[arg-type]
    memo = MessageJSON()
    assert json.loads(memo(odd)) == {"role": "user", "content": ["a list", {"of": "parts"}]}
    assert memo._texts == {}


def test_what_is_kept_is_bounded() -> None:
    memo = MessageJSON(max_chars=100)
    for i in range(50):
        memo(Message(role="user", content=f"message {i}"))
        assert memo._chars <= 100 and len(memo._texts) <= 4


def test_the_key_covers_every_field() -> None:
    """A field added to Message or ToolCall must be added to MessageJSON's key, unless it is
    never sent (a reasoning model's reasoning is not)."""
    assert [f.name for f in dataclasses.fields(Message)] == [
        "role", "content", "tool_calls", "tool_call_id", "name", "reasoning",
        "reasoning_items"]
    thought = Message(role="assistant", content="x", reasoning="why",
                      reasoning_items=[{"type": "thinking", "thinking": "why"}])
    assert openai_message_json(thought) == '{"role":"assistant","content":"x"}'

    assert [f.name for f in dataclasses.fields(ToolCall)] == ["id", "name", "arguments"]
    assert openai_message_json(Message(role="user", content="x")) == '{"role":"user",' \
                                                                     '"content":"x"}'
