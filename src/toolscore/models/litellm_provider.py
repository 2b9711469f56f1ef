"""``litellm/<model>``: any provider LiteLLM routes to (``litellm/anthropic/claude-…``,
``litellm/bedrock/…``, ``litellm/openai/<name>`` with ``base_url=`` for any OpenAI-compatible
server), through ``litellm.acompletion``. LiteLLM (the ``litellm`` extra) is imported only when
such a model is first built.

LiteLLM speaks the chat-completions shape our transcripts use, so a request is our messages as
for ``openai/`` and a reply is read by the same code: a reasoning model's reasoning
(``reasoning_content``) goes to the message's ``reasoning``, never its content; Anthropic's
thinking blocks (``thinking_blocks``) are kept and sent back on the assistant messages they
came with. LiteLLM's own retries are off (``num_retries=0``): :class:`ModelClient` retries.
Its errors are classified by their HTTP status as every provider's are.

LiteLLM fetches a table of model prices from the network when imported unless
``$LITELLM_LOCAL_MODEL_COST_MAP`` is set; toolscore sets it (when unset) so that building a
model never waits on the network: the table is not needed to call a model.
"""

from __future__ import annotations

import os
from typing import Any

from toolscore.models.base import (
    RETRYABLE_4XX,
    ContextLengthExceeded,
    InfraError,
    Model,
    redact,
    strip_credentials,
    url_secrets,
)
from toolscore.models.openai.completion import parse_completion
from toolscore.models.openai.http import context_overflow
from toolscore.models.openai.params import tool_choice_param
from toolscore.models.openai.provider import to_openai_messages
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

THINKING_TYPES = ("thinking", "redacted_thinking")


def to_litellm_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as for ``openai/``, an assistant message's Anthropic thinking blocks
    added as ``thinking_blocks`` (LiteLLM sends them back to Anthropic as its API requires)."""
    out = to_openai_messages(messages)
    for m, d in zip(messages, out, strict=True):
        blocks = [b for b in m.reasoning_items if b.get("type") in THINKING_TYPES]
        if m.role == "assistant" and blocks:
            d["thinking_blocks"] = blocks
    return out


def build_request(model: str, messages: list[Message], tools: list[ToolSpec],
                  config: GenerateConfig) -> dict[str, Any]:
    """The keyword arguments of ``litellm.acompletion`` (without endpoint and key): every
    setting that is set, extra model arguments as keywords (LiteLLM maps or refuses them per
    provider; ``-M drop_params=true`` makes it drop what a provider does not take)."""
    req: dict[str, Any] = {"model": model, "messages": to_litellm_messages(messages)}
    if tools:
        req["tools"] = [t.to_openai() for t in tools]
        if config.tool_choice is not None:
            req["tool_choice"] = tool_choice_param(config.tool_choice)
    for key in ("temperature", "max_tokens", "seed", "top_p", "reasoning_effort"):
        value = getattr(config, key)
        if value is not None:
            req[key] = value
    req.update(config.extra)
    return req


def read_reply(resp: Any, model: str) -> Reply:
    """A LiteLLM ``ModelResponse`` as a :class:`Reply` (the chat-completions reading, plus the
    thinking blocks of Anthropic's models as ``reasoning_items``)."""
    data = resp.model_dump() if hasattr(resp, "model_dump") else resp
    reply = parse_completion(data, model=model)
    try:
        blocks = data["choices"][0]["message"].get("thinking_blocks") or []
    except (KeyError, IndexError, TypeError, AttributeError):
        blocks = []
    reply.message.reasoning_items = [dict(b) for b in blocks
                                     if isinstance(b, dict) and b.get("type") in THINKING_TYPES]
    return reply


def classify(err: Exception) -> InfraError | ContextLengthExceeded | None:
    """A LiteLLM exception as an :class:`InfraError` (None: not one of LiteLLM's). A context
    overflow is :class:`ContextLengthExceeded`; 5xx, 408, 409, 429, timeouts and connection
    errors are retryable, other 4xx are not."""
    module = type(err).__module__
    if not (module.startswith("litellm") or module.startswith("openai")):
        return None
    name = type(err).__name__
    text = f"{name}: {err}"
    if name == "ContextWindowExceededError" or context_overflow(str(err)):
        return ContextLengthExceeded(text)
    if name in ("Timeout", "APITimeoutError"):
        return InfraError(f"request timed out: {err}", retryable=True, status=408)
    status = getattr(err, "status_code", None)
    if isinstance(status, int):
        return InfraError(f"HTTP {status}: {text}", retryable=status >= 500
                          or status in RETRYABLE_4XX, status=status)
    return InfraError(f"connection error: {text}", retryable=True)


class LiteLLMModel(Model):
    """A model LiteLLM routes to; ``base_url`` and ``api_key`` are passed to it as
    ``api_base`` and ``api_key`` (None: LiteLLM reads the provider's own variables; an
    ``openai/`` route to a ``base_url`` with no key anywhere gets a placeholder, as a keyless
    local server needs none)."""

    provider = "litellm"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0):
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm  # noqa: F401
        except ImportError:
            raise ImportError("litellm/ models need LiteLLM: pip install 'toolscore[litellm]'"
                              ) from None
        self.model = model
        self.name = f"litellm/{model}"
        self.base_url = base_url
        if (api_key is None and base_url and model.startswith("openai/")
                and not os.environ.get("OPENAI_API_KEY")):
            api_key = "no-key"  # a keyless OpenAI-compatible server, as openai/ takes it
        self._api_key = api_key
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.model!r}, base_url={self.base_url!r})"

    def secrets(self) -> list[str]:
        return [s for s in (self._api_key, *url_secrets(self.base_url)) if s]

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "litellm", "model": self.model,
                "base_url": (strip_credentials(self.base_url) or "").rstrip("/")}

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        import litellm

        req = build_request(self.model, messages, tools, config)
        if self.base_url:
            req["api_base"] = self.base_url
        if self._api_key:
            req["api_key"] = self._api_key
        try:
            resp = await litellm.acompletion(**req, timeout=self.timeout, num_retries=0)
        except Exception as e:
            known = classify(e)
            if known is None:
                raise
            raise redact(known, self.secrets()) from None
        return read_reply(resp, self.name)
