"""The oracle replays the reference steps of the current assistant turn, chosen from the
transcript alone, with deterministic call ids."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolscore.models import InfraError, ModelClient, get_model
from toolscore.models.scripted.oracle import current_step, reference
from toolscore.types import GenerateConfig, Message, ToolCall

SCRIPT = [
    {"tool_calls": [{"name": "search", "arguments": {"q": "pizza"}},
                    {"name": "weather", "arguments": {"city": "Rome"}}], "content": None},
    {"tool_calls": [{"name": "book", "arguments": {"id": 3}}], "content": "Booking now."},
    {"tool_calls": [], "content": "Booked table 3."},
]


def gen(messages: list[Message], script=SCRIPT):
    client = ModelClient(get_model("oracle"))
    with reference(script):
        return asyncio.run(client.generate(messages, [], GenerateConfig()))


def tool(call_id: str) -> Message:
    return Message(role="tool", content="{}", tool_call_id=call_id)


def test_step_selection_follows_the_transcript() -> None:
    convo = [Message(role="system", content="s"), Message(role="user", content="old"),
             Message(role="assistant", content="earlier turn"),
             Message(role="user", content="book pizza")]
    assert current_step(convo) == 0
    r0 = gen(convo)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in r0.tool_calls] == [
        ("call_0_0", "search", {"q": "pizza"}), ("call_0_1", "weather", {"city": "Rome"})]
    assert r0.text is None and r0.finish_reason == "tool_calls"

    convo += [r0.message, tool("call_0_0"), tool("call_0_1")]
    assert current_step(convo) == 1
    r1 = gen(convo)
    assert r1.tool_calls[0].id == "call_1_0" and r1.text == "Booking now."

    convo += [r1.message, tool("call_1_0")]
    r2 = gen(convo)
    assert r2.tool_calls == [] and r2.text == "Booked table 3."

    convo += [r2.message]
    past = gen(convo)  # past the end: the last step's text again
    assert past.text == "Booked table 3." and not past.tool_calls


def test_past_the_end_without_text_is_an_empty_answer() -> None:
    convo = [Message(role="user", content="x"),
             Message(role="assistant", tool_calls=[ToolCall("call_0_0", "f", "{}")]),
             tool("call_0_0")]
    reply = gen(convo, script=[{"tool_calls": [{"name": "f", "arguments": {}}]}])
    assert reply.text == "" and reply.usage.calls == 1  # not an infra error for the oracle
    assert gen([Message(role="user", content="x")], script=[]).text == ""


def test_string_arguments_are_kept_verbatim() -> None:
    reply = gen([Message(role="user", content="x")],
                script=[{"tool_calls": [{"name": "f", "arguments": '{"bad": '}]}])
    assert reply.tool_calls[0].arguments == '{"bad": '


def test_missing_script_is_a_configuration_error() -> None:
    client = ModelClient(get_model("oracle"))
    with pytest.raises(InfraError, match="reference steps") as err:
        asyncio.run(client.generate([Message(role="user", content="x")], [], GenerateConfig()))
    assert not err.value.retryable
