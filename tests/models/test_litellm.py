"""``litellm/<model>``, offline: through LiteLLM's ``openai/`` route to the fake OpenAI server
(``base_url``), a whole run scored as ``openai/`` scores it, a reasoning model's reasoning kept
and never scored, errors classified. Skipped where LiteLLM is not installed."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.entrypoints import PROVIDERS
from toolscore.models import get_model
from toolscore.models.base import ContextLengthExceeded, InfraError
from toolscore.models.litellm_provider import to_litellm_messages
from toolscore.models.providers import LITELLM
from toolscore.types import GenerateConfig, Message, ToolCall

pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="needs LiteLLM (the litellm extra)")

ARGS = {"name": "oat milk", "quantity": 2}


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """The provider, also before the installed entry points list it."""
    if "litellm" in PROVIDERS.names():
        yield
        return
    PROVIDERS.register("litellm", LITELLM)
    try:
        yield
    finally:
        PROVIDERS.unregister("litellm")


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", **message}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 30, "total_tokens": 40,
                      "completion_tokens_details": {"reasoning_tokens": 25}}}


def respond(request: dict[str, Any]) -> dict[str, Any]:
    if request["messages"][-1]["role"] == "user":
        call = {"id": "call_1", "type": "function",
                "function": {"name": "AddItem", "arguments": json.dumps(ARGS)}}
        return completion({"content": None, "tool_calls": [call],
                           "reasoning_content": 'Or maybe {"name": "DeleteNote"}?'})
    return completion({"content": "Added.", "reasoning_content": "done"})


def test_a_run_through_litellms_openai_route(tmp_path: Path) -> None:
    with FakeOpenAIServer(respond) as srv:
        run = toolscore.evaluate("demo", "litellm/openai/fake", base_url=srv.base_url,
                                 cache=None, out=tmp_path / "run", embedder="hashing",
                                 sample_ids=["demo-add-item"])
    assert run.error_count() == (0, 1), run.records[0].get("error")
    assert srv.requests >= 2
    record = run.records[0]
    turn = record["output"]["turns"][0]
    assert [p["request"]["api_name"] for p in turn["predictions"]] == ["AddItem"]
    assert record["scores"]["recall"] == 1.0 and turn["text"] == "Added."
    assert [m.get("reasoning") for m in turn["transcript"] if m["role"] == "assistant"] == [
        'Or maybe {"name": "DeleteNote"}?', "done"]
    assert record["usage"]["reasoning_tokens"] == 50
    first = srv.received[0]
    assert first["model"] == "fake" and first["temperature"] == 0.0
    assert all("reasoning" not in m and "reasoning_content" not in m
               for r in srv.received for m in r["messages"])


def test_errors_are_classified() -> None:
    async def go(model: Any) -> None:
        await model.generate([Message(role="user", content="hi")], [], GenerateConfig())

    with FakeOpenAIServer(fault_plan={0: "400"}) as srv:
        model = get_model("litellm/openai/fake", base_url=srv.base_url, api_key="sk-test-0123456")
        with pytest.raises(InfraError) as bad:
            asyncio.run(go(model))
    assert not bad.value.retryable and bad.value.status == 400
    with FakeOpenAIServer(fault_plan={0: "429"}) as srv:
        model = get_model("litellm/openai/fake", base_url=srv.base_url, api_key="sk-test-0123456")
        with pytest.raises(InfraError) as limited:
            asyncio.run(go(model))
    assert limited.value.retryable and limited.value.status == 429
    with FakeOpenAIServer(context_window=1) as srv:
        model = get_model("litellm/openai/fake", base_url=srv.base_url, api_key="sk-test-0123456")
        with pytest.raises(ContextLengthExceeded):
            asyncio.run(go(model))


def test_thinking_blocks_go_back_on_their_message() -> None:
    block = {"type": "thinking", "thinking": "t", "signature": "s"}
    sent = to_litellm_messages([Message(role="user", content="hi"),
                                Message(role="assistant", reasoning="t", reasoning_items=[block],
                                        tool_calls=[ToolCall("c1", "f", "{}")])])
    assert sent[1]["thinking_blocks"] == [block] and "thinking_blocks" not in sent[0]
    assert "reasoning" not in sent[1] and "reasoning_items" not in sent[1]
