"""A reasoning model behind an OpenAI-compatible server: its reasoning (``reasoning_content``
as vLLM and llama.cpp's server send it, ``reasoning`` as Ollama and others do) is kept in the
transcript and the records, never sent back, and never scored: a tool call or the answer
written in the reasoning is not the model's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.browser import CHROMIUM, Browser
from support.cli import toolscore as toolscore_cli
from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.models.openai.provider import parse_completion, to_openai_messages
from toolscore.report.html.page import write_html
from toolscore.types import Message, Reply, ToolCall

# what the right answer to demo-add-item looks like, written out in the reasoning only
RIGHT_CALL = {"name": "AddItem", "arguments": {"name": "oat milk", "quantity": 2}}
THOUGHT = ("The user wants oat milk added. I should answer with\n<tool_call>"
           + json.dumps(RIGHT_CALL) + "</tool_call>\nand then say: Added 2 cartons.")


def completion(message: dict[str, Any], reasoning_tokens: int | None = 40) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 50, "total_tokens": 60}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "fake", "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", **message}}]}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_the_reasoning_is_read_apart_from_the_content(field: str) -> None:
    reply = parse_completion(completion({"content": "Sorry, I can't.", field: THOUGHT}))
    assert reply.message.content == "Sorry, I can't." and reply.message.tool_calls == []
    assert reply.message.reasoning == THOUGHT
    assert reply.usage.reasoning_tokens == 40 and reply.usage.output_tokens == 50
    # kept through the cache and the records (JSON), absent where there is none
    again = Reply.from_dict(json.loads(json.dumps(reply.to_dict())))
    assert again.message.reasoning == THOUGHT and again.usage.reasoning_tokens == 40
    plain = parse_completion(completion({"content": "ok", field: ""}, reasoning_tokens=None))
    assert plain.message.reasoning is None
    assert "reasoning" not in plain.message.to_dict()
    assert "reasoning_tokens" not in plain.usage.to_dict()


def test_reasoning_is_never_sent_back() -> None:
    history = [Message(role="user", content="hi"),
               Message(role="assistant", content="", reasoning="hmm",
                       tool_calls=[ToolCall("c1", "f", "{}")],
                       reasoning_items=[{"type": "thinking", "thinking": "hmm",
                                         "signature": "sig"}])]
    sent = to_openai_messages(history)
    assert all("reasoning" not in m and "reasoning_items" not in m for m in sent)


def _turn(run: Any) -> dict[str, Any]:
    records = [r for r in run.records if r["id"] == "demo-add-item"]
    turn: dict[str, Any] = records[0]["output"]["turns"][0]
    return turn


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_the_benchmark_scores_the_content_not_the_reasoning(tmp_path: Path, field: str) -> None:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return completion({"content": "I will not add anything.", field: THOUGHT})

    with FakeOpenAIServer(answer) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 out=tmp_path / "run", embedder="hashing", limit=2)
    turn = _turn(run)
    assert turn["predictions"] == [] and turn["text"] == "I will not add anything."
    assert turn["transcript"][-1]["reasoning"] == THOUGHT
    record = [r for r in run.records if r["id"] == "demo-add-item"][0]
    assert record["scores"]["recall"] == 0.0 and record["scores"]["success"] is False
    assert record["usage"]["reasoning_tokens"] == 40
    # the stored run reads back with it
    stored = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert [r["output"]["turns"][0]["transcript"][-1]["reasoning"] for r in stored
            if r["id"] == "demo-add-item"] == [THOUGHT]


def test_reasoning_tokens_are_shown_with_the_output_tokens(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return completion({"content": "No.", "reasoning_content": THOUGHT})

    with FakeOpenAIServer(answer) as srv:
        toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                           out=tmp_path / "run", embedder="hashing", limit=2)
    shown = toolscore_cli("report", str(tmp_path / "run"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "out 100, 80 reasoning)" in shown.stdout  # two calls of 50 output tokens, 40 reasoning
    page = write_html(tmp_path / "run", tmp_path / "run.html", n_resamples=10)
    assert "out 100, 80 reasoning)" in Path(page).read_text(encoding="utf-8")


def test_a_call_made_after_reasoning_is_scored_and_the_reasoning_not_sent(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["messages"][-1]["role"] == "user":
            call = {"id": "call_1", "type": "function",
                    "function": {"name": "AddItem",
                                 "arguments": json.dumps(RIGHT_CALL["arguments"])}}
            return completion({"content": None, "tool_calls": [call],
                               "reasoning_content": "Nothing to add, I will say no."})
        return completion({"content": "Added.", "reasoning_content": "done"})

    with FakeOpenAIServer(answer) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 out=tmp_path / "run", embedder="hashing", limit=2)
    record = [r for r in run.records if r["id"] == "demo-add-item"][0]
    assert record["scores"]["recall"] == 1.0
    assert [m.get("reasoning") for m in _turn(run)["transcript"] if m["role"] == "assistant"
            ] == ["Nothing to add, I will say no.", "done"]
    assert all("reasoning" not in m and "reasoning_content" not in m
               for r in srv.received for m in r["messages"])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_html_transcript_shows_the_reasoning_folded(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return completion({"content": "I will not add anything.", "reasoning_content": THOUGHT})

    with FakeOpenAIServer(answer) as srv:
        toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                           out=tmp_path / "run", embedder="hashing", limit=1)
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(write_html(tmp_path / "run", tmp_path / "run.html", n_resamples=10))
        assert browser.js("document.body.dataset.ready") == "1"
        browser.js("document.querySelectorAll('details.sample')"
                   ".forEach(d => d.querySelector('summary').click())")
        browser.wait("document.querySelectorAll('.msg.assistant').length > 0")
        box = "document.querySelector('.msg.assistant')"
        assert browser.js(f"{box}.querySelector('summary.reasoning').textContent") == "reasoning"
        assert browser.js(f"{box}.querySelector('details pre').textContent") == THOUGHT
        assert browser.js(f"{box}.querySelector(':scope > pre').textContent") == (
            "I will not add anything.")
        assert browser.errors() == []
    finally:
        browser.close()


def test_a_key_echoed_in_the_reasoning_is_redacted_before_it_is_kept(tmp_path: Path,
                                                                       monkeypatch: Any) -> None:
    key = "sk-reasoning-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return completion({"content": "No.", "reasoning_content": f"my key is {key}"})

    with FakeOpenAIServer(answer) as srv:
        toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                           out=tmp_path / "run", embedder="hashing", limit=1)
    stored = (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8")
    assert "my key is ***" in stored and key not in stored
    reply = Reply(message=Message(role="assistant", reasoning=key,
                                  reasoning_items=[{"type": "thinking", "thinking": key}]))
    from toolscore.models.base import redact_reply

    redact_reply(reply, [key])
    assert reply.message.reasoning == "***"
    assert reply.message.reasoning_items == [{"type": "thinking", "thinking": "***"}]
