"""The fake server's HTTP/1.1 connection handling, byte by byte over a raw socket: what a client
of any make (the SDK's httpx, toolscore's own client, aiohttp, a hand-written test) may send."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

from support.testing.openai_server import FakeOpenAIServer, text_responder


def connect(srv: FakeOpenAIServer) -> socket.socket:
    url = urlsplit(srv.base_url)
    return socket.create_connection((url.hostname, url.port), timeout=5)


def request(body: bytes, *, eol: bytes = b"\r\n", extra: bytes = b"") -> bytes:
    head = [b"POST /v1/chat/completions HTTP/1.1", b"Host: x",
            b"Content-Length: " + str(len(body)).encode()]
    return eol.join(head) + eol + extra + eol + body


def read_replies(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    """``count`` replies as (status line, body), reading until they are all in."""
    data = b""
    out: list[tuple[bytes, bytes]] = []
    while len(out) < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        while b"\r\n\r\n" in data:
            head, rest = data.split(b"\r\n\r\n", 1)
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            out.append((head.split(b"\r\n")[0], rest[:length]))
            data = rest[length:]
    return out


def closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionError:
        return True


BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a b"}]}).encode()


def test_pipelined_requests_are_answered_in_order_on_one_connection() -> None:
    with FakeOpenAIServer(text_responder("ok"), latency=0.01) as srv, connect(srv) as sock:
        sock.sendall(request(BODY) * 3 + b"GET /v1/models HTTP/1.1\r\n\r\n")
        replies = read_replies(sock, 4)
        assert [r[0] for r in replies] == [b"HTTP/1.1 200 OK"] * 4
        assert json.loads(replies[3][1])["data"][0]["id"] == "fake-model"
        assert srv.requests == 3 and srv.max_in_flight == 1  # one at a time per connection


def test_a_body_in_pieces_and_bare_newlines() -> None:
    with FakeOpenAIServer(text_responder("ok")) as srv, connect(srv) as sock:
        whole = request(BODY, eol=b"\n")
        for i in range(0, len(whole), 7):
            sock.sendall(whole[i:i + 7])
            time.sleep(0.001)
        [(status, body)] = read_replies(sock, 1)
        assert status == b"HTTP/1.1 200 OK"
        assert json.loads(body)["choices"][0]["message"]["content"] == "ok"


def test_connection_close_and_garbage_end_the_connection() -> None:
    with FakeOpenAIServer(text_responder("ok")) as srv:
        with connect(srv) as sock:
            sock.sendall(request(BODY, extra=b"Connection: close\r\n") + request(BODY))
            assert len(read_replies(sock, 2)) == 1
            assert closed(sock)
        for garbage in (b"\r\n", b"NONSENSE\r\n\r\n",
                        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: x\r\n\r\n"):
            with connect(srv) as sock:
                sock.sendall(garbage)
                assert closed(sock), garbage
        assert srv.requests == 1
        with connect(srv) as sock:  # and the server still serves
            sock.sendall(request(b"not json"))
            [(status, body)] = read_replies(sock, 1)
            assert status == b"HTTP/1.1 400 Bad Request"
            assert json.loads(body)["error"]["code"] == "invalid_request_error"


def test_a_client_that_leaves_before_its_reply_does_not_stop_the_server() -> None:
    with FakeOpenAIServer(text_responder("ok"), latency=0.05, keep_requests=False) as srv:
        with connect(srv) as sock:
            sock.sendall(request(BODY))
        time.sleep(0.1)
        with connect(srv) as sock:
            sock.sendall(request(BODY))
            assert read_replies(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
        assert srv.requests == 2


def test_half_closed_client_still_gets_its_reply() -> None:
    with FakeOpenAIServer(text_responder("ok"), latency=0.01) as srv, connect(srv) as sock:
        sock.sendall(request(BODY))
        sock.shutdown(socket.SHUT_WR)
        assert read_replies(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
        assert closed(sock)


def test_retry_after_header_and_stop_with_a_request_in_flight() -> None:
    srv = FakeOpenAIServer(text_responder("ok"), fault_plan={0: "429", 1: "timeout"},
                           retry_after="3", timeout_sleep=30).start()
    with connect(srv) as sock:
        sock.sendall(request(BODY))
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 429") and b"\r\nRetry-After: 3\r\n" in head
        sock.sendall(request(BODY))  # this one sleeps 30 s: stop() must not wait for it
        time.sleep(0.05)
        started = time.perf_counter()
        srv.stop()
        assert time.perf_counter() - started < 5
        assert closed(sock)
