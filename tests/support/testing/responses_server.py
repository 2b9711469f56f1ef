"""A fake OpenAI Responses API (``POST /v1/responses``) on 127.0.0.1, for the real
``openai-responses/`` provider.

It checks what the API checks: every ``function_call_output`` answers a ``function_call`` sent
before it, and a reasoning item sent back carries the encrypted content the server gave it
(nothing is stored). ``unsupported`` names parameters this "model" does not take (``temperature``,
``reasoning.summary``, ``include``...), refused as OpenAI refuses them: HTTP 400,
``unsupported_parameter``, the parameter in ``param``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from support.testing.openai_server import FakeOpenAIServer

ResponsesResponder = Callable[[dict[str, Any]], list[dict[str, Any]]]


def _error(message: str, param: str | None, code: str) -> tuple[int, dict[str, Any]]:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param,
                           "code": code}}


def response(output: list[dict[str, Any]], *, model: str = "o-fake", reasoning: int = 0,
             status: str = "completed") -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, "model": model,
            "output": output, "incomplete_details": None if status == "completed" else {
                "reason": "max_output_tokens"},
            "usage": {"input_tokens": 30, "output_tokens": 20 + reasoning,
                      "output_tokens_details": {"reasoning_tokens": reasoning},
                      "total_tokens": 50 + reasoning}}


class FakeResponsesServer(FakeOpenAIServer):
    """``responder`` gives the output items of a request; the server wraps them in a response
    (usage counting ``reasoning_tokens`` per reasoning item) and keeps every request in
    ``received`` and every refusal in ``refusals``."""

    def __init__(self, responder: ResponsesResponder, *, unsupported: tuple[str, ...] = (),
                 reasoning_tokens: int = 64, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answer = responder
        self.unsupported = unsupported
        self.reasoning_tokens = reasoning_tokens
        self.issued: set[str] = set()  # encrypted contents given out

    async def _route(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        path = path.split("?", 1)[0].rstrip("/")
        if method != "POST" or path != "/v1/responses":
            return 404, {"error": {"message": f"no route {method} {path}", "type": "not_found",
                                   "param": None, "code": None}}
        request = json.loads(raw or b"{}")
        self.received.append(request)
        self.requests += 1
        refused = self.refusal(request)
        if refused is not None:
            self.refusals.append(refused[1])
            return refused
        output = self.answer(request)
        for item in output:
            if item.get("type") == "reasoning" and "encrypted_content" in item:
                if "include" in request:
                    self.issued.add(item["encrypted_content"])
                else:  # only given when asked for
                    del item["encrypted_content"]
        thoughts = sum(1 for item in output if item.get("type") == "reasoning")
        return 200, response(output, model=request.get("model", "o-fake"),
                             reasoning=thoughts * self.reasoning_tokens)

    def refusal(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        for name in self.unsupported:
            head, _, sub = name.partition(".")
            if head in request and (not sub or sub in (request[head] or {})):
                return _error(f"Unsupported parameter: '{name}' is not supported with this "
                              "model.", name, "unsupported_parameter")
        calls: set[str] = set()
        for i, item in enumerate(request.get("input") or []):
            kind = item.get("type")
            if kind == "function_call":
                calls.add(item["call_id"])
            elif kind == "function_call_output" and item.get("call_id") not in calls:
                return _error(f"No tool call found for function call output with call_id "
                              f"{item.get('call_id')}.", f"input[{i}]", "invalid_value")
            elif kind == "reasoning" and item.get("encrypted_content") not in self.issued:
                return _error("The encrypted content could not be verified.",
                              f"input[{i}]", "invalid_encrypted_content")
        return None
