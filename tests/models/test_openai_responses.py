"""``openai-responses/<model>``: OpenAI's Responses API, offline against a fake that checks what
the API checks. Input items, function tools, function_call / function_call_output items,
reasoning effort and summaries, reasoning tokens counted, summaries kept in the transcript and
never scored, encrypted reasoning sent back; a parameter the endpoint says it does not take is
left out from then on (decided by the endpoint, never by the model's name)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.testing.responses_server import FakeResponsesServer

import toolscore
from toolscore.entrypoints import PROVIDERS
from toolscore.models import get_model
from toolscore.models.base import InfraError
from toolscore.models.openai.responses import build_request, parse_response, to_input
from toolscore.models.providers import OPENAI_RESPONSES
from toolscore.types import GenerateConfig, Message, ToolCall, ToolResult, ToolSpec

TOOLS = [ToolSpec("f", "d", {"type": "object", "properties": {"a": {"type": "string"}}})]
ARGS = {"name": "oat milk", "quantity": 2}
THOUGHT = ('Maybe <tool_call>{"name": "DeleteNote", "arguments": {}}</tool_call>; the answer '
           "is: Deleted everything.")


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """The provider, also before the installed entry points list it."""
    if "openai-responses" in PROVIDERS.names():
        yield
        return
    PROVIDERS.register("openai-responses", OPENAI_RESPONSES)
    try:
        yield
    finally:
        PROVIDERS.unregister("openai-responses")


def reasoning(n: int, text: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"enc-{n}",
            "summary": [{"type": "summary_text", "text": text}]}


def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Reason, then add the item; after its result, reason again and say so."""
    if request["input"][-1].get("type") == "function_call_output":
        return [reasoning(2, "It worked."),
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "Added.", "annotations": []}]}]
    return [reasoning(1, THOUGHT),
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "AddItem",
             "arguments": json.dumps(ARGS), "status": "completed"}]


def test_the_conversation_as_input_items() -> None:
    history = [Message(role="system", content="Be brief."), Message(role="user", content="hi"),
               Message(role="assistant", content="Let me look.", reasoning="why",
                       reasoning_items=[reasoning(1, "why"), {"type": "reasoning", "id": "x"},
                                        {"type": "thinking", "thinking": "t"}],
                       tool_calls=[ToolCall("call_1", "f", '{"a": "b"}')]),
               ToolResult("call_1", "f", response={"ok": 1}).to_message()]
    items = to_input(history)
    assert items == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": reasoning(1, "why")["summary"],
         "encrypted_content": "enc-1"},  # the one the server can read back
        {"role": "assistant", "content": "Let me look."},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": '{"a": "b"}'},
        {"type": "function_call_output", "call_id": "call_1",
         "output": '{"response": {"ok": 1}, "exception": null}'}]
    req = build_request("o4-mini", history, TOOLS, GenerateConfig(
        reasoning_effort="high", tool_choice="f", extra={"reasoning_summary": "detailed"}))
    assert req["tools"] == [{"type": "function", "name": "f", "description": "d",
                             "parameters": TOOLS[0].parameters, "strict": False}]
    assert req["tool_choice"] == {"type": "function", "name": "f"}
    assert req["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert req["max_output_tokens"] == 512 and req["temperature"] == 0.0 and "seed" not in req
    assert req["store"] is False and req["include"] == ["reasoning.encrypted_content"]
    plain = build_request("m", history, [], GenerateConfig(extra={"reasoning_summary": "none"}),
                          frozenset({"temperature", "include"}))
    assert "reasoning" not in plain and "temperature" not in plain and "include" not in plain


def test_a_response_is_read() -> None:
    reply = parse_response({"status": "incomplete", "model": "o4-mini",
                            "incomplete_details": {"reason": "max_output_tokens"},
                            "output": [reasoning(1, "a"), reasoning(2, "b"),
                                       {"type": "message", "content": [
                                           {"type": "output_text", "text": "Hi "},
                                           {"type": "output_text", "text": "there"}]}],
                            "usage": {"input_tokens": 5, "output_tokens": 9,
                                      "output_tokens_details": {"reasoning_tokens": 7}}})
    assert reply.text == "Hi there" and reply.message.reasoning == "a\n\nb"
    assert reply.finish_reason == "length" and reply.usage.reasoning_tokens == 7
    assert [i["id"] for i in reply.message.reasoning_items] == ["rs_1", "rs_2"]
    with pytest.raises(InfraError, match="response failed: overloaded"):
        parse_response({"status": "failed", "error": {"message": "overloaded"}, "output": []})


def test_a_tool_use_conversation_of_a_reasoning_model(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with FakeResponsesServer(respond, unsupported=("temperature",)) as srv:
        run = toolscore.evaluate("demo", "openai-responses/o-fake", base_url=srv.base_url,
                                 cache=None, out=tmp_path / "run", embedder="hashing",
                                 model_args={"reasoning_effort": "low"})
    assert run.error_count() == (0, 6)
    # the first requests (the samples start together) learnt that temperature is not taken;
    # each was sent again without it, and no later one sent it (each sample makes two or more)
    refused = [r for r in srv.received if "temperature" in r]
    assert 1 <= len(refused) == len(srv.refusals) <= 6 and "temperature" in srv.received[0]
    assert len(srv.received) - len(refused) > 6
    said = [r.getMessage() for r in caplog.records if "does not take" in r.getMessage()]
    assert len(said) == 1 and "'temperature'" in said[0]
    sent = srv.received[1]
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"}
    follow_up = next(r for r in srv.received if r["input"][-1].get("type") ==
                     "function_call_output")
    kinds = [i.get("type", "message") for i in follow_up["input"]]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]
    record = next(r for r in run.records if r["id"] == "demo-add-item")
    turn = record["output"]["turns"][0]
    assert [p["request"]["api_name"] for p in turn["predictions"]] == ["AddItem"]
    assert record["scores"]["recall"] == 1.0 and turn["text"] == "Added."
    assert [m.get("reasoning") for m in turn["transcript"] if m["role"] == "assistant"] == [
        THOUGHT, "It worked."]
    assert record["usage"]["reasoning_tokens"] == 2 * 64


def test_a_chat_model_behind_it_is_asked_no_reasoning_after_the_first_call() -> None:
    def plain(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]

    async def go(model: Any) -> list[str | None]:
        texts = []
        for _ in range(2):
            reply = await model.generate([Message(role="user", content="hi")], TOOLS,
                                         GenerateConfig())
            texts.append(reply.text)
        await model.aclose()
        return texts

    with FakeResponsesServer(plain, unsupported=("reasoning.summary", "include")) as srv:
        model = get_model("openai-responses/chat-fake", base_url=srv.base_url)
        assert asyncio.run(go(model)) == ["ok", "ok"]
    assert model.left_out == {"reasoning.summary", "include"}
    assert len(srv.refusals) == 2 and srv.requests == 4
    assert "reasoning" not in srv.received[-1] and "include" not in srv.received[-1]


def test_a_refusal_of_anything_else_is_not_retried() -> None:
    with FakeResponsesServer(respond, unsupported=("tools",)) as srv:
        model = get_model("openai-responses/o-fake", base_url=srv.base_url)
        with pytest.raises(InfraError, match="HTTP 400.*tools"):
            asyncio.run(model.generate([Message(role="user", content="hi")], TOOLS,
                                       GenerateConfig()))
    assert srv.requests == 1 and model.left_out == set()
