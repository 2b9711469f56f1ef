"""How real OpenAI-compatible servers check a chat request, for the fake server.

A provider tested only against a server that accepts everything passes tests that a real
server would fail: llama-cpp-python's server answers an assistant message whose ``content`` is
null with HTTP 500, and each server words a prompt that does not fit its context in its own
way. A *dialect* reproduces, for one server, which message shapes it refuses (status and
body as it sends them) and the error it sends for a context overflow, as read in each
server's request validation:

==================  ===========================================  ==============================
dialect             assistant ``content`` refused                context overflow (HTTP 400)
==================  ===========================================  ==============================
openai              absent with no tool calls; not text/parts    ``context_length_exceeded``
vllm                not text/parts/null                          ``BadRequestError``, "maximum
                                                                 context length is N tokens"
llama.cpp           absent with no tool calls; not text/parts    ``exceed_context_size_error``
                                                                 with ``n_ctx``/``n_prompt_tokens``
llama-cpp-python    null (500, request validation); absent (500,  ``context_length_exceeded``
                    the chat template reads ``content``)
ollama              null or absent with no tool calls            "the prompt is longer than the
                                                                 context length ..."
==================  ===========================================  ==============================

Token counts are a deterministic stand-in (:func:`request_tokens`), not a tokenizer.
"""

from __future__ import annotations

import json
from typing import Any

DIALECTS = ("openai", "vllm", "llama.cpp", "llama-cpp-python", "ollama")

Answer = tuple[int, dict[str, Any]]
_ABSENT = object()


def check_dialect(name: str | None) -> None:
    if name is not None and name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")


def request_tokens(request: dict[str, Any]) -> int:
    """Words in the messages (texts, tool-call names and arguments) and in the tools' JSON:
    what a prompt costs, in a unit a test can compute from what it sends."""
    words = 0
    for m in request.get("messages") or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        words += len(content.split()) if isinstance(content, str) else 0
        for call in m.get("tool_calls") or []:
            fn = (call.get("function") or {}) if isinstance(call, dict) else {}
            words += 1 + len(str(fn.get("arguments", "")).split())
    if request.get("tools"):
        words += len(json.dumps(request["tools"]).split())
    return words + 1


def refusal(dialect: str, request: dict[str, Any]) -> Answer | None:
    """The error ``dialect``'s server answers to the request's messages, or None."""
    for i, m in enumerate(request.get("messages") or []):
        if not isinstance(m, dict):
            continue
        content = m.get("content", _ABSENT)
        calls = bool(m.get("tool_calls"))
        why = _refused(dialect, m.get("role"), content, calls)
        if why is not None:
            return _error(dialect, why.format(i=i, shape=_shape(content)))
    return None


def _shape(content: Any) -> str:
    return "absent" if content is _ABSENT else json.dumps(content)[:40]


def _refused(dialect: str, role: Any, content: Any, calls: bool) -> str | None:
    text_like = isinstance(content, (str, list))
    if dialect == "llama-cpp-python" and role == "assistant":
        if content is None:  # pydantic: the assistant message's content is NotRequired[str]
            return ("1 validation error for CreateChatCompletionRequest messages.{i}.assistant"
                    ".content Input should be a valid string [type=string_type, input_value="
                    "None, input_type=NoneType]")
        if content is _ABSENT:  # the GGUF's chat template adds message['content'] to a str
            return "'dict object' has no attribute 'content'"
        return None
    if dialect == "ollama":
        if content is None or content is _ABSENT:
            return None if calls else "invalid message content type: <nil>"
        return None if text_like else "invalid message format"
    if dialect == "llama.cpp":
        if content is _ABSENT:
            if role != "assistant":
                return "All non-assistant messages must contain 'content'"
            return None if calls else ("Assistant message must contain either 'content' or "
                                       "'tool_calls'!")
        return None if text_like or content is None else (
            "Expected 'content' to be a string or an array")
    if dialect == "openai":
        if content is _ABSENT and not (role == "assistant" and calls):
            return "Missing required parameter: 'messages[{i}].content'."
        if content is not _ABSENT and not (text_like or content is None):
            return ("Invalid type for 'messages[{i}].content': expected one of a string or "
                    "array of objects, but got {shape} instead.")
        return None
    if dialect == "vllm" and content is not _ABSENT and not (text_like or content is None):
        return "1 validation error: messages.{i}.content Input should be a valid string"
    return None


def _error(dialect: str, message: str) -> Answer:
    if dialect == "llama-cpp-python":  # its route handler turns every failure into a 500
        return 500, {"error": {"message": message, "type": "internal_server_error",
                               "param": None, "code": None}}
    if dialect == "llama.cpp":
        return 400, {"error": {"code": 400, "message": message,
                               "type": "invalid_request_error"}}
    if dialect == "vllm":
        return 400, {"error": {"message": message, "type": "BadRequestError", "param": None,
                               "code": 400}}
    if dialect == "ollama":
        return 400, {"error": {"message": message, "type": "invalid_request_error",
                               "param": None, "code": None}}
    return 400, {"error": {"message": message, "type": "invalid_request_error",
                           "param": "messages", "code": None}}


def overflow(dialect: str, tokens: int, window: int, max_tokens: Any = None) -> Answer:
    """Status and body of ``dialect``'s answer to a prompt of ``tokens`` that does not fit a
    context of ``window`` tokens, worded as that server words it."""
    if dialect == "llama.cpp":
        return 400, {"error": {
            "code": 400, "type": "exceed_context_size_error",
            "message": (f"request ({tokens} tokens) exceeds the available context size "
                        f"({window} tokens), try increasing it"),
            "n_prompt_tokens": tokens, "n_ctx": window}}
    if dialect == "vllm":
        return 400, {"error": {
            "message": (f"This model's maximum context length is {window} tokens. However, "
                        f"your prompt contains {tokens} input tokens, which exceeds this limit "
                        "even without any output tokens. Please reduce the length of the "
                        f"input prompt. (parameter=input_tokens, value={tokens})"),
            "type": "BadRequestError", "param": "input_tokens", "code": 400}}
    if dialect == "ollama":
        return 400, {"error": {
            "message": ("the prompt is longer than the context length currently available to "
                        "the model; shorten the prompt, adjust the context length in "
                        "settings, or use a model with a longer context length"),
            "type": "invalid_request_error", "param": None, "code": None}}
    if dialect == "llama-cpp-python":
        completion = max_tokens if isinstance(max_tokens, int) else None
        message = (f"This model's maximum context length is {window} tokens. However, you "
                   f"requested {(completion or 0) + tokens} tokens ({tokens} in the messages, "
                   f"{completion} in the completion). Please reduce the length of the "
                   "messages or completion.")
    else:
        message = (f"This model's maximum context length is {window} tokens. However, your "
                   f"messages resulted in {tokens} tokens. Please reduce the length of the "
                   "messages.")
    return 400, {"error": {"message": message, "type": "invalid_request_error",
                           "param": "messages", "code": "context_length_exceeded"}}
