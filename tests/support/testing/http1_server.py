"""The HTTP/1.1 side of the fake OpenAI server: one asyncio protocol per keep-alive connection.

The fake server stands in for a remote endpoint, whose CPU is not on our machine: every
microsecond it spends is charged to the figure that is meant to measure the harness. asyncio's
streams cost a coroutine step per header line, a task per connection and a drain per reply;
a protocol that parses the buffered bytes itself and writes straight to the transport costs a
fraction of that. It serves requests strictly one at a time per connection (a pipelined request
waits in the buffer until the reply before it is written), as the streams loop did.

What it accepts is what that loop accepted: a request line, header lines ended by an empty line
(``\\r\\n`` or bare ``\\n``), a ``Content-Length`` body. A blank request line, a request line
without a path, a bad ``Content-Length`` or end of input ends the connection quietly, as a
client that went away or spoke garbage does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

RECEIVE_SIZE = 64 * 1024  # bytes read per receive (a ToolTalk request is about 14 KB)

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error"}

#: ``dispatch(connection, method, path, headers, body)``: must end with ``connection.respond``
#: (now or later) or ``connection.close()``; it owns the request until then.
Dispatch = Callable[["HTTP1Connection", str, str, dict[str, str], bytes], None]


class _Garbage(Exception):
    """The bytes are not a request this server answers: end the connection."""


def _parse_head(buf: bytearray) -> tuple[int, str, str, dict[str, str]] | None:
    """``(head length, method, path, headers)`` of the request at the start of ``buf``, or
    None while its head is incomplete."""
    nl = buf.find(b"\n")
    if nl < 0:
        return None
    line = bytes(buf[:nl + 1])
    if not line.strip():
        raise _Garbage("blank request line")
    parts = line.decode("latin-1").split(" ")
    if len(parts) < 2:
        raise _Garbage("no path")
    headers: dict[str, str] = {}
    pos = nl + 1
    while True:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            return None
        h = bytes(buf[pos:nl + 1])
        pos = nl + 1
        if h in (b"\r\n", b"\n"):
            return pos, parts[0], parts[1], headers
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


class HTTP1Connection(asyncio.BufferedProtocol):
    """One client connection: parse a request, hand it to ``dispatch``, write its reply. It
    receives into a buffer of its own: asyncio's default reads into a new 256 KiB object each
    time, which costs several times the receive itself."""

    def __init__(self, dispatch: Dispatch, connections: set[HTTP1Connection]) -> None:
        self.dispatch = dispatch
        self.connections = connections
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self._received = memoryview(bytearray(RECEIVE_SIZE))
        self.head: tuple[int, str, str, dict[str, str]] | None = None
        self.busy = False  # a request is being answered: the next one waits in the buffer
        self.eof = False
        self.close_after = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.connections.discard(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._received

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._received[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        self.buf += data
        if not self.busy:
            self._advance()

    def eof_received(self) -> bool:
        self.eof = True
        if not self.busy:
            self.close()
        return True  # keep the write side open for a reply being prepared

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def respond(self, status: int, data: bytes, extra: str = "") -> None:
        """Write a JSON reply (``extra``: more header lines, each ending in CRLF) and go on
        with the next buffered request."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return  # the client went away (e.g. it timed out)
        head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                f"{extra}Connection: keep-alive\r\n\r\n")
        transport.write(head.encode("latin-1") + data)
        self.busy = False
        if self.close_after:
            self.close()
        else:
            self._advance()

    def _advance(self) -> None:
        """Dispatch the next request once all of it is buffered."""
        while not self.busy and self.transport is not None and not self.transport.is_closing():
            try:
                if self.head is None:
                    self.head = _parse_head(self.buf)
                    if self.head is None:
                        break
                size, method, path, headers = self.head
                length = int(headers.get("content-length") or 0)
                if length < 0:
                    raise _Garbage("negative Content-Length")
            except (_Garbage, ValueError):
                self.close()
                return
            if len(self.buf) < size + length:
                break
            body = bytes(self.buf[size:size + length])
            del self.buf[:size + length]
            self.head = None
            self.busy = True
            self.close_after = headers.get("connection", "").lower() == "close"
            self.dispatch(self, method, path, headers, body)
        if not self.busy and self.eof:
            self.close()
