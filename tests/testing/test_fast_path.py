"""The fake server's fast path answers exactly as its full path (issue 12: its CPU per request).

With no recording and no faults, a :class:`ScriptedResponder` answers from the raw request body
(:meth:`ScriptedResponder.respond_raw`). That is only allowed because it changes no byte: every
request the ``openai/`` provider sends while running ToolTalk hard with the oracle's replies is
answered identically by both paths, offline and over HTTP; whatever it cannot answer (no scripted
reply, a subclass, a request that is not the provider's usual shape) goes the full way.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import tempfile
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.data import dataset, needs
from support.testing.openai_server import (
    FakeOpenAIServer,
    ScriptedResponder,
    default_responder,
    messages_key,
    reply_to_completion,
)
from support.testing.oracle_replies import OracleRecording, oracle_recording

from toolscore.benchmarks.registry import make_benchmark
from toolscore.models import ModelClient, get_model
from toolscore.records import RunStore
from toolscore.runs.runner import RunOptions, execute_run
from toolscore.types import Message

OPTIONS = {"split": "hard", "embedder": "hashing"}


class Capturing(FakeOpenAIServer):
    """Keeps every request body as sent (a subclass: it always takes the full path)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[bytes] = []

    async def _route(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        if method == "POST":
            self.bodies.append(raw)
        return await super()._route(method, path, raw)


@pytest.fixture(scope="module")
def oracle() -> OracleRecording:
    return oracle_recording("tooltalk", dataset("tooltalk"), fallback=None, **OPTIONS)


@pytest.fixture(scope="module")
def bodies(oracle: OracleRecording) -> list[bytes]:
    """The raw bodies of a whole ToolTalk hard run through the real ``openai/`` provider."""
    benchmark = make_benchmark("tooltalk", dataset("tooltalk"), **OPTIONS)
    with Capturing(oracle.responder, keep_requests=False) as srv, \
            pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "dummy")
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url), cache=None,
                             max_concurrency=8)
        with tempfile.TemporaryDirectory() as tmp:
            summary = asyncio.run(execute_run(benchmark, client, RunStore(f"{tmp}/run"),
                                              RunOptions(max_concurrency=8, progress=False)))
    assert summary.errors == 0
    assert len(srv.bodies) == oracle.calls
    return srv.bodies


def full(responder: ScriptedResponder, raw: bytes) -> bytes:
    return json.dumps(responder(json.loads(raw))).encode("utf-8")


def post(srv: FakeOpenAIServer, raw: bytes, path: str = "/v1/chat/completions"
         ) -> tuple[int, bytes]:
    url = urlsplit(srv.base_url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
    try:
        conn.request("POST", path, raw, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@needs("tooltalk")
def test_every_oracle_request_same_bytes_both_paths(oracle: OracleRecording,
                                                    bodies: list[bytes]) -> None:
    responder = oracle.responder
    for i, raw in enumerate(bodies):
        fast = responder.respond_raw(raw)
        assert fast is not None, f"request {i} left the fast path"
        assert fast == full(responder, raw), f"request {i}"
    again = [responder.respond_raw(raw) for raw in bodies]  # from the memos now
    assert again == [full(responder, raw) for raw in bodies]


@needs("tooltalk")
def test_over_http_lean_and_full_server_answer_alike(oracle: OracleRecording,
                                                     bodies: list[bytes]) -> None:
    sample = bodies[::7]
    with FakeOpenAIServer(oracle.responder, keep_requests=False, latency=0.001) as lean:
        fast = [post(lean, raw) for raw in sample]
        assert lean.requests == len(sample) and lean.max_in_flight == 1
    with FakeOpenAIServer(oracle.responder, keep_requests=True) as whole:
        slow = [post(whole, raw) for raw in sample]
        assert len(whole.received) == len(sample)
    assert fast == slow
    assert all(status == 200 for status, _ in fast)


def scripted() -> tuple[ScriptedResponder, list[dict[str, Any]]]:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    responder = ScriptedResponder({messages_key(messages): Message("assistant", "hello")},
                                  fallback=None)
    return responder, messages


@pytest.mark.parametrize("body", [
    {"model": "m", "messages": None},                       # not a list
    {"messages": [], "model": "m"},                         # model after messages
    {"model": "m", "messages": [], "model ": 1, "messages ": 2, "tools": []},
    {"model": "m", "messages": [{"role": "user"}], "tools": [{"x": 1}]},
])
def test_other_shapes_answer_as_the_full_path(body: dict[str, Any]) -> None:
    responder, _ = scripted()
    responder.fallback = default_responder
    raw = json.dumps(body).encode()
    fast = responder.respond_raw(raw)
    assert fast is None or fast == full(responder, raw)


def test_tail_repeating_messages_is_refused() -> None:
    responder, messages = scripted()
    raw = (b'{"model":"m","messages":' + json.dumps(messages).encode()
           + b',"messages":[],"tools":[]}')
    assert responder.respond_raw(raw) is None  # json.loads keeps the last "messages"
    assert json.loads(raw)["messages"] == []


def test_no_scripted_reply_goes_to_the_fallback_with_the_whole_request() -> None:
    seen: list[dict[str, Any]] = []

    def fallback(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return reply_to_completion(Message("assistant", "fallback"))

    responder, messages = scripted()
    responder.fallback = fallback
    other = {"model": "m", "messages": messages[:1], "tools": [{"type": "function"}]}
    assert responder.respond_raw(json.dumps(other).encode()) is None
    with FakeOpenAIServer(responder, keep_requests=False) as srv:
        status, data = post(srv, json.dumps(other).encode())
    assert status == 200 and json.loads(data)["choices"][0]["message"]["content"] == "fallback"
    assert seen == [other]


def test_no_reply_and_no_fallback_is_the_same_500() -> None:
    responder, messages = scripted()
    raw = json.dumps({"model": "m", "messages": messages[:1]}).encode()
    answers = []
    for keep in (False, True):
        with FakeOpenAIServer(responder, keep_requests=keep) as srv:
            answers.append(post(srv, raw))
    assert answers[0] == answers[1] and answers[0][0] == 500


def test_replaced_reply_is_served_not_the_old_bytes() -> None:
    responder, messages = scripted()
    raw = json.dumps({"model": "m", "messages": messages}).encode()
    first = responder.respond_raw(raw)
    responder.add(messages, Message("assistant", "changed"))
    second = responder.respond_raw(raw)
    assert first != second == full(responder, raw)
    assert json.loads(second or b"")["choices"][0]["message"]["content"] == "changed"


def test_a_subclass_of_the_responder_or_the_server_is_never_bypassed() -> None:
    class Loud(ScriptedResponder):
        def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
            return reply_to_completion(Message("assistant", "subclass"))

    base, messages = scripted()
    raw = json.dumps({"model": "m", "messages": messages}).encode()
    loud = Loud(base.replies)
    assert loud.respond_raw(raw) is None
    with FakeOpenAIServer(loud, keep_requests=False) as srv:
        assert b"subclass" in post(srv, raw)[1]

    class Watching(FakeOpenAIServer):
        seen = 0

        async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            Watching.seen += 1
            return await super().handle_chat(request)

    with Watching(base, keep_requests=False) as srv:
        assert post(srv, raw)[0] == 200
    assert Watching.seen == 1


def test_faults_still_apply_without_recording() -> None:
    responder, messages = scripted()
    raw = json.dumps({"model": "m", "messages": messages}).encode()
    with FakeOpenAIServer(responder, keep_requests=False, fault_plan={0: "429"}) as srv:
        assert post(srv, raw)[0] == 429
        assert post(srv, raw)[0] == 200
        assert srv.faults["429"] == 1 and srv.requests == 2
