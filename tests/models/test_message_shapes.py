"""What the ``openai/`` provider sends is accepted by every common OpenAI-compatible server:
an assistant message that only calls tools carries ``content: ""`` (llama-cpp-python's server
answers null with HTTP 500, and absent content breaks chat templates that read it), and no
message's content is ever null. Checked against the fake server speaking each server's dialect,
over whole runs whose follow-up requests carry the model's calls and the ground truth's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.testing.dialects import DIALECTS
from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.models import ModelClient, RetryPolicy, get_model
from toolscore.models.openai.provider import request_body, to_openai_messages
from toolscore.types import GenerateConfig, Message, ToolCall, ToolSpec

TOOLS = [ToolSpec("f", "d", {"type": "object", "properties": {}})]
CONVERSATION = [
    Message(role="system", content=None),
    Message(role="user", content="hi"),
    Message(role="assistant", content=None, tool_calls=[ToolCall("c1", "f", "{}")]),
    Message(role="tool", content=None, tool_call_id="c1", name="f"),
    Message(role="assistant", content=None),
    Message(role="assistant", content="", tool_calls=[ToolCall("c2", "f", "{}")]),
]


def test_no_content_is_ever_null_and_the_text_is_unchanged() -> None:
    sent = to_openai_messages(CONVERSATION)
    assert [m["content"] for m in sent] == ["", "hi", "", "", "", ""]
    assert sent[2]["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}
    assert "name" not in sent[3] and sent[3]["tool_call_id"] == "c1"
    body = json.loads(request_body("m", CONVERSATION, TOOLS, GenerateConfig()))
    assert body["messages"] == sent
    # a message with text is sent as it is
    assert to_openai_messages([Message(role="assistant", content="ok")]) == [
        {"role": "assistant", "content": "ok"}]


def tool_call_messages(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for r in requests for m in r["messages"]
            if m["role"] == "assistant" and m.get("tool_calls")]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("tools", ["exact", "all"])
def test_every_server_accepts_every_request_of_a_run(tmp_path: Path, dialect: str,
                                                     tools: str) -> None:
    with FakeOpenAIServer(dialect=dialect) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 out=tmp_path / "run", embedder="hashing", tools=tools)
    assert srv.refusals == []
    assert run.error_count() == (0, 6)
    calls = tool_call_messages(srv.received)
    # the model's calls in follow-ups and the ground truth's in later turns' history
    assert len(calls) > 6 and all(m["content"] == "" for m in calls)
    assert all(m.get("content") is not None for r in srv.received for m in r["messages"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_follow_up_request_is_accepted_at_the_first_attempt(dialect: str) -> None:
    with FakeOpenAIServer(dialect=dialect) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url),
                             retry=RetryPolicy(max_attempts=1))
        reply = asyncio.run(client.generate(CONVERSATION[1:4], TOOLS, GenerateConfig()))
    assert reply.text == "Done." and srv.requests == 1 and srv.refusals == []
