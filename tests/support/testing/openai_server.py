"""A fake OpenAI-compatible HTTP server, so the real ``openai`` provider can be tested offline.

Mocking the SDK would test our assumptions about the SDK; a real socket speaking the real wire
format tests the provider, the SDK and our retry layer together. The server is an asyncio loop in
one background thread (not a thread per request): it usually shares the process, and so the GIL,
with the client under test, and dozens of waking threads would add their switching cost to
every concurrent request. Replies come from a pluggable
*responder* (request JSON → chat.completion JSON). Faults are injected deterministically from a
seed: each fault is decided from (request hash, attempt number), so the same test fails the same
way every time and a retried request eventually gets through.

Its CPU per request is charged to throughput figures meant to measure the harness, so when
nothing needs the whole request (no recording, no faults) a :class:`ScriptedResponder` answers
from the raw body (:meth:`ScriptedResponder.respond_raw`: the same bytes, a fraction of the
cost), and the reply is sent after ``latency`` by a timer rather than by a task.

Usage::

    with FakeOpenAIServer(ScriptedResponder(), error_rate=0.3, seed=1) as srv:
        model = get_model("openai/fake", base_url=srv.base_url)
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections import Counter
from typing import Any

from support.testing.dialects import check_dialect, overflow, refusal, request_tokens
from support.testing.http1_server import HTTP1Connection
from support.testing.responders import (  # the responders' public home was this module
    Responder,
    ScriptedResponder,
    default_responder,
    messages_key,
    prompt_tokens,
    reply_to_completion,
    text_responder,
)
from toolscore.models.cache import sha256_json

__all__ = ["FAULTS", "MALFORMED_ARGUMENTS", "FakeOpenAIServer", "Responder",
           "ScriptedResponder", "default_responder", "messages_key", "prompt_tokens",
           "reply_to_completion", "text_responder"]

#: Rate-drawn empty answers one request gets at the most (a fault plan may script more).
TRANSIENT_EMPTIES = 2

#: Fault kinds understood by ``fault_plan`` and produced by the rates.
FAULTS = ("429", "500", "400", "timeout", "empty", "malformed")
MALFORMED_ARGUMENTS = '{"oops": '


class FakeOpenAIServer:
    """``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1, in a thread.

    Fault rates are probabilities per attempt: ``error_rate`` (half 429, half 500),
    ``timeout_rate`` (sleep ``timeout_sleep`` s, past the client's timeout), ``empty_rate`` (no
    content, no tool calls; transient: at most ``TRANSIENT_EMPTIES`` for one request, as the
    client takes a third empty answer to one call as the model's answer, and a slow host's
    extra retries would otherwise now and then draw three) and ``malformed_rate`` (tool-call
    arguments replaced by invalid JSON).
    ``fault_plan`` maps an attempt number (0 = first time a request is seen) to a fault kind and
    overrides the rates, for tests that need an exact sequence (it also knows "400", a
    non-retryable bad request). ``requests`` counts requests served; ``max_in_flight`` is the
    peak number being handled at once. The responder runs on the server's loop, so it should be
    quick; ``latency`` is simulated without blocking other requests.

    ``dialect`` (one of :data:`~support.testing.dialects.DIALECTS`) makes the server check
    messages as that real server does, refusing what it refuses with its status and body (kept
    in ``refusals``); ``context_window`` makes it answer a prompt of that many stand-in tokens
    or more with the dialect's context-overflow error (counted in ``overflows``). Without a
    dialect every shape is accepted, as before. ``accepts_functions=False`` answers a request
    in the legacy ``functions`` shape as an endpoint without it does when it checks its
    fields (HTTP 400, "Unrecognized request argument supplied: functions").
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        model: str = "fake-model",
        latency: float = 0.0,
        seed: int = 0,
        error_rate: float = 0.0,
        timeout_rate: float = 0.0,
        empty_rate: float = 0.0,
        malformed_rate: float = 0.0,
        timeout_sleep: float = 10.0,
        fault_plan: dict[int, str] | None = None,
        retry_after: str | None = None,
        keep_requests: bool = True,
        port: int = 0,
        dialect: str | None = None,
        context_window: int | None = None,
        accepts_functions: bool = True,
    ):
        self.responder: Responder = responder or default_responder
        self.model = model
        self.latency = latency
        self.seed = seed
        self.rates = {"error": error_rate, "timeout": timeout_rate, "empty": empty_rate,
                      "malformed": malformed_rate}
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after  # the Retry-After header of every 429, when set
        self.fault_plan = dict(fault_plan or {})
        for kind in self.fault_plan.values():
            if kind is not None and kind not in FAULTS:
                raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
        check_dialect(dialect)
        self.dialect = dialect
        self.context_window = context_window
        self.accepts_functions = accepts_functions
        self.refusals: list[dict[str, Any]] = []
        self.overflows = 0
        self.keep_requests = keep_requests
        self.received: list[dict[str, Any]] = []
        self.faults: Counter[str] = Counter()
        self.requests = 0
        self.last_headers: dict[str, str] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._attempts: Counter[str] = Counter()
        self._empties: Counter[str] = Counter()  # rate-drawn empty answers, per request
        self._port = port
        self._address: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connections: set[HTTP1Connection] = set()

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._address is None:
            raise RuntimeError("server not started")
        host, port = self._address
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                server = loop.run_until_complete(loop.create_server(
                    lambda: HTTP1Connection(self._dispatch, self._connections),
                    "127.0.0.1", self._port, backlog=512))
                self._address = server.sockets[0].getsockname()[:2]
            except BaseException as e:  # e.g. port in use: report it to start()
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                server.close()
                for conn in list(self._connections):
                    conn.close()
                tasks = list(self._tasks)
                for task in tasks:
                    task.cancel()
                if tasks:
                    loop.run_until_complete(asyncio.wait(tasks, timeout=5))
                loop.run_until_complete(server.wait_closed())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour -------------------------------------------------------------------------
    def fault_for(self, key: str, attempt: int) -> str | None:
        """The fault for the ``attempt``-th sighting of request ``key`` (deterministic)."""
        if attempt in self.fault_plan:
            return self.fault_plan[attempt]
        rng = random.Random(f"{self.seed}:{key}:{attempt}")
        r = rng.random()
        edge = 0.0
        for kind in ("error", "timeout", "empty", "malformed"):
            edge += self.rates[kind]
            if r < edge:
                if kind == "error":
                    return "429" if rng.random() < 0.5 else "500"
                return kind
        return None

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON body for one chat-completions request."""
        fault = None
        if self.fault_plan or any(self.rates.values()):
            # attempts are counted only where faults depend on them: hashing a whole request
            # (tool schemas included) was most of this server's CPU per request
            key = sha256_json(request)
            attempt = self._attempts[key]
            self._attempts[key] += 1
            fault = self.fault_for(key, attempt)
            if fault == "empty" and attempt not in self.fault_plan:
                self._empties[key] += 1
                if self._empties[key] > TRANSIENT_EMPTIES:
                    fault = None
        if self.keep_requests:
            self.received.append(request)
        checked = self.check(request)
        if checked is not None:
            return checked
        if fault:
            self.faults[fault] += 1
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if fault == "429":
            return 429, _error("rate limit exceeded (injected)", "rate_limit_exceeded")
        if fault == "500":
            return 500, _error("internal error (injected)", "server_error")
        if fault == "400":
            return 400, _error("bad request (injected)", "invalid_request_error")
        if fault == "timeout":
            await asyncio.sleep(self.timeout_sleep)
        try:
            body = self.responder(request)
        except Exception as e:  # a broken responder is a server error, as it would be live
            return 500, _error(f"responder failed: {e}", "server_error")
        if fault == "empty":
            for choice in body.get("choices", []):
                choice["message"] = {"role": "assistant", "content": None}
                choice["finish_reason"] = "stop"
        elif fault == "malformed":
            for choice in body.get("choices", []):
                for tc in choice.get("message", {}).get("tool_calls") or []:
                    tc["function"]["arguments"] = MALFORMED_ARGUMENTS
        return 200, body

    def check(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """What the dialect's server answers before generating: a refused message shape, or
        a prompt that does not fit ``context_window``; None when it would go on."""
        dialect = self.dialect or "openai"
        if not self.accepts_functions and "functions" in request:
            answer = 400, _error("Unrecognized request argument supplied: functions",
                                 "invalid_request_error")
            self.refusals.append(answer[1])
            return answer
        if self.dialect is not None:
            refused = refusal(dialect, request)
            if refused is not None:
                self.refusals.append(refused[1])
                return refused
        if self.context_window is not None:
            tokens = request_tokens(request)
            if tokens >= self.context_window:
                self.overflows += 1
                limit = request.get("max_tokens", request.get("max_completion_tokens"))
                return overflow(dialect, tokens, self.context_window, limit)
        return None

    def models_body(self) -> dict[str, Any]:
        return {"object": "list", "data": [
            {"id": self.model, "object": "model", "created": 0, "owned_by": "toolscore"}]}

    async def _route(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path.endswith("/models"):
            return 200, self.models_body()
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, _error(f"no route {method} {path}", "not_found")
        try:
            request = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return 400, _error("request body is not JSON", "invalid_request_error")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self.handle_chat(request)
        finally:
            self.in_flight -= 1
            self.requests += 1

    def _lean(self) -> bool:
        """Whether a request needs nothing but its reply: no recording, no faults, and the
        request handling of this class (a subclass may look at every request)."""
        return (not self.keep_requests and not self.fault_plan and not any(self.rates.values())
                and self.dialect is None and self.context_window is None
                and type(self).handle_chat is FakeOpenAIServer.handle_chat
                and type(self)._route is FakeOpenAIServer._route)

    def _dispatch(self, conn: HTTP1Connection, method: str, path: str,
                  headers: dict[str, str], raw: bytes) -> None:
        """Answer one request: from the raw body when the responder can and nothing else
        needs the request (a timer sends it after ``latency``), else through :meth:`_route`
        in a task."""
        self.last_headers = headers  # what a test checks of the request's metadata
        fast = getattr(self.responder, "respond_raw", None)
        if (fast is not None and method == "POST" and self._lean()
                and path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")):
            try:
                data = fast(raw)
            except Exception:  # e.g. a message it cannot read: the full path answers
                data = None
            if data is not None:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                if self.latency > 0 and self._loop is not None:
                    self._loop.call_later(self.latency, self._sent, conn, data)
                else:
                    self._sent(conn, data)
                return
        task = asyncio.get_running_loop().create_task(self._answer(conn, method, path, raw))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _sent(self, conn: HTTP1Connection, data: bytes) -> None:
        self.in_flight -= 1
        self.requests += 1
        conn.respond(200, data)

    async def _answer(self, conn: HTTP1Connection, method: str, path: str, raw: bytes) -> None:
        try:
            status, body = await self._route(method, path, raw)
            data = json.dumps(body).encode("utf-8")
        except asyncio.CancelledError:
            conn.close()  # stop(): end quietly
            return
        except Exception:  # e.g. a body that is not UTF-8: end the connection, as garbage
            conn.close()
            return
        extra = (f"Retry-After: {self.retry_after}\r\n"
                 if status == 429 and self.retry_after is not None else "")
        conn.respond(status, data, extra)


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "code": code, "param": None}}

