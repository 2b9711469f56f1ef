"""A fake Anthropic Messages API (``POST /v1/messages``) on 127.0.0.1, so the real ``anthropic/``
provider (SDK included) can be tested offline against the real wire format.

It checks what the API checks with extended thinking on, answering as the API does (HTTP 400,
``invalid_request_error``): a budget of at least 1024 tokens and below ``max_tokens``, no
temperature but 1, ``top_p`` of 0.95 to 1 only, no ``top_k``, a tool choice of auto or none, and
in a tool-use conversation the last assistant message starting with the thinking block it was
given, its signature unchanged. Replies come from a responder (request JSON → message JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from support.testing.openai_server import FakeOpenAIServer

AnthropicResponder = Callable[[dict[str, Any]], dict[str, Any]]


def message(content: list[dict[str, Any]], *, stop: str = "end_turn", model: str = "claude-x",
            input_tokens: int = 10, output_tokens: int = 20) -> dict[str, Any]:
    """A Messages API reply holding ``content`` blocks."""
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}


def signature(thinking: str) -> str:
    """The signature this server gives a thinking text (and checks when it comes back)."""
    return f"sig-{len(thinking)}-{sum(map(ord, thinking)) % 99991}"


def _invalid(text: str) -> tuple[int, dict[str, Any]]:
    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}}


def thinking_refusal(request: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """What the API answers before generating a request with thinking on that it refuses."""
    thinking = request.get("thinking")
    if not thinking or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        return _invalid("thinking.enabled.budget_tokens: Input should be greater than or "
                        "equal to 1024")
    if budget >= request.get("max_tokens", 0):
        return _invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    if request.get("temperature", 1) != 1:
        return _invalid("`temperature` may only be set to 1 when thinking is enabled")
    if not 0.95 <= request.get("top_p", 1) <= 1:
        return _invalid("`top_p` must be greater than or equal to 0.95 when thinking is "
                        "enabled")
    if "top_k" in request:
        return _invalid("`top_k` is not allowed when thinking is enabled")
    if (request.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return _invalid("Thinking may not be enabled when tool_choice forces tool use.")
    messages = request.get("messages") or []
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is not None and messages[-1]["role"] == "user" and any(
            b.get("type") == "tool_result" for b in messages[-1]["content"]):
        first = last["content"][0] if last["content"] else {}
        if first.get("type") not in ("thinking", "redacted_thinking"):
            return _invalid("messages.1.content.0.type: Expected `thinking` or "
                            "`redacted_thinking`, but found `" + str(first.get("type")) +
                            "`. When `thinking` is enabled, a final `assistant` message must "
                            "start with a thinking block.")
        if first["type"] == "thinking" and first.get("signature") != signature(
                first.get("thinking", "")):
            return _invalid("Invalid `signature` in `thinking` block")
    return None


class FakeAnthropicServer(FakeOpenAIServer):
    """The fake server's loop and HTTP/1.1 side, routing ``POST /v1/messages`` to
    ``responder``; requests are kept in ``received``, refusals in ``refusals``."""

    def __init__(self, responder: AnthropicResponder, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answer = responder

    @property
    def base_url(self) -> str:  # the SDK adds /v1/messages
        return super().base_url[:-len("/v1")]

    async def _route(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        path = path.split("?", 1)[0].rstrip("/")
        if method != "POST" or path != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error",
                                                    "message": f"no route {method} {path}"}}
        request = json.loads(raw or b"{}")
        self.received.append(request)
        self.requests += 1
        refused = thinking_refusal(request)
        if refused is not None:
            self.refusals.append(refused[1])
            return refused
        return 200, self.answer(request)
