"""Anthropic's extended thinking, offline against a fake Messages API that checks what the API
checks: ``-M thinking_budget=N`` turns it on, the thinking blocks are kept in the transcript and
sent back with their signature in a tool-use conversation, never scored, and what the API
refuses with thinking on (temperature 0, a forced tool choice, a limit below the budget) is
adjusted and said once."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset, needs
from support.testing.anthropic_server import FakeAnthropicServer, message, signature

import toolscore
from toolscore.models.anthropic_provider import (
    build_request,
    from_anthropic_messages,
    parse_response,
    thinking_settings,
    to_anthropic_messages,
)
from toolscore.models.factory import make_client
from toolscore.types import GenerateConfig, Message, ToolSpec

pytest.importorskip("anthropic")

TOOLS = [ToolSpec("f", "d")]
ARGS = {"name": "oat milk", "quantity": 2}
# the thinking writes out a call and an answer the model does not make
THOUGHT = ('I could call <tool_call>{"name": "DeleteNote", "arguments": {}}</tool_call> '
           "and answer: Deleted everything.")


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature(text)}


def respond(request: dict[str, Any]) -> dict[str, Any]:
    """Think, then add the item; after its result, think again and say so."""
    last = request["messages"][-1]["content"]
    if any(b.get("type") == "tool_result" for b in last):
        return message([thinking("It worked."), {"type": "text", "text": "Added."}])
    return message([thinking(THOUGHT), {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "tool_use", "id": "toolu_1", "name": "AddItem", "input": ARGS}],
                   stop="tool_use")


def test_thinking_blocks_are_read_kept_and_sent_back_first() -> None:
    reply = parse_response(respond({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi"}]}]}))
    msg = reply.message
    assert msg.content is None and [c.name for c in msg.tool_calls] == ["AddItem"]
    assert msg.reasoning == THOUGHT
    assert msg.reasoning_items == [thinking(THOUGHT),
                                   {"type": "redacted_thinking", "data": "opaque"}]
    again = Message.from_dict(json.loads(json.dumps(msg.to_dict())))  # records, cache
    system, sent = to_anthropic_messages([Message(role="user", content="hi"), again])
    assert [b["type"] for b in sent[1]["content"]] == ["thinking", "redacted_thinking",
                                                       "tool_use"]
    assert sent[1]["content"][0] == thinking(THOUGHT)
    assert from_anthropic_messages(system, sent)[1] == again
    # blocks of another provider's shape are not sent
    other = Message(role="assistant", content="x", reasoning_items=[{"type": "reasoning"}])
    assert to_anthropic_messages([other])[1][0]["content"] == [{"type": "text", "text": "x"}]


def test_what_thinking_refuses_is_adjusted_and_said() -> None:
    config = GenerateConfig(temperature=0.0, max_tokens=512, top_p=0.5, tool_choice="required",
                            extra={"thinking_budget": 2048, "top_k": 5})
    settings, changed = thinking_settings(config, has_tools=True)
    assert settings == {"max_tokens": 2560, "tool_choice": {"type": "auto"},
                        "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert set(changed) == {"max_tokens", "temperature", "top_p", "top_k", "tool_choice"}
    assert "temperature=0.0 not sent" in changed["temperature"]
    req = build_request("claude-x", [Message(role="user", content="hi")], TOOLS, config)
    assert "temperature" not in req and req["thinking"]["budget_tokens"] == 2048
    # without a budget nothing changes
    plain = build_request("claude-x", [Message(role="user", content="hi")], TOOLS,
                          GenerateConfig(extra={"top_k": 5}))
    assert plain["temperature"] == 0.0 and plain["top_k"] == 5 and "thinking" not in plain


@pytest.mark.parametrize("budget", [512, "big", 1.5e3, True])
def test_a_budget_the_api_refuses_is_a_one_line_error_before_any_call(budget: Any) -> None:
    with pytest.raises(ValueError, match="'thinking_budget': .* at least 1024") as e:
        make_client("anthropic/claude-x", api_key="k", cache=None,
                    model_args={"thinking_budget": budget})
    assert "\n" not in str(e.value)


def test_reasoning_effort_points_to_the_budget() -> None:
    with pytest.raises(ValueError, match="thinking_budget=N"):
        make_client("anthropic/claude-x", api_key="k", cache=None,
                    model_args={"reasoning_effort": "high"})


def test_a_tool_use_conversation_with_thinking(tmp_path: Path, monkeypatch: Any,
                                               caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-0123456789")
    caplog.set_level(logging.WARNING)
    with FakeAnthropicServer(respond) as srv:
        run = toolscore.evaluate("demo", "anthropic/claude-x", base_url=srv.base_url,
                                 cache=None, out=tmp_path / "run", embedder="hashing",
                                 sample_ids=["demo-add-item"],
                                 model_args={"thinking_budget": 2048})
    assert srv.refusals == [] and run.error_count() == (0, 1)
    first, follow_up = srv.received[:2]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == 2048 + 512 and "temperature" not in first  # the demo asks 0
    assert follow_up["messages"][1]["content"][0] == thinking(THOUGHT)  # signature kept
    record = run.records[0]
    turn = record["output"]["turns"][0]
    # scored on the call made, not on what the thinking wrote
    assert [p["request"]["api_name"] for p in turn["predictions"]] == ["AddItem"]
    assert record["scores"]["recall"] == 1.0 and turn["text"] == "Added."
    assert [m.get("reasoning") for m in turn["transcript"] if m["role"] == "assistant"] == [
        THOUGHT, "It worked."]
    said = [r.getMessage() for r in caplog.records if "anthropic/claude-x" in r.getMessage()]
    assert len([s for s in said if "temperature=0.0 not sent" in s]) == 1
    assert len([s for s in said if "max_tokens sent as 2048 + 512" in s]) == 1


def test_without_the_blocks_the_fake_refuses_as_the_api_does() -> None:
    """The fake's check is real: a follow-up without the thinking block is refused."""
    import asyncio

    from toolscore.models import get_model
    from toolscore.models.base import InfraError
    from toolscore.types import ToolCall

    history = [Message(role="user", content="hi"),
               Message(role="assistant", tool_calls=[ToolCall("toolu_1", "f", "{}")]),
               Message(role="tool", content="ok", tool_call_id="toolu_1")]
    with FakeAnthropicServer(respond) as srv:
        model = get_model("anthropic/claude-x", base_url=srv.base_url,
                          api_key="test-key-0123456789")
        with pytest.raises(InfraError, match="HTTP 400.*must start with a thinking block"):
            asyncio.run(model.generate(history, TOOLS, GenerateConfig(
                temperature=None, extra={"thinking_budget": 1024})))


def first_tool(request: dict[str, Any]) -> dict[str, Any]:
    """Think, then call the first tool offered; after a result, think and answer."""
    last = request["messages"][-1]["content"]
    if any(b.get("type") == "tool_result" for b in last):
        return message([thinking("Done."), {"type": "text", "text": "Done."}])
    tool = request["tools"][0]["name"]
    return message([thinking(f"I will call {tool}."),
                    {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {}}],
                   stop="tool_use")


@needs("tooltalk")
def test_tooltalks_reference_mode_sends_the_thinking_back_with_its_rebuilt_call(
        tmp_path: Path, monkeypatch: Any) -> None:
    """ToolTalk's default mode sends a call back rebuilt as its runner does; the call's signed
    thinking goes with it, or the API refuses every follow-up."""
    dataset("tooltalk")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-0123456789")
    with FakeAnthropicServer(first_tool) as srv:
        run = toolscore.evaluate("tooltalk", "anthropic/claude-x", base_url=srv.base_url,
                                 cache=None, out=tmp_path / "run", embedder="hashing",
                                 split="easy", limit=1, model_args={"thinking_budget": 1024})
    assert srv.refusals == [] and run.error_count() == (0, 1)
    follow_ups = [r for r in srv.received
                  if any(b.get("type") == "tool_result" for b in r["messages"][-1]["content"])]
    assert follow_ups and all(r["messages"][-2]["content"][0]["type"] == "thinking"
                              for r in follow_ups)
