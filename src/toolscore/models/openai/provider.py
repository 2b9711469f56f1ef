"""``openai/<model>``: any OpenAI-compatible chat-completions endpoint.

Our transcript types already use the OpenAI chat shape, so the mapping is thin: a request is
rendered to JSON bytes here, sent by :mod:`toolscore.models.openai.http` (aiohttp directly: the
official SDK's request path cost as much CPU as the rest of the harness together), and the reply
read back into a :class:`Reply`. Nothing here retries: that is :class:`ModelClient`'s job, which
has a budget and counts attempts; two retry layers would multiply waits and hide failures.
Errors are classified in :mod:`~toolscore.models.openai.http`, which alone knows which of its
failures are transient.

The API key is held in memory only: it is not part of :meth:`cache_identity`, not in ``repr``
and not in any error message we build.
"""

from __future__ import annotations

import json
import os
from typing import Any

from toolscore.models.base import (
    ContextLengthExceeded,
    InfraError,
    Model,
    redact,
    strip_credentials,
    url_secrets,
)
from toolscore.models.cache import ToolsMemo
from toolscore.models.openai.completion import (  # noqa: F401 (their home was this module)
    message_text,
    parse_completion,
    reasoning_text,
    reasoning_tokens,
)
from toolscore.models.openai.http import ChatEndpoint
from toolscore.models.openai.legacy import (
    FUNCTIONS,
    TOOLS,
    legacy_body,
    official,
    refused,
    wants_functions,
)
from toolscore.models.openai.params import (
    Family,
    model_family,
    settings_and_drops,
)
from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

log = safe_logger(__name__)  # endpoint text in warnings is shown, never obeyed


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as chat-completions dicts, in the one shape every common server accepts:
    ``name`` dropped on tool messages (strict servers reject it) and ``content`` never null.

    An assistant message that only calls tools has no text. OpenAI, vLLM, llama.cpp's server
    and Ollama take its content as null, as ``""`` or absent; llama-cpp-python's server refuses
    null (HTTP 500: its request model types that content as a string) and, with chat templates
    that add ``message['content']`` to a string, absent too. ``""`` is text-free for all of
    them, so the request means the same. Other roles get ``""`` for the same reason (Ollama
    refuses null content on a message without tool calls).

    A reasoning model's reasoning is not sent back: chat-completions servers take none in the
    history (vLLM and llama.cpp's chat templates drop it), and strict ones refuse the field."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d = m.to_dict()
        d.pop("reasoning", None)
        d.pop("reasoning_items", None)
        if m.role == "tool":
            d.pop("name", None)
        if d["content"] is None:
            d["content"] = ""
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
    model's family (:mod:`toolscore.models.openai.params`) unless ``max_tokens_param`` names
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


class MessageJSON:
    """Each message's JSON in a request body, rendered once per distinct message.

    A conversation sends its history again with every call: the system prompt and earlier
    turns on each call of a turn, the turn's calls and results on each later call. Messages
    are found by value (every field of the message and of its tool calls: strings hash once
    and compare by identity first), so an edited message is a new entry and the body is the
    one :func:`build_request` gives, byte for byte. A message with an unhashable field (a
    malformed shape a provider let through) is rendered each time. Kept until
    ``max_chars`` characters of JSON, then started afresh.
    """

    def __init__(self, max_chars: int = 4_000_000) -> None:
        self._texts: dict[tuple[Any, ...], str] = {}
        self._chars = 0
        self._max_chars = max_chars

    def __call__(self, message: Message) -> str:
        try:
            key = (message.role, message.content, message.tool_call_id, message.name,
                   tuple((c.id, c.name, c.arguments) for c in message.tool_calls))
            text = self._texts.get(key)
        except (TypeError, AttributeError):  # unhashable, or an odd shape: not kept
            return _dumps(to_openai_messages([message])[0])
        if text is None:
            text = _dumps(to_openai_messages([message])[0])
            if self._chars + len(text) > self._max_chars:
                self._texts, self._chars = {}, 0
            self._texts[key] = text
            self._chars += len(text)
        return text


#: The messages of requests as JSON, by message (see :class:`MessageJSON`).
openai_message_json = MessageJSON()


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
    their JSON comes from :data:`openai_tools_json` and is spliced in as the last member; each
    message's JSON comes from :data:`openai_message_json`.
    """
    settings = settings_and_drops(config, bool(tools), model_family(model), max_tokens_param)[0]
    if "model" in settings or "messages" in settings:  # an argument overrides them in place
        head = _dumps({"model": model, "messages": to_openai_messages(messages), **settings})
    else:
        rest = _dumps(settings)[1:-1]
        head = "".join((_dumps({"model": model})[:-1], ',"messages":[',
                        ",".join(map(openai_message_json, messages)), "]",
                        "," if rest else "", rest, "}"))
    if not tools:
        return head.encode("utf-8")
    return b"".join((head[:-1].encode("utf-8"), b',"tools":', openai_tools_json(tools), b"}"))


def _userinfo_key(url: str | None) -> str | None:
    """The key written into a base URL (``http://user:KEY@host/v1``, or ``http://KEY@host``),
    used when no key is given otherwise: HTTP clients do not send URL credentials, so it would
    be dropped silently. The URL itself is stored and sent without them."""
    if not url or "@" not in url:
        return None
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    found = parts.password or parts.username
    return unquote(found) if found else None


class OpenAIModel(Model):
    """A chat model behind an OpenAI-compatible endpoint.

    ``base_url`` defaults to ``$OPENAI_BASE_URL`` (else OpenAI's own); ``api_key`` to
    ``$OPENAI_API_KEY``. A keyless local endpoint (vLLM, llama.cpp server, the fake test server)
    gets a placeholder key, as the SDK sent, since some servers want an Authorization header.
    """

    provider = "openai"
    endpoint_path = "/chat/completions"  # after the base URL

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_tokens_param: str | None = None,
    ):
        self.model = model
        self.name = f"{self.provider}/{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or _userinfo_key(self.base_url)
        if not key:
            if self.base_url is None:
                raise ValueError(
                    f"{self.provider}/ models need an API key: set OPENAI_API_KEY (or pass "
                    "api_key=), or pass base_url= for a keyless OpenAI-compatible endpoint"
                )
            key = "no-key"
        self._api_key = key
        self.timeout = timeout
        self.max_tokens_param = max_tokens_param  # None: as the model's family takes it
        self.family: Family = model_family(model)
        self._dropped_said: set[str] = set()
        self._endpoint = ChatEndpoint(self.base_url, key, timeout, self.endpoint_path)
        # found, not imported: plain http:// (a local server) never needs it
        if self._endpoint.needs_aiohttp and not _installed("aiohttp"):
            raise ImportError(f"{self.provider}/ models need aiohttp for https:// endpoints and "
                              "proxies: pip install 'toolscore[openai]'")
        # set when the endpoint refused the legacy ``functions`` shape: ``tools`` from then on
        self.functions_refused: str | None = None
        self.official = official(self.base_url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r})"

    def secrets(self) -> list[str]:
        return [self._api_key, *url_secrets(self.base_url)]

    def cache_identity(self) -> dict[str, object]:
        return {"provider": self.provider, "model": self.model,
                "base_url": (strip_credentials(self.base_url) or "").rstrip("/")}

    async def aclose(self) -> None:
        """Close the HTTP session of the running loop (also done when the loop shuts down)."""
        await self._endpoint.aclose()

    async def preflight(self) -> None:
        """Raise :class:`~toolscore.models.base.EndpointUnreachable` when nothing listens at
        the endpoint (a TCP connect, no request; see ``openai_http.check_reachable``)."""
        await self._endpoint.preflight()

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
        if wants_functions(config, tools, self.official) and self.functions_refused is None:
            settings = settings_and_drops(config, True, self.family, self.max_tokens_param)[0]
            try:
                reply = await self._post(legacy_body(self.model, messages, tools, settings))
                reply.api = FUNCTIONS
                return reply
            except InfraError as e:
                if e.retryable or not refused(e.status):
                    raise
                self.functions_refused = str(e)[:300]
                log.warning("%s: the endpoint refused the legacy 'functions' request shape "
                            "(%s); sending 'tools' from now on", self.name,
                            self.functions_refused)
        # The body goes as ready JSON bytes, its tool schemas rendered once per tool list
        # (three quarters of a ToolTalk request); parse_completion reads plain dicts.
        reply = await self._post(request_body(self.model, messages, tools, config,
                                              max_tokens_param=self.max_tokens_param))
        if config.call_api is not None:
            reply.api = TOOLS
        return reply

    async def _post(self, body: bytes) -> Reply:
        try:
            resp = await self._endpoint.post(body)
        except (InfraError, ContextLengthExceeded) as e:
            raise redact(e, self._api_key) from None
        return parse_completion(resp, model=self.name)


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (aiohttp costs 0.3-0.8 s, paid
    by every sweep worker although only https endpoints and proxies use it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules: not importable
        return False
