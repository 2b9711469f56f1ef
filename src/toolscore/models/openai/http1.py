"""A minimal HTTP/1.1 keep-alive client for plain ``http://`` endpoints (vLLM, llama.cpp server,
a local proxy, the fake test server).

Why not aiohttp here: with the SDK gone, aiohttp's own request machinery (request and response
objects, header multidicts, stream readers, payload writers, a task per connection) was the
largest part left of the harness's CPU per model call, about 0.3 ms, and a local endpoint at
hundreds of calls in flight is exactly where that cost caps throughput. A chat-completions call
needs one thing: POST a ready body on an idle connection and read one response. So a connection
is an :class:`asyncio.Protocol` that parses the response as bytes arrive (status line, headers,
then a ``Content-Length``, ``chunked`` or read-to-close body, gzip/deflate decoded) and resolves
one future. Everything else stays with aiohttp (:mod:`toolscore.models.openai.http` chooses):
TLS, proxies, and any base URL this module does not handle.

Failures are what the caller classifies (:class:`HTTPError` for a broken exchange, the
built-in :class:`TimeoutError`); a connection is reused only after a complete response that did
not say ``Connection: close``. A request sent on a reused connection that the server had already
closed (no byte of a response came back) is sent once more on a new connection, as browsers and
aiohttp do, since the server never saw it.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from toolscore.models.limits.deadline import timeout_at

MAX_HEAD = 64 * 1024  # a status line and headers longer than this are not an HTTP response
# Bytes read per receive, into the connection's own buffer. asyncio's default (a plain
# Protocol) reads into a new 256 KiB bytes object each time, which glibc maps and unmaps
# for every response: 12 microseconds a receive, against 2 for this.
RECEIVE_SIZE = 16 * 1024


class HTTPError(Exception):
    """The exchange broke: refused or reset connection, malformed or truncated response."""


class Response:
    """Status, headers (lower-case names, last value wins) and the decoded body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class _Connection(asyncio.BufferedProtocol):
    """One TCP connection; at most one request at a time."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.closed = False
        self.waiter: asyncio.Future[Response] | None = None
        self._received = memoryview(bytearray(RECEIVE_SIZE))
        self._reset()

    def _reset(self) -> None:
        self.buf = bytearray()
        self.head: tuple[int, dict[str, str], bool] | None = None  # status, headers, keep
        self.mode = ""  # "length", "chunked" or "close"
        self.need = 0  # body bytes ("length"), or where the next chunk starts ("chunked")
        self.chunks: list[bytes] = []
        self.trailers: int | None = None  # where the trailers start, after the last chunk
        self.got_bytes = False

    # -- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._received

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._received[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        self.got_bytes = True
        self.buf += data
        if self.waiter is None or self.waiter.done():
            self.closed = True  # bytes nobody asked for: the connection is out of step
            self.transport.close()
            return
        try:
            self._parse()
        except HTTPError as e:
            self._fail(e)

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._ended(exc)

    # -- parsing -------------------------------------------------------------------------
    def _ended(self, exc: Exception | None = None) -> None:
        self.closed = True
        if self.waiter is None or self.waiter.done():
            return
        if self.head is not None and self.mode == "close":
            self._done(bytes(self.buf))
            return
        what = "connection closed before a complete response" if exc is None else str(exc)
        self._fail(HTTPError(what or type(exc).__name__))

    def _parse(self) -> None:
        if self.head is None:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > MAX_HEAD:
                    raise HTTPError("response head too long")
                return
            self.head = _head(bytes(self.buf[:end]))
            del self.buf[:end + 4]
            status, headers, _ = self.head
            if 100 <= status < 200:  # an interim response (100 Continue): the real one follows
                self.head = None
                self._parse()
                return
            if status in (204, 304):
                self.mode, self.need = "length", 0
            elif "chunked" in headers.get("transfer-encoding", "").lower():
                self.mode = "chunked"
            elif "content-length" in headers:
                try:
                    self.need = int(headers["content-length"])
                except ValueError:
                    raise HTTPError("bad Content-Length") from None
                if self.need < 0:
                    raise HTTPError("bad Content-Length")
                self.mode = "length"
            else:
                self.mode = "close"  # the body ends when the server closes
        if self.mode == "length":
            if len(self.buf) >= self.need:
                self._done(bytes(self.buf[:self.need]), extra=len(self.buf) > self.need)
        elif self.mode == "chunked":
            self._parse_chunks()

    def _parse_chunks(self) -> None:
        buf = self.buf
        while True:
            if self.trailers is not None:  # after the last chunk: trailers, then an empty line
                if buf.startswith(b"\r\n", self.trailers):
                    end = self.trailers + 2
                else:
                    end = buf.find(b"\r\n\r\n", self.trailers)
                    if end < 0:
                        return
                    end += 4
                self._done(b"".join(self.chunks), extra=len(buf) > end)
                return
            line_end = buf.find(b"\r\n", self.need)
            if line_end < 0:
                return
            size_text = bytes(buf[self.need:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HTTPError(f"bad chunk size {size_text[:40]!r}") from None
            start = line_end + 2
            if size == 0:
                self.trailers = start
                continue
            if len(buf) < start + size + 2:
                return
            if buf[start + size:start + size + 2] != b"\r\n":
                raise HTTPError("chunk not followed by CRLF")
            self.chunks.append(bytes(buf[start:start + size]))
            self.need = start + size + 2

    def _done(self, body: bytes, extra: bool = False) -> None:
        assert self.head is not None and self.waiter is not None
        status, headers, keep = self.head
        try:
            body = _decode(body, headers.get("content-encoding", ""))
        except (zlib.error, ValueError) as e:
            self._fail(HTTPError(f"cannot decode the response body: {e}"))
            return
        if not keep or extra or self.mode == "close":
            self.closed = True
            self.transport.close()
        waiter = self.waiter
        self.waiter = None
        self._reset()
        waiter.set_result(Response(status, headers, body))

    def _fail(self, err: Exception) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(err)
        self.waiter = None


def _head(raw: bytes) -> tuple[int, dict[str, str], bool]:
    """(status, headers, keep-alive) of a response head."""
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HTTPError(f"bad status line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise HTTPError(f"bad header line {line[:80]!r}")
        headers[name.lower()] = value.strip()
    connection = headers.get("connection", "").lower()
    keep = "close" not in connection if parts[0] == "HTTP/1.1" else "keep-alive" in connection
    return int(parts[1]), headers, keep


def _decode(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:  # raw deflate, as some servers send it
            return zlib.decompress(body, -zlib.MAX_WBITS)
    raise ValueError(f"unsupported Content-Encoding {encoding!r}")


class Pool:
    """Keep-alive connections to one ``host:port`` of one event loop; no limit of its own (the
    model client's semaphore bounds the requests in flight)."""

    def __init__(self, host: str, port: int, path: str, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        lines = [f"POST {path} HTTP/1.1", f"Host: {_host_header(host, port)}",
                 "Accept-Encoding: gzip, deflate", "Connection: keep-alive",
                 *(f"{k}: {v}" for k, v in headers.items())]
        self._head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")
        self._idle: list[_Connection] = []

    async def post(self, body: bytes, timeout: float) -> Response:
        """The response to one POST of ``body``; raises :class:`HTTPError` or
        :class:`TimeoutError` (the whole exchange, connecting included, within ``timeout``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        message = b"".join((self._head, str(len(body)).encode(), b"\r\n\r\n", body))
        while self._idle:
            conn = self._idle.pop()
            if conn.closed:
                continue
            try:
                return await self._exchange(conn, message, deadline, reused=True)
            except _Stale:
                break  # closed by the server while idle: sent once more, on a new connection
        return await self._exchange(await self._connect(deadline), message, deadline, False)

    async def _connect(self, deadline: float) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with timeout_at(deadline):
                _, conn = await loop.create_connection(_Connection, self.host, self.port)
        except OSError as e:
            raise HTTPError(f"cannot connect to {self.host}:{self.port}: {e}") from None
        return conn

    async def _exchange(self, conn: _Connection, message: bytes, deadline: float,
                        reused: bool) -> Response:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Response] = loop.create_future()
        conn.waiter = waiter
        conn.transport.write(message)
        timer = loop.call_at(deadline, _expire, waiter)
        try:
            response = await waiter
        except HTTPError:
            if reused and not conn.got_bytes:
                raise _Stale from None
            raise
        except BaseException:  # timed out or cancelled mid-exchange: the connection is lost
            conn.closed = True
            conn.waiter = None
            conn.transport.close()
            raise
        finally:
            timer.cancel()
        if not conn.closed:
            self._idle.append(conn)
        return response

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            if conn.transport is not None:
                conn.transport.close()


class _Stale(Exception):
    """A reused connection closed by the server before it answered."""


def _expire(waiter: asyncio.Future[Response]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


def _host_header(host: str, port: int) -> str:
    name = f"[{host}]" if ":" in host else host
    return name if port == 80 else f"{name}:{port}"
