"""A chat completion read back into a :class:`~toolscore.types.Reply`: text, tool calls in any
shape an endpoint sends, token counts, and a reasoning model's reasoning kept apart from its
answer."""

from __future__ import annotations

import json
from typing import Any

from toolscore.models.base import InfraError
from toolscore.types import Message, Reply, ToolCall, Usage, clean_text


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def message_text(content: Any) -> str | None:
    """The text of a message's ``content``: a string, or the standard list of parts (text
    parts joined). Any other shape (a number, an object) is the model's malformed output: it is
    kept as its JSON text so it is scored and visible, never a crash."""
    if content is None or isinstance(content, str):
        return None if content is None else clean_text(content)
    if isinstance(content, list):
        parts = []
        for part in content:
            text = part if isinstance(part, str) else _get(part, "text")
            if isinstance(text, str):
                parts.append(text)
            elif part is not None:
                parts.append(_json_text(part))
        return clean_text("".join(parts))
    return _json_text(content)


def _json_text(value: Any) -> str:
    try:
        return clean_text(json.dumps(value, ensure_ascii=False, default=str))
    except (ValueError, TypeError, RecursionError):
        return clean_text(repr(value)[:10000])


def _tool_calls(raw: Any) -> list[ToolCall]:
    """Tool calls in any shape an endpoint sends. A call that is not a function call of the
    usual shape is kept with what could be read (a name that is not a string becomes its JSON
    text, so it is an unknown tool), and a ``tool_calls`` that is not a list becomes one
    nameless call holding it: the model's malformed output is scored, not dropped."""
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    calls: list[ToolCall] = []
    for i, tc in enumerate(items):
        if not isinstance(tc, dict) and not hasattr(tc, "function"):
            calls.append(ToolCall(id=f"call_{i}", name="", arguments=_json_text(tc)))
            continue
        fn = _get(tc, "function")
        if fn is None:  # a non-function tool call (e.g. "custom"): keep what there is
            fn = _get(tc, "custom") or {}
            args = _get(fn, "input", "")
        else:
            args = _get(fn, "arguments", "")
        if args is None:
            args = ""
        elif not isinstance(args, str):
            args = _json_text(args)
        name = _get(fn, "name") or ""
        call_id = _get(tc, "id") or f"call_{i}"
        calls.append(ToolCall(id=call_id if isinstance(call_id, str) else f"call_{i}",
                              name=clean_text(name) if isinstance(name, str)
                              else _json_text(name),
                              arguments=clean_text(args)))
    return calls


def token_count(usage: Any, name: str) -> int:
    """A token count, or 0 when the endpoint's ``usage`` is missing or malformed (a bad usage
    field must not discard a valid answer)."""
    try:
        value = _get(usage, name, 0) if usage is not None else 0
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def reasoning_text(msg: Any) -> str | None:
    """What a reasoning model behind a chat-completions server reasoned: the message's
    ``reasoning_content`` (vLLM, llama.cpp's server, DeepSeek) or ``reasoning`` (Ollama,
    OpenRouter, newer vLLM); None when it has neither or they are empty."""
    for name in ("reasoning_content", "reasoning"):
        value = _get(msg, name)
        if isinstance(value, str):
            if value:
                return clean_text(value)
        elif value is not None:
            text = message_text(value)
            if text:
                return text
    return None


def reasoning_tokens(usage: Any, details: str = "completion_tokens_details") -> int:
    """The reasoning tokens of a ``usage`` (``<details>.reasoning_tokens``), 0 when not said."""
    return token_count(_get(usage, details) if usage is not None else None, "reasoning_tokens")


def parse_completion(resp: Any, model: str | None = None) -> Reply:
    """A chat completion (SDK object or plain dict) as a :class:`Reply`.

    Tool-call arguments are kept exactly as the model wrote them, even when they are not valid
    JSON: that is the model's mistake, and it is scored, not repaired. Odd shapes are read as
    documented in :func:`message_text` and :func:`_tool_calls`. A reasoning model's reasoning
    (:func:`reasoning_text`) goes to the message's ``reasoning``, never to its content: what
    it says there, a tool call written out or the answer itself, is not the model's answer.
    """
    choices = _get(resp, "choices") or []
    if not isinstance(choices, list) or not choices:
        raise InfraError("completion has no choices", retryable=True)
    choice = choices[0]
    msg = _get(choice, "message")
    if msg is None:
        raise InfraError("completion choice has no message", retryable=True)
    u = _get(resp, "usage")
    usage = Usage(input_tokens=token_count(u, "prompt_tokens"),
                  output_tokens=token_count(u, "completion_tokens"),
                  reasoning_tokens=reasoning_tokens(u))
    finish = _get(choice, "finish_reason")
    name = _get(resp, "model")
    calls = _get(msg, "tool_calls")
    if calls is None and _get(msg, "function_call") is not None:
        # the legacy shape: one call, beside the content, with no id of its own
        calls = [{"id": "call_0", "type": "function", "function": _get(msg, "function_call")}]
    return Reply(
        message=Message(role="assistant", content=message_text(_get(msg, "content")),
                        tool_calls=_tool_calls(calls), reasoning=reasoning_text(msg)),
        usage=usage,
        finish_reason=finish if isinstance(finish, str) else None,
        model=name if isinstance(name, str) and name else model,
    )
