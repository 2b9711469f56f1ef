"""The HTTP path of the ``openai/`` provider: toolscore's own plain-HTTP client
(:mod:`toolscore.models.openai.http1`) for ``http://`` endpoints without a proxy, aiohttp for the
rest (TLS, proxies, or ``$TOOLSCORE_HTTP_CLIENT=aiohttp``); one connection pool per event loop.

Why not the official SDK: a chat-completions call is one POST of a JSON body and one JSON
reply, and everything the SDK adds around it (its request model, header and URL objects of an
``httpx``-shaped layer over aiohttp, its response wrapper) cost about 1 ms of CPU per call,
half the harness's whole cost per call, which capped one process near 600 calls/s
(``perf/throughput.py`` measures it). Here the body arrives as ready bytes, the session and
its headers are built once per loop, and the reply is parsed straight into plain dicts. On a
local endpoint aiohttp's own machinery was then the largest cost left (~0.3 ms per call); the
plain-HTTP client does the same exchange for ~0.1 ms, with the same errors.

What the SDK guaranteed is kept, with the same texts, so that logs, stored errors and the
retry layer see no difference: a non-2xx status is ``HTTP <status>: Error code: <status> -
<body>``, retryable for 5xx, 408, 409 and 429 and never for other 4xx, with ``Retry-After``
read off the response; a 400 about the context length is :class:`ContextLengthExceeded`; a
timeout is ``request timed out`` (status 408) and a failed connection ``connection error``,
both retryable; a 2xx body that is not JSON is a retryable ``API error``. The SDK's own
retries were off (``max_retries=0``): retrying is :class:`ModelClient`'s job, here as before.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import os
import socket
from typing import Any

from toolscore.models.base import (
    RETRYABLE_4XX,
    ContextLengthExceeded,
    EndpointUnreachable,
    InfraError,
    retry_after,
    strip_credentials,
)
from toolscore.models.limits.deadline import timeout as time_limit
from toolscore.models.loopbound import PerLoop
from toolscore.models.openai import http1

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TIMEOUT_TEXT = "request timed out: Request timed out."
#: Seconds a preflight connect may take before the endpoint is given the benefit of the doubt.
CONNECT_TIMEOUT = 5.0


@functools.cache
def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("toolscore")
    except metadata.PackageNotFoundError:
        return "dev"


def request_headers(api_key: str) -> dict[str, str]:
    """What every request carries: the key, the JSON content type and, as the SDK sends them,
    the organisation and project named by ``$OPENAI_ORG_ID`` and ``$OPENAI_PROJECT_ID``."""
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
               "Accept": "application/json", "User-Agent": f"toolscore/{_version()}"}
    for name, var in (("OpenAI-Organization", "OPENAI_ORG_ID"),
                      ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        value = os.environ.get(var)
        if value:
            headers[name] = value
    return headers


def status_message(status: int, raw: bytes) -> str:
    """The SDK's text for an error response: ``Error code: N - <parsed body>``, else the raw
    text, else the bare code."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        return f"Error code: {status} - {json.loads(text)}"
    except ValueError:
        return text or f"Error code: {status}"


def context_overflow(message: str) -> bool:
    """Whether an error's text says the request does not fit the model's context, in the
    words each server uses: ``context_length_exceeded`` (OpenAI, llama-cpp-python), "maximum
    context length" (vLLM), ``exceed_context_size_error`` / "available context size"
    (llama.cpp's own server), "longer than the context length" (Ollama)."""
    text = message.lower().replace(" ", "_")
    return "context_length" in text or "context_size" in text


def status_error(status: int, raw: bytes, response: Any) -> InfraError | ContextLengthExceeded:
    """The error for a non-2xx reply (``response`` supplies the Retry-After headers)."""
    message = status_message(status, raw)
    if status == 400 and context_overflow(message):
        return ContextLengthExceeded(f"HTTP 400: {message}")
    return InfraError(f"HTTP {status}: {message}", retryable=status >= 500 or status in
                      RETRYABLE_4XX, status=status, retry_after=retry_after(response))


class ChatEndpoint:
    """``POST {base_url}/chat/completions`` (or another ``path``) of ready JSON bytes; returns
    the parsed reply.

    The connection pool is unbounded (``limit=0``): the number of requests in flight is the
    client layer's limit, one semaphore per model, and a second, smaller cap here would queue
    requests where no timeout accounts for the wait. Credentials written into ``base_url`` are
    dropped: the key goes in the Authorization header only.
    """

    def __init__(self, base_url: str | None, api_key: str, timeout: float,
                 path: str = "/chat/completions") -> None:
        base = strip_credentials(base_url or DEFAULT_BASE_URL) or DEFAULT_BASE_URL
        self.base_url = base
        self.url = base.rstrip("/") + path
        self.timeout = timeout
        self._headers = request_headers(api_key)
        self._proxy = env_proxy(self.url)
        self._sessions: PerLoop[Any] = PerLoop(self._make_session, lambda s: s.close())
        self._plain = plain_target(self.url, self._proxy)
        #: whether requests go through aiohttp (https://, a proxy); plain http:// needs nothing
        self.needs_aiohttp = self._plain is None
        self._pools: PerLoop[http1.Pool] = PerLoop(self._make_pool, lambda p: p.aclose())

    def _make_pool(self) -> http1.Pool:
        assert self._plain is not None
        host, port, path = self._plain
        return http1.Pool(host, port, path, self._headers)

    def _make_session(self) -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=0, ssl=_ssl_context())
        return aiohttp.ClientSession(
            connector=connector, headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout))

    async def aclose(self) -> None:
        await self._sessions.aclose()
        await self._pools.aclose()

    async def preflight(self, timeout: float = CONNECT_TIMEOUT) -> None:
        """See :func:`check_reachable` (through the proxy, when one is used)."""
        await check_reachable(self.url, self._proxy, timeout, shown=self.base_url)

    async def post(self, body: bytes) -> Any:
        """The reply's JSON; raises :class:`InfraError` or :class:`ContextLengthExceeded`."""
        if self._plain is None:
            raw, status, resp = await self._post_aiohttp(body)
        else:
            pool = await self._pools.get()
            try:
                resp = await pool.post(body, self.timeout)
            except TimeoutError:
                raise InfraError(TIMEOUT_TEXT, retryable=True, status=408) from None
            except (http1.HTTPError, OSError) as e:
                raise InfraError(f"connection error: {_describe(e)}", retryable=True) from None
            raw, status = resp.body, resp.status
        if not 200 <= status < 300:
            raise status_error(status, raw, resp)
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise InfraError(f"API error: response body is not JSON ({e})",
                             retryable=True) from None

    async def _post_aiohttp(self, body: bytes) -> tuple[bytes, int, Any]:
        import aiohttp

        session = await self._sessions.get()
        try:
            async with session.post(self.url, data=body, proxy=self._proxy) as resp:
                raw = await resp.read()
                status = resp.status
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            raise InfraError(TIMEOUT_TEXT, retryable=True, status=408) from None
        except (aiohttp.ClientError, OSError) as e:  # refused, reset, garbled, closed
            raise InfraError(f"connection error: {_describe(e)}", retryable=True) from None
        return raw, status, resp


# What a failed connect means nothing listens there: refused, no route, address unusable.
_NOBODY = frozenset({errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH,
                     errno.EADDRNOTAVAIL, errno.ENETDOWN, errno.EHOSTDOWN})


async def check_reachable(url: str, proxy: str | None = None,
                          timeout: float = CONNECT_TIMEOUT, *, shown: str | None = None) -> None:
    """Raise :class:`EndpointUnreachable` (one line: the URL and the cause) when nothing
    listens at ``url``'s host and port (or ``proxy``'s, which is what requests connect to):
    the name does not resolve, or every address refuses or has no route. A TCP connect only,
    closed at once: no request reaches the model. Anything that answers passes, and so does a
    connect still pending after ``timeout`` seconds (slowness is the retries' business).
    ``shown``: the URL to name instead of ``url`` (the base URL the user gave)."""
    from urllib.parse import urlsplit

    target = proxy or url
    shown = strip_credentials(target if proxy or shown is None else shown) or target
    try:
        parts = urlsplit(target)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        raise EndpointUnreachable(f"{shown}: not a usable URL ({e})") from None
    if not host:
        raise EndpointUnreachable(f"{shown}: no host in the URL")
    what = "proxy " if proxy else ""
    loop = asyncio.get_running_loop()
    try:
        async with time_limit(timeout):
            try:
                found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as e:
                if e.errno == socket.EAI_AGAIN:  # the resolver did not answer: not a "no"
                    return
                raise EndpointUnreachable(f"{what}{shown}: unknown host {host!r} "
                                          f"({e.strerror or e})") from None
            causes: list[str] = []
            for family, kind, proto, _, address in found:
                cause = await _connect(loop, family, kind, proto, address)
                if cause is None:
                    return  # something listens
                causes.append(cause)
    except TimeoutError:
        return  # slow, not absent: the run's retries will tell
    raise EndpointUnreachable(f"{what}{shown}: nothing answers at {host}:{port} "
                              f"({'; '.join(dict.fromkeys(causes)) or 'no address'})")


async def _connect(loop: asyncio.AbstractEventLoop, family: int, kind: int, proto: int,
                   address: Any) -> str | None:
    """None when a TCP connection to ``address`` opens (it is closed at once), else why not.
    A failure other than "nobody there" (e.g. too many open files) is this machine's, not the
    endpoint's: it passes."""
    try:
        sock = socket.socket(family, kind, proto)
    except OSError:  # e.g. IPv6 off on this machine
        return None
    try:
        sock.setblocking(False)
        await loop.sock_connect(sock, address)
    except OSError as e:
        if e.errno in _NOBODY:
            return os.strerror(e.errno).lower()
        return None
    finally:
        sock.close()
    return None


def plain_target(url: str, proxy: str | None) -> tuple[str, int, str] | None:
    """(host, port, path) when :mod:`toolscore.models.openai.http1` serves ``url``: plain
    ``http://`` without a proxy, unless ``$TOOLSCORE_HTTP_CLIENT`` is ``aiohttp``; None: aiohttp
    does."""
    from urllib.parse import urlsplit

    if proxy or os.environ.get("TOOLSCORE_HTTP_CLIENT", "").lower() == "aiohttp":
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or 80
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname:
        return None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, path


def env_proxy(url: str) -> str | None:
    """The proxy that ``$HTTPS_PROXY``/``$HTTP_PROXY``/``$NO_PROXY`` name for ``url``, read
    once: the SDK's HTTP client honoured them, and aiohttp's own ``trust_env`` would also look
    the host up in ``~/.netrc`` on a worker thread for every request."""
    from urllib.parse import urlsplit
    from urllib.request import (  # type: ignore[attr-defined]  # in urllib, not in its stubs
        getproxies_environment,
        proxy_bypass_environment,
    )

    parts = urlsplit(url)
    proxies = getproxies_environment()
    if not parts.hostname or proxy_bypass_environment(parts.hostname, proxies):
        return None
    return proxies.get(parts.scheme) or proxies.get("all") or None


def _describe(err: BaseException) -> str:
    return str(err) or type(err).__name__


@functools.lru_cache(maxsize=1)
def _ssl_context() -> Any:
    """One TLS context per process (loading the CA store costs ~50 ms of CPU and every event
    loop gets a new session): certifi's CA bundle when installed, as the SDK used, else the
    system's."""
    import ssl

    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
