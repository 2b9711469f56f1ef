"""Responders of the fake OpenAI server: a request's JSON in, a ``chat.completion`` JSON out.

They are plain functions of the request so a test can script a conversation (by the messages it
will send) without a server; :class:`ScriptedResponder` can also answer from the raw request
body, which is what keeps the fake server cheap under throughput benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from support.testing.lean_decode import LeanDecoder
from toolscore.models.cache import sha256_json
from toolscore.types import Message, Reply, ToolCall

Responder = Callable[[dict[str, Any]], dict[str, Any]]



def _normal_message(m: Message | dict[str, Any]) -> dict[str, Any]:
    msg = m if isinstance(m, Message) else Message.from_dict(m)
    return {
        "role": msg.role,
        "content": msg.content or "",
        "tool_calls": [[c.id, c.name, c.arguments] for c in msg.tool_calls],
        "tool_call_id": msg.tool_call_id,
    }


def messages_key(messages: Iterable[Message | dict[str, Any]]) -> str:
    """A hash of the conversation that ignores representation details (null vs empty content,
    ``name`` on tool messages), so a test can key a reply on the :class:`Message` list it sends."""
    return sha256_json([_normal_message(m) for m in messages])


def _words(text: str | None) -> int:
    return len((text or "").split())


def reply_to_completion(
    reply: Reply | Message, *, model: str = "fake-model", prompt_tokens: int = 0
) -> dict[str, Any]:
    """A :class:`Reply` (or assistant :class:`Message`) as a ``chat.completion`` JSON object."""
    msg = reply.message if isinstance(reply, Reply) else reply
    out: dict[str, Any] = {"role": "assistant", "content": msg.content}
    if msg.tool_calls:
        out["tool_calls"] = [c.to_dict() for c in msg.tool_calls]
    completion = _words(msg.content) + sum(_words(c.arguments) + 1 for c in msg.tool_calls)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": out,
                     "finish_reason": "tool_calls" if msg.tool_calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                  "total_tokens": prompt_tokens + completion},
    }


def prompt_tokens(request: dict[str, Any]) -> int:
    """A deterministic stand-in for token counting: words in the messages."""
    return sum(_words(m.get("content") if isinstance(m.get("content"), str) else "")
               for m in request.get("messages", [])) + 1


def text_responder(text: str) -> Responder:
    """Always answer ``text``."""
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        return reply_to_completion(Message(role="assistant", content=text),
                                   model=request.get("model", "fake-model"),
                                   prompt_tokens=prompt_tokens(request))
    return respond


def default_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Call the first tool (no arguments) after a user turn when tools are offered, else say
    "Done." — enough to drive a conversation loop through a tool call and a final answer."""
    msgs = request.get("messages", [])
    tools = request.get("tools") or []
    model = request.get("model", "fake-model")
    if tools and msgs and msgs[-1].get("role") == "user" and request.get("tool_choice") != "none":
        name = tools[0]["function"]["name"]
        msg = Message(role="assistant", tool_calls=[ToolCall(id="call_0", name=name,
                                                             arguments="{}")])
    else:
        msg = Message(role="assistant", content="Done.")
    return reply_to_completion(msg, model=model, prompt_tokens=prompt_tokens(request))


class ScriptedResponder:
    """Replies looked up by :func:`messages_key` of the request's messages, else ``fallback``.

    A reply is a value: replace it (``add``, or assign in ``replies``) rather than mutating it
    once served, as :meth:`respond_raw` reuses the bytes it rendered for it."""

    MAX_MEMO = 1 << 16

    def __init__(
        self,
        replies: dict[str, Reply | Message] | None = None,
        fallback: Responder | None = default_responder,
    ):
        self.replies: dict[str, Reply | Message] = dict(replies or {})
        self.fallback = fallback
        self._lean = LeanDecoder()
        self._keys: dict[str, tuple[str, int]] = {}  # messages text -> key, prompt tokens
        self._rendered: dict[tuple[str, str, int], tuple[Reply | Message, bytes]] = {}

    def add(self, messages: Iterable[Message | dict[str, Any]], reply: Reply | Message) -> None:
        self.replies[messages_key(messages)] = reply

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self.replies.get(messages_key(request.get("messages", [])))
        if reply is not None:
            return reply_to_completion(reply, model=request.get("model", "fake-model"),
                                       prompt_tokens=prompt_tokens(request))
        if self.fallback is None:
            raise LookupError("no scripted reply for this conversation")
        return self.fallback(request)

    def respond_raw(self, raw: bytes) -> bytes | None:
        """``json.dumps(self(json.loads(raw))).encode()`` without decoding the whole request,
        or None where only that full path can answer: a body :class:`LeanDecoder` does not
        read, a conversation with no scripted reply (the fallback sees the whole request), a
        subclass that answers differently. The key and token count of a conversation are
        memoised on its exact ``messages`` text, a reply's bytes on its key and model."""
        if type(self).__call__ is not ScriptedResponder.__call__:
            return None
        got = self._lean.decode(raw, self._keys)
        if got is None:
            return None
        model, text, messages = got
        known = self._keys.get(text)
        if known is None:
            if not isinstance(messages, list):
                return None
            known = (messages_key(messages), prompt_tokens({"messages": messages}))
            if len(self._keys) >= self.MAX_MEMO:
                self._keys.clear()
            self._keys[text] = known
        key, tokens = known
        reply = self.replies.get(key)
        if reply is None:
            return None
        if not isinstance(model, str):  # unusual, and not hashable in general: no memo
            return json.dumps(reply_to_completion(reply, model=model, prompt_tokens=tokens)
                              ).encode("utf-8")
        memo = (key, model, tokens)
        hit = self._rendered.get(memo)
        if hit is not None and hit[0] is reply:
            return hit[1]
        data = json.dumps(reply_to_completion(reply, model=model, prompt_tokens=tokens)
                          ).encode("utf-8")
        if len(self._rendered) >= self.MAX_MEMO:
            self._rendered.clear()
        self._rendered[memo] = (reply, data)
        return data
