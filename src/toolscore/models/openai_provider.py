"""``openai/<model>``: any OpenAI-compatible chat-completions endpoint, via the official SDK.

Our transcript types already use the OpenAI chat shape, so the mapping is thin. The SDK's own
retries are switched off (``max_retries=0``): retrying is the job of :class:`ModelClient`, which
has a budget and counts attempts; two retry layers would multiply waits and hide failures.
Errors are classified here because only the provider knows which of its errors are transient.

The API key is held in memory only: it is not part of :meth:`cache_identity`, not in ``repr``
and not in any error message we build.
"""

from __future__ import annotations

import json
import os
from typing import Any

from toolscore.models.base import ContextLengthExceeded, InfraError, classify_sdk_error, redact
from toolscore.models.loopbound import PerLoop
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage

#: HTTP statuses that mean "try again" although they are 4xx.


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as chat-completions dicts (``name`` dropped on tool messages, which strict
    servers reject; ``content`` of a tool message never null)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d = m.to_dict()
        if m.role == "tool":
            d.pop("name", None)
            d["content"] = m.content or ""
        out.append(d)
    return out


def tool_choice_param(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def build_request(
    model: str,
    messages: list[Message],
    tools: list[ToolSpec],
    config: GenerateConfig,
    *,
    max_tokens_param: str = "max_tokens",
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` (``config.script`` is not sent)."""
    req: dict[str, Any] = {"model": model, "messages": to_openai_messages(messages)}
    if tools:
        req["tools"] = [t.to_openai() for t in tools]
        req["tool_choice"] = tool_choice_param(config.tool_choice)
    req["temperature"] = config.temperature
    if config.max_tokens is not None:
        req[max_tokens_param] = config.max_tokens
    if config.seed is not None:
        req["seed"] = config.seed
    if config.top_p is not None:
        req["top_p"] = config.top_p
    return req


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def parse_completion(resp: Any, model: str | None = None) -> Reply:
    """A chat completion (SDK object or plain dict) as a :class:`Reply`.

    Tool-call arguments are kept exactly as the model wrote them, even when they are not valid
    JSON: that is the model's mistake, and it is scored, not repaired.
    """
    choices = _get(resp, "choices") or []
    if not choices:
        raise InfraError("completion has no choices", retryable=True)
    choice = choices[0]
    msg = _get(choice, "message")
    if msg is None:
        raise InfraError("completion choice has no message", retryable=True)
    calls: list[ToolCall] = []
    for i, tc in enumerate(_get(msg, "tool_calls") or []):
        fn = _get(tc, "function")
        if fn is None:  # a non-function tool call (e.g. "custom"): keep what there is
            fn = _get(tc, "custom") or {}
            args = _get(fn, "input", "")
        else:
            args = _get(fn, "arguments", "")
        if args is None:
            args = ""
        elif not isinstance(args, str):
            args = json.dumps(args)
        calls.append(ToolCall(id=_get(tc, "id") or f"call_{i}", name=_get(fn, "name") or "",
                              arguments=args))
    u = _get(resp, "usage")
    usage = Usage(
        input_tokens=int(_get(u, "prompt_tokens", 0) or 0) if u is not None else 0,
        output_tokens=int(_get(u, "completion_tokens", 0) or 0) if u is not None else 0,
    )
    return Reply(
        message=Message(role="assistant", content=_get(msg, "content"), tool_calls=calls),
        usage=usage,
        finish_reason=_get(choice, "finish_reason"),
        model=_get(resp, "model") or model,
    )


def classify_error(err: Exception) -> InfraError | ContextLengthExceeded | None:
    """Map an ``openai`` SDK exception to an :class:`InfraError` (None: not an SDK error);
    an HTTP 400 about the context length is the model's dialogue outgrowing its window."""
    import openai

    if isinstance(err, openai.APIStatusError) and err.status_code == 400 and (
            "context_length" in str(err.message).lower().replace(" ", "_")):
        return ContextLengthExceeded(f"HTTP 400: {err.message}")
    return classify_sdk_error(openai, err)


class OpenAIModel:
    """A chat model behind an OpenAI-compatible endpoint.

    ``base_url`` defaults to ``$OPENAI_BASE_URL`` (else OpenAI's own); ``api_key`` to
    ``$OPENAI_API_KEY``. A keyless local endpoint (vLLM, llama.cpp server, the fake test server)
    gets a placeholder key because the SDK insists on one.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_tokens_param: str = "max_tokens",
    ):
        try:
            import openai  # noqa: F401
        except ImportError:
            raise ImportError(
                "openai/ models need the openai SDK: pip install 'toolscore[openai]'"
            ) from None
        self.model = model
        self.name = f"openai/{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ValueError(
                    "openai/ models need an API key: set OPENAI_API_KEY (or pass api_key=), "
                    "or pass base_url= for a keyless OpenAI-compatible endpoint"
                )
            key = "no-key"
        self._api_key = key
        self.timeout = timeout
        self.max_tokens_param = max_tokens_param
        # The SDK's HTTP client is bound to the event loop it first ran on.
        self._clients: PerLoop[Any] = PerLoop(self._make_client, lambda c: c.close())

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, base_url={self.base_url!r})"

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "openai", "model": self.model,
                "base_url": (self.base_url or "").rstrip("/")}

    def _make_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                  timeout=self.timeout, max_retries=0)

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (also done when the loop shuts down)."""
        await self._clients.aclose()

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        req = build_request(self.model, messages, tools, config,
                            max_tokens_param=self.max_tokens_param)
        try:
            client = await self._clients.get()
            # ``post`` with ``cast_to=object`` is ``chat.completions.create`` without its
            # request transform and response model: both are generic walks over the tool
            # schemas that cost ~15 ms of CPU per ToolTalk request, more than everything else
            # the harness does. The body is already plain JSON and parse_completion reads dicts.
            resp = await client.post("/chat/completions", body=req, cast_to=object)
        except Exception as e:
            infra = classify_error(e)
            if infra is None:
                raise
            raise redact(infra, self._api_key) from None
        return parse_completion(resp, model=self.name)
