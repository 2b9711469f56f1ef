"""The plain-HTTP client of the ``openai/`` provider, against raw sockets that answer exactly
the bytes a test gives: every body framing (length, chunked, read to close), gzip and deflate,
replies cut short or reset, interim 100 responses, keep-alive reuse and when a connection must
not be reused, a server that closed an idle connection, timeouts, and the errors and retry
hints the model client reads. Each reply is also sent one byte at a time, so no parse depends
on how the bytes arrive."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from typing import Any

import pytest

from toolscore.models.base import InfraError
from toolscore.models.openai.http import ChatEndpoint, plain_target

OK = json.dumps({"ok": 1}).encode()


def length(body: bytes, *headers: str, status: str = "200 OK", version: str = "1.1") -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return (f"HTTP/{version} {status}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode()
            + body)


def chunked(body: bytes, *, trailers: str = "") -> bytes:
    parts = [body[:3], body[3:]]
    out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    for p in parts:
        out += f"{len(p):x};ext=1\r\n".encode() + p + b"\r\n"
    return out + b"0\r\n" + trailers.encode() + b"\r\n"


class RawServer:
    """Answers the n-th request (over all connections) with ``replies[n]``: bytes, or a callable
    taking the writer. Counts connections and keeps each request's raw bytes."""

    def __init__(self, replies: list[Any], *, trickle: bool = False,
                 close_after: bool = False) -> None:
        self.replies, self.trickle, self.close_after = list(replies), trickle, close_after
        self.connections = 0
        self.requests: list[bytes] = []

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        host, port = self.server.sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                size = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                if line.lower().startswith(b"content-length")))
                self.requests.append(head + await reader.readexactly(size))
                reply = self.replies.pop(0)
                if callable(reply):
                    await reply(writer)
                    return
                if self.trickle:
                    for i in range(len(reply)):
                        writer.write(reply[i:i + 1])
                        await writer.drain()
                else:
                    writer.write(reply)
                    await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


async def post_all(server: RawServer, n: int, timeout: float = 5) -> list[Any]:
    endpoint = ChatEndpoint(server.url, "k", timeout=timeout)
    out: list[Any] = []
    try:
        for _ in range(n):
            try:
                out.append(await endpoint.post(b'{"x":1}'))
            except InfraError as e:
                out.append(e)
    finally:
        await endpoint.aclose()
    return out


def run(replies: list[Any], n: int | None = None, **kw: Any) -> tuple[list[Any], RawServer]:
    async def go() -> tuple[list[Any], RawServer]:
        async with RawServer(replies, **kw) as server:
            return await post_all(server, n or len(replies), kw.get("timeout", 5)), server

    kw.pop("timeout", None)
    return asyncio.run(go())


GOOD = {
    "length": length(OK),
    "chunked": chunked(OK),
    "chunked with trailers": chunked(OK, trailers="X-Checksum: 1\r\n"),
    "gzip": length(gzip.compress(OK), "Content-Encoding: gzip"),
    "deflate": length(zlib.compress(OK), "Content-Encoding: deflate"),
    "raw deflate": length(zlib.compress(OK)[2:-4], "Content-Encoding: deflate"),
    "100 continue first": b"HTTP/1.1 100 Continue\r\n\r\n" + length(OK),
    "folded case headers": length(OK, "CONTENT-TYPE: application/json"),
}


@pytest.mark.parametrize("trickle", [False, True])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_every_framing_is_read_and_the_connection_kept(name: str, trickle: bool) -> None:
    replies, server = run([GOOD[name], GOOD[name]], trickle=trickle)
    assert replies == [{"ok": 1}, {"ok": 1}]
    assert server.connections == 1  # the second request reused the first connection


@pytest.mark.parametrize("framing", ["length", "chunked", "gzip"])
def test_bodies_longer_than_a_receive_buffer_arrive_whole(framing: str) -> None:
    """Each connection receives into its own buffer of RECEIVE_SIZE bytes: a body many times
    that long, sent at once, is read in many receives and comes back byte for byte."""
    from toolscore.models.openai.http1 import RECEIVE_SIZE

    big = json.dumps({"text": "".join(chr(0x41 + i % 57) for i in range(9 * RECEIVE_SIZE + 7)),
                      "n": list(range(3000))}).encode()
    reply = {"length": length(big), "chunked": chunked(big),
             "gzip": length(gzip.compress(big), "Content-Encoding: gzip")}[framing]
    replies, server = run([reply, length(OK), reply])
    assert replies == [json.loads(big), {"ok": 1}, json.loads(big)]
    assert server.connections == 1


def test_a_body_read_to_close_ends_the_connection() -> None:
    reply = b"HTTP/1.1 200 OK\r\n\r\n" + OK
    replies, server = run([reply, reply], close_after=True)
    assert replies == [{"ok": 1}, {"ok": 1}] and server.connections == 2


@pytest.mark.parametrize("reply", [
    length(OK, "Connection: close"),
    length(OK, version="1.0"),
])
def test_a_connection_the_server_closes_is_not_reused(reply: bytes) -> None:
    replies, server = run([reply, reply], close_after=True)
    assert replies == [{"ok": 1}, {"ok": 1}] and server.connections == 2


def test_an_idle_connection_closed_by_the_server_is_replaced_silently() -> None:
    """The server answers with keep-alive, then closes the idle connection: the next request
    goes on a new connection and succeeds (the server never saw it on the old one)."""
    replies, server = run([length(OK), length(OK)], close_after=True)
    assert replies == [{"ok": 1}, {"ok": 1}] and server.connections == 2


async def _hang_up(writer: asyncio.StreamWriter) -> None:
    writer.close()  # read the request, answer nothing


def test_a_reused_connection_hung_up_on_is_resent_once_on_a_new_one() -> None:
    """The server closes a kept-alive connection as the next request arrives (it never
    answered it): the request goes once more on a new connection. On a new connection the
    same hang-up is an error: the server saw the request there."""
    replies, server = run([length(OK), _hang_up, length(OK)], n=2)
    assert replies == [{"ok": 1}, {"ok": 1}] and server.connections == 2
    (err,), _ = run([_hang_up], n=1)
    assert isinstance(err, InfraError) and str(err).startswith("connection error: ")


async def _reset(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"ok\"")
    await writer.drain()
    writer.transport.abort()


BROKEN = {
    "truncated length": length(OK)[:-3],
    "truncated chunked": chunked(OK)[:-8],
    "truncated head": b"HTTP/1.1 200 OK\r\nContent-Le",
    "bad status line": b"HTTP/2 200\r\n\r\n",
    "bad chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n",
    "chunk without CRLF": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd",
    "bad content length": b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n{}",
    "bad gzip": length(b"not gzip", "Content-Encoding: gzip"),
    "unknown encoding": length(OK, "Content-Encoding: br"),
    "bad header line": b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n{}",
    "reset mid-body": _reset,
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_exchange_is_a_retryable_connection_error(name: str) -> None:
    (err,), _ = run([BROKEN[name]], close_after=True)
    assert isinstance(err, InfraError) and err.retryable, err
    assert str(err).startswith("connection error: ")


def test_status_errors_keep_the_sdks_text_and_retry_hint() -> None:
    body = json.dumps({"error": {"message": "slow down"}}).encode()
    (err429, err503, err400), _ = run([
        length(body, "Retry-After: 2", status="429 Too Many Requests"),
        length(b"", status="503 Service Unavailable"),
        length(b"bad", status="400 Bad Request")])
    assert (err429.status, err429.retryable, err429.retry_after) == (429, True, 2.0)
    assert str(err429) == ("HTTP 429: Error code: 429 - {'error': {'message': 'slow down'}}")
    assert (err503.status, err503.retryable, str(err503)) == (503, True,
                                                              "HTTP 503: Error code: 503")
    assert (err400.status, err400.retryable) == (400, False)


def test_a_refused_connection_and_a_timeout() -> None:
    async def go() -> list[Any]:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(3)
            writer.close()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        slow = ChatEndpoint(f"http://127.0.0.1:{port}/v1", "k", timeout=0.2)
        server2 = await asyncio.start_server(silent, "127.0.0.1", 0)
        free = server2.sockets[0].getsockname()[1]
        server2.close()
        await server2.wait_closed()
        refused = ChatEndpoint(f"http://127.0.0.1:{free}/v1", "k", timeout=2)
        out = []
        for endpoint in (slow, refused):
            try:
                await endpoint.post(b"{}")
            except InfraError as e:
                out.append(e)
            await endpoint.aclose()
        server.close()
        return out

    timeout, refused = asyncio.run(go())
    assert (timeout.status, timeout.retryable, str(timeout)) == (
        408, True, "request timed out: Request timed out.")
    assert refused.retryable and str(refused).startswith("connection error: cannot connect")


def test_the_request_on_the_wire() -> None:
    _, server = run([length(OK)])
    (request,) = server.requests
    head, body = request.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    fields = dict(line.split(": ", 1) for line in lines[1:])
    assert fields["Host"] == server.url.split("/")[2]
    assert fields["Authorization"] == "Bearer k" and fields["Content-Length"] == "7"
    assert fields["Content-Type"] == "application/json" and body == b'{"x":1}'


@pytest.mark.parametrize(("url", "proxy", "forced", "target"), [
    ("http://127.0.0.1:8000/v1/chat/completions", None, "",
     ("127.0.0.1", 8000, "/v1/chat/completions")),
    ("http://[::1]/v1/chat/completions?api-version=1", None, "",
     ("::1", 80, "/v1/chat/completions?api-version=1")),
    ("https://api.example.test/v1/chat/completions", None, "", None),  # TLS: aiohttp
    ("http://h.test/v1/chat/completions", "http://proxy.test:3128", "", None),  # proxy
    ("http://h.test/v1/chat/completions", None, "aiohttp", None),  # asked for
])
def test_which_urls_the_plain_client_serves(monkeypatch: Any, url: str, proxy: str | None,
                                            forced: str, target: Any) -> None:
    monkeypatch.setenv("TOOLSCORE_HTTP_CLIENT", forced)
    assert plain_target(url, proxy) == target


def test_the_aiohttp_path_still_answers(monkeypatch: Any) -> None:
    monkeypatch.setenv("TOOLSCORE_HTTP_CLIENT", "aiohttp")
    replies, _ = run([chunked(OK)], close_after=True)
    assert replies == [{"ok": 1}]
