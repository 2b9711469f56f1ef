"""A server's Retry-After is honoured (capped), and a persistent failure is retried until the
configured budget is spent, not after a fixed handful of attempts."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate
from types import SimpleNamespace

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models import InfraError, ModelClient, RetryPolicy, get_model
from toolscore.models.base import retry_after
from toolscore.types import GenerateConfig, Message

HELLO = [Message(role="system", content="s"), Message(role="user", content="hello")]


def timed(srv: FakeOpenAIServer, policy: RetryPolicy) -> tuple[float, ModelClient]:
    client = ModelClient(get_model("openai/fake", base_url=srv.base_url), retry=policy)
    started = time.monotonic()
    asyncio.run(client.generate(HELLO, [], GenerateConfig()))
    return time.monotonic() - started, client


def test_retry_after_is_waited_for() -> None:
    policy = RetryPolicy(base_delay=0.01, max_delay=0.02, budget_s=20)
    with FakeOpenAIServer(fault_plan={0: "429"}, retry_after="1") as srv:
        elapsed, client = timed(srv, policy)
    assert client.calls == 2 and elapsed >= 1.0


def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(base_delay=0.01, max_delay=0.02, budget_s=20, max_retry_after=0.1)
    with FakeOpenAIServer(fault_plan={0: "429"}, retry_after="30") as srv:
        elapsed, client = timed(srv, policy)
    assert client.calls == 2 and elapsed < 5


def test_a_persistent_failure_spends_the_budget() -> None:
    policy = RetryPolicy(base_delay=0.01, max_delay=0.05, budget_s=1.0)
    plan = {n: "500" for n in range(1000)}
    with FakeOpenAIServer(fault_plan=plan) as srv, pytest.raises(InfraError, match="gave up"):
        timed(srv, policy)
    assert srv.faults["500"] > 6  # more than the old fixed six attempts


def test_retry_after_header_forms() -> None:
    def headers(**h: str) -> SimpleNamespace:
        return SimpleNamespace(headers=h)

    assert retry_after(headers(**{"retry-after": "7"})) == 7.0
    assert retry_after(headers(**{"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    later = retry_after(headers(**{"retry-after": formatdate(time.time() + 30, usegmt=True)}))
    assert later is not None and 25 < later <= 31
    assert retry_after(headers(**{"retry-after": "soon"})) is None
    assert retry_after(headers()) is None and retry_after(None) is None
