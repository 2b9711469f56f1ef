"""The lean HTTP path of the ``openai/`` provider: error texts and classes as the SDK gave them,
environment proxies, and the body of a reply that is not JSON (over a real loopback socket)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolscore.models.base import ContextLengthExceeded, InfraError
from toolscore.models.openai.http import (
    ChatEndpoint,
    env_proxy,
    request_headers,
    status_error,
    status_message,
)

pytest.importorskip("aiohttp")


class Response:
    def __init__(self, **headers: str) -> None:
        self.headers = headers


def test_status_message_is_the_sdks() -> None:
    body = b'{"error": {"message": "slow down", "code": "rate_limit_exceeded"}}'
    assert status_message(429, body) == (
        "Error code: 429 - {'error': {'message': 'slow down', 'code': 'rate_limit_exceeded'}}")
    assert status_message(502, b"  bad gateway \n") == "bad gateway"
    assert status_message(503, b"") == "Error code: 503"


@pytest.mark.parametrize(("status", "retryable"), [(400, False), (401, False), (404, False),
                                                   (408, True), (409, True), (429, True),
                                                   (500, True), (529, True)])
def test_status_errors_are_classified(status: int, retryable: bool) -> None:
    err = status_error(status, b'{"error": {"message": "x"}}', Response())
    assert isinstance(err, InfraError)
    assert (err.status, err.retryable) == (status, retryable)
    assert str(err).startswith(f"HTTP {status}: Error code: {status} - ")


def test_retry_after_is_read_from_the_response() -> None:
    err = status_error(429, b"{}", Response(**{"retry-after": "7"}))
    assert isinstance(err, InfraError) and err.retry_after == 7.0


def test_a_400_about_the_context_length_is_not_an_infra_error() -> None:
    body = b'{"error": {"message": "too long", "code": "context_length_exceeded"}}'
    err = status_error(400, body, Response())
    assert isinstance(err, ContextLengthExceeded) and str(err).startswith("HTTP 400: ")
    assert isinstance(status_error(413, body, Response()), InfraError)


def test_headers_carry_key_organisation_and_project(monkeypatch: Any) -> None:
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    headers = request_headers("sk-test")
    assert headers["Authorization"] == "Bearer sk-test"
    assert headers["OpenAI-Organization"] == "org-1" and "OpenAI-Project" not in headers


def test_proxy_comes_from_the_environment(monkeypatch: Any) -> None:
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert env_proxy("https://api.example.test/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.test:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,internal.test")
    assert env_proxy("https://api.example.test/v1/chat/completions") == "http://proxy.test:3128"
    assert env_proxy("https://internal.test/v1/chat/completions") is None
    assert env_proxy("http://api.example.test/v1/chat/completions") is None  # no HTTP_PROXY


def test_credentials_in_the_base_url_never_reach_the_request_url() -> None:
    endpoint = ChatEndpoint("http://user:secret@127.0.0.1:9/v1/", "k", timeout=5)
    assert endpoint.url == "http://127.0.0.1:9/v1/chat/completions"


async def _raw_server(reply: bytes) -> tuple[asyncio.AbstractServer, str]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()).strip():
            pass  # headers
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    return server, f"http://{host}:{port}/v1"


async def _failed_post(server: asyncio.AbstractServer, url: str, timeout: float) -> InfraError:
    """The InfraError of one post to ``url`` (served by ``server``, closed afterwards)."""
    endpoint = ChatEndpoint(url, "k", timeout=timeout)
    try:
        with pytest.raises(InfraError) as err:
            await endpoint.post(b"{}")
        return err.value
    finally:
        await endpoint.aclose()
        server.close()


@pytest.mark.parametrize(("reply", "text"), [
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nnot j",
     "API error: response body is not JSON"),
    (b"garbage\r\n\r\n", "connection error: "),
])
def test_unreadable_replies_are_retryable_infra_errors(reply: bytes, text: str) -> None:
    async def go() -> InfraError:
        return await _failed_post(*await _raw_server(reply), timeout=5)

    err = asyncio.run(go())
    assert err.retryable and str(err).startswith(text)


def test_a_timeout_is_the_sdks_retryable_408() -> None:
    async def go() -> InfraError:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(5)
            writer.close()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        host, port = server.sockets[0].getsockname()[:2]
        return await _failed_post(server, f"http://{host}:{port}/v1", timeout=0.2)

    err = asyncio.run(go())
    assert (err.retryable, err.status, str(err)) == (True, 408, "request timed out: "
                                                     "Request timed out.")
