"""Checking a model's endpoint once before a run: nothing listening is a one-line user error
naming the URL and the cause; anything that answers passes, and so does a slow connect; the
check is a TCP connect, so no request reaches a working endpoint's model."""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models import ModelClient, get_model
from toolscore.models.base import EndpointUnreachable
from toolscore.models.openai import http

SelectorLoop = asyncio.selector_events.BaseSelectorEventLoop  # where sock_connect lives


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def preflight(base_url: str, **options: Any) -> None:
    asyncio.run(ModelClient(get_model("openai/fake", base_url=base_url, **options)).preflight())


def test_nothing_listening_is_one_line_naming_the_url_and_the_cause() -> None:
    port = closed_port()
    with pytest.raises(EndpointUnreachable) as caught:
        preflight(f"http://127.0.0.1:{port}/v1")
    text = str(caught.value)
    assert text == (f"http://127.0.0.1:{port}/v1: nothing answers at 127.0.0.1:{port} "
                    "(connection refused)")
    assert isinstance(caught.value, ValueError)  # the CLI's one-line user error, exit 2


def test_credentials_in_the_url_are_not_repeated() -> None:
    port = closed_port()
    with pytest.raises(EndpointUnreachable) as caught:
        preflight(f"http://me:sk-secret-key-1234@127.0.0.1:{port}/v1")
    assert "sk-secret" not in str(caught.value) and "me:" not in str(caught.value)


def test_a_working_endpoint_passes_and_its_model_sees_no_request() -> None:
    with FakeOpenAIServer() as srv:
        preflight(srv.base_url)
        assert srv.requests == 0 and srv.received == []


def test_a_server_that_answers_with_an_error_passes() -> None:
    with FakeOpenAIServer(fault_plan={0: "500"}) as srv:
        preflight(srv.base_url.replace("/v1", "/no/such/path"))
        assert srv.requests == 0


def test_an_unknown_host_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_such_host(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", no_such_host)
    with pytest.raises(EndpointUnreachable, match=r"^http://llm\.internal\.test:8000/v1: "
                       r"unknown host 'llm\.internal\.test' \(Name or service not known\)$"):
        preflight("http://llm.internal.test:8000/v1")


def test_a_resolver_that_does_not_answer_is_not_a_no(monkeypatch: pytest.MonkeyPatch) -> None:
    async def try_again(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", try_again)
    preflight("http://llm.internal.test:8000/v1")


def test_no_route_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    async def unreachable(self: Any, sock: Any, address: Any) -> None:
        raise OSError(errno.EHOSTUNREACH, "Connect call failed")

    monkeypatch.setattr(SelectorLoop, "sock_connect", unreachable)
    with pytest.raises(EndpointUnreachable, match="no route to host"):
        preflight(f"http://127.0.0.1:{closed_port()}/v1")


def test_a_slow_connect_gives_up_and_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    async def hangs(self: Any, sock: Any, address: Any) -> None:
        await asyncio.sleep(60)

    monkeypatch.setattr(SelectorLoop, "sock_connect", hangs)

    async def go() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await http.check_reachable(f"http://127.0.0.1:{closed_port()}/v1", timeout=0.2)
        return loop.time() - started

    assert asyncio.run(go()) < 2
    assert http.CONNECT_TIMEOUT <= 10  # "a few seconds" for the real check


def test_a_local_failure_is_not_blamed_on_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    async def out_of_files(self: Any, sock: Any, address: Any) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(SelectorLoop, "sock_connect", out_of_files)
    preflight(f"http://127.0.0.1:{closed_port()}/v1")


def test_the_proxy_is_what_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    pytest.importorskip("aiohttp")
    with pytest.raises(EndpointUnreachable, match=f"^proxy http://127.0.0.1:{port}: "):
        preflight("https://api.example.test/v1", api_key="k")


def test_a_model_without_an_endpoint_has_nothing_to_check() -> None:
    asyncio.run(ModelClient(get_model("oracle")).preflight())


def test_anthropic_checks_its_endpoint_too() -> None:
    pytest.importorskip("anthropic")
    port = closed_port()
    model = get_model("anthropic/claude-x", base_url=f"http://127.0.0.1:{port}", api_key="k")
    with pytest.raises(EndpointUnreachable, match="connection refused"):
        asyncio.run(ModelClient(model).preflight())
    with FakeOpenAIServer() as srv:  # anything listening passes
        model = get_model("anthropic/claude-x", base_url=srv.base_url, api_key="k")
        asyncio.run(ModelClient(model).preflight())
        assert srv.requests == 0
