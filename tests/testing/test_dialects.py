"""The fake server's dialects refuse what each real server refuses, with its status and body,
and answer a prompt that does not fit as each server does (the shapes toolscore must avoid, and
the errors it must read, checked over a real socket)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from support.testing.dialects import DIALECTS, check_dialect, request_tokens
from support.testing.openai_server import FakeOpenAIServer

CALL = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
ABSENT = object()
SHAPES = {"null": None, "empty": "", "absent": ABSENT}
# dialect -> the shapes of an assistant message that calls tools it refuses (and with what)
REFUSED_WITH_CALLS = {"openai": {}, "vllm": {}, "llama.cpp": {}, "ollama": {},
                      "llama-cpp-python": {"null": 500, "absent": 500}}
# ... and of an assistant message with no tool calls
REFUSED_WITHOUT_CALLS = {"openai": {"absent": 400}, "vllm": {},
                         "llama.cpp": {"absent": 400}, "ollama": {"null": 400, "absent": 400},
                         "llama-cpp-python": {"null": 500, "absent": 500}}


def post(srv: FakeOpenAIServer, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(srv.base_url + "/chat/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def request(shape: str, calls: bool) -> dict[str, Any]:
    assistant: dict[str, Any] = {"role": "assistant"}
    if SHAPES[shape] is not ABSENT:
        assistant["content"] = SHAPES[shape]
    if calls:
        assistant["tool_calls"] = CALL
    follow = ([{"role": "tool", "tool_call_id": "c1", "content": "{}"}] if calls
              else [{"role": "user", "content": "and?"}])
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}, assistant, *follow]}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("calls", [True, False], ids=["tool-calls", "text-only"])
def test_each_dialect_refuses_the_shapes_its_server_refuses(dialect: str, calls: bool) -> None:
    refused = (REFUSED_WITH_CALLS if calls else REFUSED_WITHOUT_CALLS)[dialect]
    with FakeOpenAIServer(dialect=dialect) as srv:
        for shape in SHAPES:
            status, body = post(srv, request(shape, calls))
            assert status == refused.get(shape, 200), (shape, body)
            if status != 200:
                assert isinstance(body["error"]["message"], str) and body["error"]["type"]
        assert len(srv.refusals) == len(refused)


def test_llama_cpp_python_answers_null_content_as_it_does() -> None:
    with FakeOpenAIServer(dialect="llama-cpp-python") as srv:
        status, body = post(srv, request("null", calls=True))
    assert status == 500
    assert body["error"]["type"] == "internal_server_error" and body["error"]["code"] is None
    assert "validation error" in body["error"]["message"]


def test_without_a_dialect_every_shape_is_accepted() -> None:
    with FakeOpenAIServer() as srv:
        for shape in SHAPES:
            for calls in (True, False):
                assert post(srv, request(shape, calls))[0] == 200
        assert srv.refusals == []


@pytest.mark.parametrize(("dialect", "kind"), [
    ("openai", "context_length_exceeded"), ("llama-cpp-python", "context_length_exceeded"),
    ("vllm", "BadRequestError"), ("llama.cpp", "exceed_context_size_error"),
    ("ollama", "invalid_request_error")])
def test_a_prompt_that_does_not_fit_gets_the_servers_own_error(dialect: str,
                                                               kind: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "one two three four"}],
            "max_tokens": 8}
    assert request_tokens(body) == 5
    with FakeOpenAIServer(dialect=dialect, context_window=5) as srv:
        status, answer = post(srv, body)
        assert status == 400 and srv.overflows == 1
        error = answer["error"]
        assert kind in (error.get("code"), error.get("type"))
        if dialect == "llama.cpp":
            assert (error["n_ctx"], error["n_prompt_tokens"]) == (5, 5)
        srv.context_window = 6
        assert post(srv, body)[0] == 200


def test_tools_count_towards_the_prompt() -> None:
    bare = {"messages": [{"role": "user", "content": "a b"}]}
    tools = [{"type": "function", "function": {"name": "f", "description": "x y z"}}]
    assert request_tokens({**bare, "tools": tools}) > request_tokens(bare) == 3


def test_an_unknown_dialect_is_refused() -> None:
    check_dialect(None)
    with pytest.raises(ValueError, match="unknown dialect 'tgi'"):
        FakeOpenAIServer(dialect="tgi")
