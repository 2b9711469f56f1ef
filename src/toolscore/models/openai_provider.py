"""``openai/<model>``: any OpenAI-compatible chat-completions endpoint, via the official SDK.

Our transcript types already use the OpenAI chat shape, so the mapping is thin. The SDK's own
retries are switched off (``max_retries=0``): retrying is the job of :class:`ModelClient`, which
has a budget and counts attempts; two retry layers would multiply waits and hide failures.
Errors are classified here because only the provider knows which of its errors are transient.

The API key is held in memory only: it is not part of :meth:`cache_identity`, not in ``repr``
and not in any error message we build.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import sys
from typing import Any

from toolscore.models.base import (
    ContextLengthExceeded,
    InfraError,
    classify_sdk_error,
    redact,
    strip_credentials,
)
from toolscore.models.cache import ToolsMemo
from toolscore.models.loopbound import PerLoop
from toolscore.models.openai_params import (  # noqa: F401  (request_settings: public name)
    Family,
    model_family,
    request_settings,
    settings_and_drops,
    tool_choice_param,
)
from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage, clean_text

log = safe_logger(__name__)  # endpoint text in warnings is shown, never obeyed


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


def build_request(
    model: str,
    messages: list[Message],
    tools: list[ToolSpec],
    config: GenerateConfig,
    *,
    max_tokens_param: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create``; the settings are mapped for the
    model's family (:mod:`toolscore.models.openai_params`) unless ``max_tokens_param`` names
    the token-limit parameter."""
    req: dict[str, Any] = {"model": model, "messages": to_openai_messages(messages)}
    if tools:
        req["tools"] = [t.to_openai() for t in tools]
    req.update(settings_and_drops(config, bool(tools), model_family(model), max_tokens_param)[0])
    return req


def _dumps(obj: Any) -> str:
    """JSON as the SDK would send it (UTF-8 kept, no whitespace, NaN refused)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


#: The ``tools`` array of a request as JSON, rendered once per tool list rather than per call.
openai_tools_json: ToolsMemo[bytes] = ToolsMemo(
    lambda tools: _dumps([t.to_openai() for t in tools]).encode("utf-8"))


def request_body(
    model: str,
    messages: list[Message],
    tools: list[ToolSpec],
    config: GenerateConfig,
    *,
    max_tokens_param: str | None = None,
) -> bytes:
    """:func:`build_request` as the JSON body of the HTTP request, without its cost per call.

    The tool schemas are three quarters of a ToolTalk request and the same on every call, so
    their JSON comes from :data:`openai_tools_json` and is spliced in as the last member.
    """
    settings = settings_and_drops(config, bool(tools), model_family(model), max_tokens_param)[0]
    head = _dumps({"model": model, "messages": to_openai_messages(messages), **settings})
    if not tools:
        return head.encode("utf-8")
    return b"".join((head[:-1].encode("utf-8"), b',"tools":', openai_tools_json(tools), b"}"))


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


def _tokens(usage: Any, name: str) -> int:
    """A token count, or 0 when the endpoint's ``usage`` is missing or malformed (a bad usage
    field must not discard a valid answer)."""
    try:
        value = _get(usage, name, 0) if usage is not None else 0
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def parse_completion(resp: Any, model: str | None = None) -> Reply:
    """A chat completion (SDK object or plain dict) as a :class:`Reply`.

    Tool-call arguments are kept exactly as the model wrote them, even when they are not valid
    JSON: that is the model's mistake, and it is scored, not repaired. Odd shapes are read as
    documented in :func:`message_text` and :func:`_tool_calls`.
    """
    choices = _get(resp, "choices") or []
    if not isinstance(choices, list) or not choices:
        raise InfraError("completion has no choices", retryable=True)
    choice = choices[0]
    msg = _get(choice, "message")
    if msg is None:
        raise InfraError("completion choice has no message", retryable=True)
    u = _get(resp, "usage")
    usage = Usage(input_tokens=_tokens(u, "prompt_tokens"),
                  output_tokens=_tokens(u, "completion_tokens"))
    finish = _get(choice, "finish_reason")
    name = _get(resp, "model")
    return Reply(
        message=Message(role="assistant", content=message_text(_get(msg, "content")),
                        tool_calls=_tool_calls(_get(msg, "tool_calls"))),
        usage=usage,
        finish_reason=finish if isinstance(finish, str) else None,
        model=name if isinstance(name, str) and name else model,
    )


def classify_error(err: Exception) -> InfraError | ContextLengthExceeded | None:
    """Map an ``openai`` SDK exception to an :class:`InfraError` (None: not an SDK error);
    an HTTP 400 about the context length is the model's dialogue outgrowing its window."""
    import openai

    if isinstance(err, openai.APIStatusError) and err.status_code == 400 and (
            "context_length" in str(err.message).lower().replace(" ", "_")):
        return ContextLengthExceeded(f"HTTP 400: {err.message}")
    if isinstance(err, openai.APITimeoutError) or not isinstance(err, openai.OpenAIError):
        failure = _aiohttp_failure(err)
        if failure is not None:
            return InfraError(f"connection error: {failure}", retryable=True)
    return classify_sdk_error(openai, err)


def _aiohttp_failure(err: BaseException) -> BaseException | None:
    """The aiohttp error behind ``err`` when it is a failed connection, not a timeout.

    The SDK's aiohttp transport reports every aiohttp connection error (refused, reset,
    disconnected) as a connect *timeout*, and lets a few other aiohttp errors (a malformed
    response) through unwrapped; both are connection failures, as with the httpx transport.
    """
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is None:
        return None
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, aiohttp.ClientError) and not isinstance(
                cause, (TimeoutError, asyncio.TimeoutError)):
            return cause
        cause = cause.__cause__
    return None


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
        max_tokens_param: str | None = None,
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
        self.max_tokens_param = max_tokens_param  # None: as the model's family takes it
        self.family: Family = model_family(model)
        self._dropped_said: set[str] = set()
        self._post_takes_content: bool | None = None
        # The SDK's HTTP client is bound to the event loop it first ran on.
        self._clients: PerLoop[Any] = PerLoop(self._make_client, lambda c: c.close())

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, base_url={self.base_url!r})"

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "openai", "model": self.model,
                "base_url": (strip_credentials(self.base_url) or "").rstrip("/")}

    def _make_client(self) -> Any:
        """The SDK client, on the SDK's aiohttp transport when it is installed.

        The default (httpx) transport costs ~40% more CPU per request (ToolTalk at 32 in
        flight: 1.7 against 1.2 ms per call, SDK included), largely in its connection pool,
        which rescans every pooled connection, polling its socket, for each request. Without
        the ``aiohttp`` extra (or with an SDK too old to have it) the default is used.
        """
        import openai

        http_client = None
        make_aiohttp = getattr(openai, "DefaultAioHttpClient", None)
        if make_aiohttp is not None:
            try:
                http_client = make_aiohttp(timeout=self.timeout, verify=_ssl_context())
            except RuntimeError:  # the SDK without its aiohttp extra
                http_client = None
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                  timeout=self.timeout, max_retries=0, http_client=http_client)

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (also done when the loop shuts down)."""
        await self._clients.aclose()

    def _say_dropped(self, config: GenerateConfig, has_tools: bool) -> None:
        """Log, once per parameter, what this model's family made us leave out of requests."""
        dropped = settings_and_drops(config, has_tools, self.family, self.max_tokens_param)[1]
        for key in sorted(set(dropped) - self._dropped_said):
            self._dropped_said.add(key)
            log.warning("%s: %s=%r not sent (%s models take only their default)", self.name,
                        key, dropped[key], self.family.name)

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        if self.family.drops:
            self._say_dropped(config, bool(tools))
        try:
            client = await self._clients.get()
            # ``post`` with ``cast_to=object`` is ``chat.completions.create`` without its
            # request transform and response model: both are generic walks over the tool
            # schemas that cost ~15 ms of CPU per ToolTalk request, more than everything else
            # the harness does. The body goes as ready JSON bytes (``content=``), its tool
            # schemas rendered once per tool list; parse_completion reads plain dicts.
            if self._post_takes_content is None:
                self._post_takes_content = _accepts(client.post, "content")
            if self._post_takes_content:
                body = request_body(self.model, messages, tools, config,
                                    max_tokens_param=self.max_tokens_param)
                resp = await client.post("/chat/completions", content=body, cast_to=object)
            else:  # an SDK without ``content=`` serialises the dict itself
                req = build_request(self.model, messages, tools, config,
                                    max_tokens_param=self.max_tokens_param)
                resp = await client.post("/chat/completions", body=req, cast_to=object)
        except Exception as e:
            infra = classify_error(e)
            if infra is None:
                raise
            raise redact(infra, self._api_key) from None
        return parse_completion(resp, model=self.name)


@functools.lru_cache(maxsize=1)
def _ssl_context() -> Any:
    """The SDK's default TLS context, made once per process (loading the CA store costs ~50 ms
    of CPU, and every event loop gets a new SDK client); ``True`` (the same default, made per
    client) if the SDK's HTTP library cannot be found."""
    import importlib

    import openai

    try:  # httpx or httpx2, whichever this generation of the SDK is built on
        http = importlib.import_module(type(openai.DEFAULT_CONNECTION_LIMITS).__module__)
        return http.create_ssl_context()
    except (AttributeError, ImportError):
        return True


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
