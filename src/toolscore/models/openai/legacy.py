"""The legacy ``functions`` shape of an OpenAI chat-completions request.

Before ``tools``, the chat-completions API took tool documents as ``functions`` and a model
called at most one of them per reply, as ``function_call`` (``{"name", "arguments"}``) beside
the message's content; the call's result went back as a ``function`` message naming the
function. Runners written then (ToolTalk's among them) send this shape, so a benchmark that
reproduces one asks for it with ``GenerateConfig.call_api = "functions"``. OpenAI still serves
it. Many OpenAI-compatible servers (vLLM, llama.cpp's server, Ollama) do not: they ignore an
unknown ``functions`` field without an error, and the model then sees no tools at all. So
``call_api`` says: "functions" (the legacy shape; an endpoint that refuses it with 400, 404 or
422 gets ``tools`` from then on), "tools", or "auto" (the legacy shape for OpenAI's own API,
``tools`` for any other endpoint). Each reply says which shape it came from (``Reply.api``).

Messages are rendered as those runners built them: a call message's content stays ``null``
(not the ``""`` the ``tools`` shape sends for servers that refuse null), one call per message.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.types import GenerateConfig, Message, ToolSpec

FUNCTIONS = "functions"
TOOLS = "tools"
AUTO = "auto"
CALL_APIS = (AUTO, FUNCTIONS, TOOLS)
OPENAI_HOST = "api.openai.com"


def official(base_url: str | None) -> bool:
    """Is this OpenAI's own API (no base URL, or its host)?"""
    if not base_url:
        return True
    from urllib.parse import urlsplit

    return (urlsplit(base_url).hostname or "").lower() == OPENAI_HOST


def wants_functions(config: GenerateConfig, tools: list[ToolSpec], is_official: bool) -> bool:
    """Does this request go in the legacy shape? Only with tools to offer, and only for a tool
    choice the legacy API can say ("required" has no ``function_call`` equivalent)."""
    asked = config.call_api == FUNCTIONS or (config.call_api == AUTO and is_official)
    return asked and bool(tools) and config.tool_choice != "required"


def legacy_message(message: Message) -> dict[str, Any]:
    """One message in the legacy shape (a message calling several tools keeps the first: the
    legacy API carries one call per message)."""
    if message.role == "tool":
        return {"role": "function", "name": message.name, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        call = message.tool_calls[0]
        out["function_call"] = {"name": call.name, "arguments": call.arguments}
    return out


def function_call_param(choice: str) -> str | dict[str, str]:
    """``tool_choice`` as the legacy ``function_call`` parameter."""
    return choice if choice in ("auto", "none") else {"name": choice}


def legacy_body(model: str, messages: list[Message], tools: list[ToolSpec],
                settings: dict[str, Any]) -> bytes:
    """The request body: model, messages, ``functions``, then the settings (a ``tool_choice``
    among them sent as ``function_call``), as the SDK of the time serialised it."""
    body: dict[str, Any] = {"model": model,
                            "messages": [legacy_message(m) for m in messages],
                            "functions": [t.to_openai_function() for t in tools]}
    for key, value in settings.items():
        if key == "tool_choice":
            body["function_call"] = function_call_param(value if isinstance(value, str)
                                                        else value["function"]["name"])
        else:
            body[key] = value
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def refused(status: int | None) -> bool:
    """Does an HTTP status on a legacy request mean the endpoint does not take the shape (bad
    request, unknown field, not found), rather than a passing failure?"""
    return status in (400, 404, 422)
