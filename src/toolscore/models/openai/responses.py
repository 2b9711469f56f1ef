"""``openai-responses/<model>``: OpenAI's Responses API (``POST {base_url}/responses``), the API
of its reasoning models, or any server that speaks it.

A conversation is sent as input items: messages, the model's ``function_call`` items and the
``function_call_output`` items of their results; tools as function tools (not strict: benchmark
schemas are not written for strict mode). Nothing is stored on the server (``store`` false):
the reasoning items a model produced come back with their encrypted content
(``include: reasoning.encrypted_content``) and are sent again before the calls they led to, so
a tool-use conversation keeps its reasoning without any server state.

Reasoning is asked for with ``-M reasoning_effort=LEVEL`` and ``-M reasoning_summary=auto``
(the default; ``concise``, ``detailed``, or ``none`` to ask for none). Its summaries go to the
message's ``reasoning`` (kept in the transcript, never scored), its token count to
``Usage.reasoning_tokens``.

Which of these parameters a model takes is decided by the endpoint, not by a table of model
names: a non-retryable HTTP 400 that says a parameter we sent is unsupported (``temperature``
for a reasoning model, ``reasoning`` for a chat model) makes us send the request once more
without it, and leave it out of every later request of the run, said once in the log.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolscore.models.base import ContextLengthExceeded, InfraError, redact
from toolscore.models.openai.completion import message_text, reasoning_tokens, token_count
from toolscore.models.openai.params import tool_choice_param
from toolscore.models.openai.provider import OpenAIModel
from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage, clean_text

log = safe_logger(__name__)

SUMMARY = "reasoning_summary"  # the model argument naming the summary asked for
DEFAULT_SUMMARY = "auto"
#: What may be left out when the endpoint says it does not take it (dotted: inside an object).
OPTIONAL = ("temperature", "top_p", "reasoning.effort", "reasoning.summary", "reasoning",
            "include", "store", "max_output_tokens")
ENCRYPTED = "reasoning.encrypted_content"
_PARAM = re.compile(r"""['"]param['"]:\s*['"]([\w.]+)['"]""")
_NAMED = re.compile(r"""[Uu]nsupported (?:parameter|value)s?:?\s*['"]([\w.]+)['"]""")


def function_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", "name": spec.name, "description": spec.description,
            "parameters": spec.schema(), "strict": False}


def choice_param(choice: str) -> str | dict[str, Any]:
    found = tool_choice_param(choice)
    return found if isinstance(found, str) else {"type": "function", "name": choice}


def to_input(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as Responses input items. An assistant message becomes its reasoning items
    (those holding their encrypted content: without it, and with nothing stored, the server
    cannot read them), its text, then one ``function_call`` item per call."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id or "",
                          "output": m.content or ""})
            continue
        if m.role != "assistant":
            items.append({"role": m.role, "content": m.content or ""})
            continue
        for r in m.reasoning_items:
            if r.get("type") == "reasoning" and r.get("encrypted_content"):
                items.append({k: r[k] for k in ("type", "id", "summary", "encrypted_content")
                              if k in r})
        if m.content or not m.tool_calls:
            items.append({"role": "assistant", "content": m.content or ""})
        for c in m.tool_calls:
            items.append({"type": "function_call", "call_id": c.id, "name": c.name,
                          "arguments": c.arguments})
    return items


def build_request(model: str, messages: list[Message], tools: list[ToolSpec],
                  config: GenerateConfig, left_out: frozenset[str] = frozenset()
                  ) -> dict[str, Any]:
    """The JSON body of a Responses request; ``left_out`` are the parameters the endpoint said
    it does not take (see :data:`OPTIONAL`). ``seed`` is not sent: the API has none."""
    req: dict[str, Any] = {"model": model, "input": to_input(messages)}
    if tools:
        req["tools"] = [function_tool(t) for t in tools]
        if config.tool_choice is not None:
            req["tool_choice"] = choice_param(config.tool_choice)
    if config.temperature is not None:
        req["temperature"] = config.temperature
    if config.top_p is not None:
        req["top_p"] = config.top_p
    if config.max_tokens is not None:
        req["max_output_tokens"] = config.max_tokens
    extra = dict(config.extra)
    reasoning: dict[str, Any] = {}
    if config.reasoning_effort is not None:
        reasoning["effort"] = config.reasoning_effort
    summary = extra.pop(SUMMARY, DEFAULT_SUMMARY)
    if summary not in (None, "none"):
        reasoning["summary"] = summary
    if reasoning:
        req["reasoning"] = reasoning
    req["store"] = False
    req["include"] = [ENCRYPTED]
    body = extra.pop("extra_body", None)
    req.update(extra)
    for name in left_out:
        head, _, sub = name.partition(".")
        if sub and isinstance(req.get(head), dict):
            req[head].pop(sub, None)
            if not req[head]:
                del req[head]
        elif not sub:
            req.pop(name, None)
    if isinstance(body, dict):
        req.update(body)  # last and never left out, as with chat completions
    return req


def unsupported(err: InfraError, sent: dict[str, Any]) -> str | None:
    """The parameter a refused request names as unsupported, when it is one we may leave out
    and sent; None otherwise."""
    text = str(err)
    if err.retryable or err.status != 400 or "support" not in text.lower():
        return None
    for pattern in (_PARAM, _NAMED):
        for found in pattern.findall(text):
            name = str(found)
            head, _, sub = name.partition(".")
            if name not in OPTIONAL and head not in OPTIONAL:
                continue
            if head in sent and (not sub or (isinstance(sent[head], dict)
                                             and sub in sent[head])):
                return name if name in OPTIONAL else head
    return None


def _text(parts: Any, kinds: tuple[str, ...]) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [p["text"] for p in parts
            if isinstance(p, dict) and p.get("type") in kinds and isinstance(p.get("text"), str)]


def parse_response(resp: Any, model: str | None = None) -> Reply:
    """A Responses API reply as a :class:`Reply`: the text of its ``message`` items, its
    ``function_call`` items as tool calls (arguments as written), the summaries (or reasoning
    text) of its ``reasoning`` items as the message's ``reasoning`` and the items themselves
    as its ``reasoning_items``."""
    if not isinstance(resp, dict):
        raise InfraError("response is not a JSON object", retryable=True)
    if resp.get("status") == "failed":
        error = resp.get("error") or {}
        raise InfraError(f"response failed: {error.get('message') or error}"[:500],
                         retryable=True)
    output = resp.get("output")
    if not isinstance(output, list):
        raise InfraError("response has no output", retryable=True)
    texts: list[str] = []
    calls: list[ToolCall] = []
    thoughts: list[str] = []
    items: list[dict[str, Any]] = []
    for i, item in enumerate(output):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            texts += _text(item.get("content"), ("output_text", "refusal"))
        elif kind == "function_call":
            args = item.get("arguments")
            calls.append(ToolCall(
                id=str(item.get("call_id") or item.get("id") or f"call_{i}"),
                name=clean_text(str(item.get("name") or "")),
                arguments=clean_text(args if isinstance(args, str)
                                     else json.dumps(args, ensure_ascii=False))))
        elif kind == "reasoning":
            said = (_text(item.get("summary"), ("summary_text",))
                    or _text(item.get("content"), ("reasoning_text",)))
            thoughts += [clean_text(t) for t in said]
            items.append(item)
    u = resp.get("usage")
    usage = Usage(input_tokens=token_count(u, "input_tokens"),
                  output_tokens=token_count(u, "output_tokens"),
                  reasoning_tokens=reasoning_tokens(u, "output_tokens_details"))
    incomplete = (resp.get("incomplete_details") or {}).get("reason") if resp.get(
        "status") == "incomplete" else None
    finish = ("length" if incomplete == "max_output_tokens" else incomplete
              or ("tool_calls" if calls else "stop"))
    name = resp.get("model")
    text = message_text("".join(texts)) if texts else None
    return Reply(message=Message(role="assistant", content=text, tool_calls=calls,
                                 reasoning="\n\n".join(thoughts) if thoughts else None,
                                 reasoning_items=items),
                 usage=usage, finish_reason=finish if isinstance(finish, str) else None,
                 model=name if isinstance(name, str) and name else model)


class OpenAIResponsesModel(OpenAIModel):
    """A model behind ``POST {base_url}/responses`` (key and base URL as for ``openai/``)."""

    provider = "openai-responses"
    endpoint_path = "/responses"

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        #: what the endpoint said it does not take, left out of every later request
        self.left_out: set[str] = set()

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        for _ in range(len(OPTIONAL) + 1):
            req = build_request(self.model, messages, tools, config, frozenset(self.left_out))
            try:
                return await self._send(req)
            except InfraError as e:
                name = unsupported(e, req)
                if name is None:
                    raise
                if name not in self.left_out:  # requests in flight may learn it together
                    self.left_out.add(name)
                    log.warning("%s: the endpoint does not take %r (HTTP 400: unsupported); "
                                "not sent from now on", self.name, name)
        raise InfraError("the endpoint refused every parameter left out", retryable=False)

    async def _send(self, req: dict[str, Any]) -> Reply:
        body = json.dumps(req, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            resp = await self._endpoint.post(body.encode("utf-8"))
        except (InfraError, ContextLengthExceeded) as e:
            raise redact(e, self._api_key) from None
        return parse_response(resp, model=self.name)
