"""``anthropic/<model>``: Claude through the official ``anthropic`` SDK (imported lazily).

Anthropic's messages API differs from the chat shape our transcripts use: the system prompt is
a separate parameter, tool calls are ``tool_use`` content blocks with a parsed ``input`` object,
tool results are ``tool_result`` blocks inside a *user* message, and roles must alternate. The
mapping is kept in pure functions (no SDK, no network) so it can be tested offline, in both
directions. As with OpenAI, the SDK's retries are off: :class:`ModelClient` retries.

Extended thinking is a model argument, ``-M thinking_budget=N`` (tokens, at least 1024): its
thinking blocks are kept on the assistant message (``reasoning`` to read, ``reasoning_items``
to send back, signature included, as the API requires in a tool-use conversation) and never
scored. What the API refuses with thinking on is adjusted and said once per model
(:func:`thinking_settings`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from toolscore.models.base import (
    InfraError,
    Model,
    classify_sdk_error,
    redact,
    strip_credentials,
    url_secrets,
)
from toolscore.models.loopbound import PerLoop
from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage

log = safe_logger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"  # the SDK's, when no base URL is given
DEFAULT_MAX_TOKENS = 1024  # Anthropic requires max_tokens; used when the config leaves it open
RAW_ARGUMENTS_KEY = "_raw_arguments"
THINKING_BUDGET = "thinking_budget"  # the model argument that turns extended thinking on
MIN_THINKING_BUDGET = 1024  # the API's least budget_tokens
THINKING_TYPES = ("thinking", "redacted_thinking")  # blocks sent back as they came


def _tool_input(call: ToolCall) -> dict[str, Any]:
    """``tool_use.input`` must be an object; an earlier malformed call is kept verbatim under
    ``_raw_arguments`` so the model still sees what it wrote."""
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        return {RAW_ARGUMENTS_KEY: call.arguments}
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: call.arguments}


def _is_error_result(content: str) -> bool:
    """Our tool messages carry ``{"response": ..., "exception": ...}``; flag exceptions."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return False
    return isinstance(value, dict) and set(value) == {"response", "exception"} and bool(
        value["exception"])


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                 "content": m.content or ""}
        if _is_error_result(m.content or ""):
            block["is_error"] = True
        return [block]
    # a thinking model's blocks go back first, as they came (the signature proves them)
    blocks: list[dict[str, Any]] = [dict(b) for b in m.reasoning_items
                                    if m.role == "assistant" and b.get("type") in THINKING_TYPES]
    if m.content:  # Anthropic rejects empty text blocks
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c)})
    return blocks


def to_anthropic_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system prompt, messages): system messages joined; tool results become user messages;
    consecutive messages of one role merged, because roles must alternate."""
    system = [m.content for m in messages if m.role == "system" and m.content]
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return ("\n\n".join(system) if system else None), out


def tool_choice_param(choice: str) -> dict[str, Any]:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "tool", "name": choice}


def to_anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.schema()}


def thinking_budget(config: GenerateConfig) -> int | None:
    """The extended-thinking budget a config asks for (``-M thinking_budget=N``), None for
    none; a one-line ValueError for a budget the API would refuse."""
    value = config.extra.get(THINKING_BUDGET)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_THINKING_BUDGET:
        raise ValueError(f"anthropic/ model argument {THINKING_BUDGET!r}: {value!r} must be an "
                         f"integer of at least {MIN_THINKING_BUDGET} (tokens of thinking)")
    return value


def check_config(config: GenerateConfig) -> None:
    """Refuse, in one line, a setting this provider cannot honour: ``reasoning_effort`` (the
    API takes a thinking budget, not a level: ``-M thinking_budget=N``) and a budget the API
    would refuse."""
    if config.reasoning_effort is not None:
        raise ValueError(f"anthropic/ models take no reasoning_effort "
                         f"({config.reasoning_effort!r}): extended thinking is set by its "
                         f"budget in tokens, -M {THINKING_BUDGET}=N (N >= "
                         f"{MIN_THINKING_BUDGET})")
    thinking_budget(config)


def thinking_settings(config: GenerateConfig, has_tools: bool
                      ) -> tuple[dict[str, Any], dict[str, str]]:
    """(the settings of a request, what extended thinking made us change and why).

    With thinking on, the API counts the thinking in ``max_tokens`` and takes only the default
    temperature, a ``top_p`` of 0.95 to 1, no ``top_k`` and a ``tool_choice`` of auto or none.
    So: ``max_tokens`` is sent as the budget plus the benchmark's limit (the answer keeps its
    room); a temperature other than 1, a ``top_p`` below 0.95 and ``top_k`` are not sent; a
    forced tool choice is sent as auto. Each change is in the second dict, said once per
    model by :class:`AnthropicModel`."""
    budget = thinking_budget(config)
    extra = {k: v for k, v in config.extra.items() if k != THINKING_BUDGET}
    out: dict[str, Any] = {"max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS}
    changed: dict[str, str] = {}
    if config.temperature is not None:  # None: the API's default
        out["temperature"] = config.temperature
    if has_tools and config.tool_choice is not None:  # None: the API's default ("auto")
        out["tool_choice"] = tool_choice_param(config.tool_choice)
    if config.top_p is not None:
        out["top_p"] = config.top_p
    out.update(extra)
    if budget is None:
        return out, changed
    answer = out["max_tokens"]
    out["max_tokens"] = budget + answer
    changed["max_tokens"] = (f"max_tokens sent as {budget} + {answer} (the thinking budget "
                             "counts toward it)")
    if out.get("temperature", 1) != 1:
        changed["temperature"] = (f"temperature={out.pop('temperature')!r} not sent "
                                  "(extended thinking takes only the default, 1)")
    if not 0.95 <= out.get("top_p", 1) <= 1:
        changed["top_p"] = (f"top_p={out.pop('top_p')!r} not sent (extended thinking takes "
                            "0.95 to 1)")
    if "top_k" in out:
        changed["top_k"] = f"top_k={out.pop('top_k')!r} not sent (not with extended thinking)"
    if out.get("tool_choice", {}).get("type") in ("any", "tool"):
        changed["tool_choice"] = (f"tool_choice={config.tool_choice!r} sent as auto (extended "
                                  "thinking takes only auto or none)")
        out["tool_choice"] = {"type": "auto"}
    out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return out, changed


def build_request(
    model: str, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create``. Mapped: ``max_tokens`` (required by the
    API, so :data:`DEFAULT_MAX_TOKENS` when open), ``temperature``, ``top_p``, the thinking
    budget (:func:`thinking_settings`) and every other extra model argument as a keyword
    (``extra_body`` too, which the SDK merges into the body); not sent: ``seed`` (the API has
    none); refused: ``reasoning_effort`` (:func:`check_config`)."""
    check_config(config)
    system, msgs = to_anthropic_messages(messages)
    settings = thinking_settings(config, bool(tools))[0]
    req: dict[str, Any] = {"model": model, "messages": msgs,
                           "max_tokens": settings.pop("max_tokens")}
    if "temperature" in settings:
        req["temperature"] = settings.pop("temperature")
    if system:
        req["system"] = system
    if tools:
        req["tools"] = [to_anthropic_tool(t) for t in tools]
    req.update(settings)
    return req


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _assistant(blocks: list[Any]) -> Message:
    """An assistant message from its content blocks: text, tool calls, and thinking (its text
    as ``reasoning``, the blocks themselves as ``reasoning_items``)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thoughts: list[str] = []
    items: list[dict[str, Any]] = []
    for b in blocks:
        kind = _get(b, "type")
        if kind == "text":
            texts.append(_get(b, "text") or "")
        elif kind == "thinking":
            thoughts.append(_get(b, "thinking") or "")
            items.append({"type": "thinking", "thinking": _get(b, "thinking") or "",
                          "signature": _get(b, "signature") or ""})
        elif kind == "redacted_thinking":
            items.append({"type": "redacted_thinking", "data": _get(b, "data") or ""})
        elif kind == "tool_use":
            inp = _get(b, "input") or {}
            if isinstance(inp, dict) and set(inp) == {RAW_ARGUMENTS_KEY}:
                args = str(inp[RAW_ARGUMENTS_KEY])
            else:
                args = json.dumps(inp, ensure_ascii=False)
            calls.append(ToolCall(id=_get(b, "id") or "", name=_get(b, "name") or "",
                                  arguments=args))
    return Message(role="assistant", content="".join(texts) if texts else None,
                   tool_calls=calls, reasoning="\n\n".join(thoughts) if thoughts else None,
                   reasoning_items=items)


def parse_response(resp: Any, model: str | None = None) -> Reply:
    """An Anthropic ``Message`` (SDK object or dict) as a :class:`Reply`."""
    message = _assistant(list(_get(resp, "content") or []))
    u = _get(resp, "usage")
    usage = Usage(input_tokens=int(_get(u, "input_tokens", 0) or 0) if u is not None else 0,
                  output_tokens=int(_get(u, "output_tokens", 0) or 0) if u is not None else 0)
    return Reply(message=message, usage=usage,
                 finish_reason=_get(resp, "stop_reason"), model=_get(resp, "model") or model)


def from_anthropic_messages(system: str | None, messages: list[dict[str, Any]]) -> list[Message]:
    """The inverse mapping (for tests and for importing Anthropic-format transcripts)."""
    out: list[Message] = [Message(role="system", content=system)] if system else []
    names: dict[str, str] = {}
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if m["role"] == "assistant":
            message = _assistant(content)
            names.update({c.id: c.name for c in message.tool_calls})
            out.append(message)
            continue
        texts: list[str] = []
        for b in content:
            if b.get("type") == "tool_result":
                body = b.get("content", "")
                if isinstance(body, list):
                    body = "".join(x.get("text", "") for x in body if x.get("type") == "text")
                out.append(Message(role="tool", content=body, tool_call_id=b["tool_use_id"],
                                   name=names.get(b["tool_use_id"])))
            elif b.get("type") == "text":
                texts.append(b.get("text", ""))
        if texts:
            out.append(Message(role="user", content="".join(texts)))
    return out


def classify_error(err: Exception) -> InfraError | None:
    """Map an ``anthropic`` SDK exception to an :class:`InfraError` (None: not an SDK error)."""
    import anthropic

    return classify_sdk_error(anthropic, err)


class AnthropicModel(Model):
    """A Claude model; ``api_key`` defaults to ``$ANTHROPIC_API_KEY``, kept in memory only."""

    provider = "anthropic"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0):
        try:
            import anthropic  # noqa: F401
        except ImportError:
            raise ImportError(
                "anthropic/ models need the anthropic SDK: pip install 'toolscore[anthropic]'"
            ) from None
        self.model = model
        self.name = f"anthropic/{model}"
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ValueError("anthropic/ models need an API key: set ANTHROPIC_API_KEY "
                             "(or pass api_key=)")
        self._api_key = key
        self.timeout = timeout
        self._clients: PerLoop[Any] = PerLoop(self._make_client, lambda c: c.close())
        self._changes_said: set[str] = set()

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, base_url={self.base_url!r})"

    def secrets(self) -> list[str]:
        return [self._api_key, *url_secrets(self.base_url)]

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "anthropic", "model": self.model,
                "base_url": (strip_credentials(self.base_url) or "").rstrip("/")}

    def check_config(self, config: GenerateConfig) -> None:
        check_config(config)

    def _make_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self.base_url,
                                        timeout=self.timeout, max_retries=0)

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (also done when the loop shuts down)."""
        await self._clients.aclose()

    async def preflight(self) -> None:
        """Raise :class:`~toolscore.models.base.EndpointUnreachable` when nothing listens at
        the endpoint (a TCP connect to it, or to the environment's proxy; no request)."""
        from toolscore.models.openai.http import check_reachable, env_proxy

        url = self.base_url or DEFAULT_BASE_URL
        await check_reachable(url, env_proxy(url))

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        req = build_request(self.model, messages, tools, config)
        if THINKING_BUDGET in config.extra:
            changed = thinking_settings(config, bool(tools))[1]
            for key in sorted(set(changed) - self._changes_said):
                self._changes_said.add(key)
                log.warning("%s: %s", self.name, changed[key])
        try:
            client = await self._clients.get()
            resp = await client.messages.create(**req)
        except Exception as e:
            infra = classify_error(e)
            if infra is None:
                raise
            raise redact(infra, self._api_key) from None
        return parse_response(resp, model=self.name)
