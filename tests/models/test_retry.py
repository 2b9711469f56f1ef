"""Retries against the fake OpenAI server through the real ``openai`` provider: transient
faults (429, 500, timeouts, empty completions) are retried until they pass, persistent ones end
in InfraError within the budget, and client errors are not retried."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models import InfraError, ModelClient, RetryPolicy, get_model
from toolscore.models.limits.retry import call_with_retry
from toolscore.types import GenerateConfig, Message, ToolSpec

FAST = RetryPolicy(max_attempts=6, base_delay=0.01, max_delay=0.05, budget_s=20)
MSGS = [Message(role="user", content="book a table")]
TOOLS = [ToolSpec("book", "Book a table", {"type": "object", "properties": {}})]


def client_for(srv: FakeOpenAIServer, **kw) -> ModelClient:
    model = get_model("openai/fake", base_url=srv.base_url)
    return ModelClient(model, retry=kw.pop("retry", FAST), **kw)


def generate(client: ModelClient, messages=MSGS):
    return asyncio.run(client.generate(messages, TOOLS, GenerateConfig()))


def test_backoff_is_bounded_full_jitter() -> None:
    p = RetryPolicy(base_delay=0.5, max_delay=4)
    rng = random.Random(0)
    for attempt in range(10):
        cap = min(4, 0.5 * 2**attempt)
        delays = [p.delay(attempt, rng) for _ in range(50)]
        assert all(0 <= d <= cap for d in delays)
        assert max(delays) > cap / 2  # jitter spans the range, not a fixed delay


@pytest.mark.parametrize("plan", [
    {0: "429"}, {0: "500"}, {0: "429", 1: "500", 2: "429"}, {0: "empty"}, {0: "empty", 1: "500"},
])
def test_transient_faults_are_retried(plan: dict[int, str]) -> None:
    with FakeOpenAIServer(fault_plan=plan) as srv:
        client = client_for(srv)
        reply = generate(client)
        assert reply.tool_calls and reply.tool_calls[0].name == "book"
        assert srv.requests == len(plan) + 1
        assert client.calls == len(plan) + 1 and client.failures == len(plan)
        assert client.usage.calls == 1


def test_timeouts_are_retried() -> None:
    with FakeOpenAIServer(fault_plan={0: "timeout"}, timeout_sleep=5) as srv:
        client = client_for(srv, timeout=0.3)
        start = time.monotonic()
        reply = generate(client)
        assert reply.tool_calls
        assert client.calls == 2 and client.failures == 1
        assert time.monotonic() - start < 3


def test_gives_up_after_max_attempts() -> None:
    with FakeOpenAIServer(error_rate=1.0) as srv:
        client = client_for(srv, retry=RetryPolicy(max_attempts=3, base_delay=0.01))
        with pytest.raises(InfraError) as err:
            generate(client)
        assert srv.requests == 3 and client.calls == 3
        assert "3 attempt" in str(err.value)
        assert err.value.status in (429, 500)


def test_gives_up_within_the_time_budget() -> None:
    policy = RetryPolicy(max_attempts=1000, base_delay=0.05, max_delay=0.1, budget_s=0.6)
    with FakeOpenAIServer(fault_plan={i: "timeout" for i in range(1000)},
                          timeout_sleep=5) as srv:
        client = client_for(srv, retry=policy, timeout=0.2)
        start = time.monotonic()
        with pytest.raises(InfraError, match="gave up"):
            generate(client)
        assert time.monotonic() - start < 1.5


def test_client_errors_are_not_retried() -> None:
    with FakeOpenAIServer(fault_plan={0: "400"}) as srv:
        client = client_for(srv)
        with pytest.raises(InfraError) as err:
            generate(client)
        assert err.value.status == 400 and not err.value.retryable
        assert srv.requests == 1 and client.failures == 1


def test_seeded_faults_are_deterministic_and_pass_eventually() -> None:
    def run_once() -> tuple[list[str], dict[str, int]]:
        with FakeOpenAIServer(seed=7, error_rate=0.3, empty_rate=0.2) as srv:
            client = client_for(srv, max_concurrency=4)

            async def go():
                return await asyncio.gather(*[
                    client.generate([Message(role="user", content=f"q{i}")], TOOLS)
                    for i in range(20)])

            replies = asyncio.run(go())
            return [r.tool_calls[0].name for r in replies], dict(srv.faults)

    names, faults = run_once()
    assert names == ["book"] * 20
    assert sum(faults.values()) > 0
    assert run_once()[1] == faults


def test_drawn_empty_answers_stay_transient() -> None:
    """Every attempt draws an empty answer, yet the server sends at most two for one request:
    the third attempt is answered, so the client never takes an empty answer as the model's
    (a scripted fault plan still can: tests/models/test_cache.py)."""
    with FakeOpenAIServer(empty_rate=1.0) as srv:
        reply = generate(client_for(srv))
    assert reply.tool_calls and reply.finish_reason != "empty"
    assert srv.faults == {"empty": 2} and srv.requests == 3


def test_connection_refused_is_retryable() -> None:
    with FakeOpenAIServer() as srv:
        url = srv.base_url
    client = ModelClient(get_model("openai/fake", base_url=url),
                         retry=RetryPolicy(max_attempts=2, base_delay=0.01))
    with pytest.raises(InfraError, match="connection"):
        generate(client)
    assert client.calls == 2


def test_other_exceptions_propagate() -> None:
    async def boom(attempt: int) -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        asyncio.run(call_with_retry(boom, FAST, timeout=1))


def test_first_attempt_gets_its_full_timeout_even_beyond_the_budget() -> None:
    async def slow(attempt: int) -> str:
        await asyncio.sleep(0.3)
        return "done"

    policy = RetryPolicy(max_attempts=3, base_delay=0.01, budget_s=0.05)
    assert asyncio.run(call_with_retry(slow, policy, timeout=2.0)) == "done"
    # ...but a retry after the budget is spent is not attempted
    calls: list[int] = []

    async def failing(attempt: int) -> str:
        calls.append(attempt)
        await asyncio.sleep(0.1)
        raise InfraError("503", retryable=True, status=503)

    with pytest.raises(InfraError, match="gave up after 1 attempt"):
        asyncio.run(call_with_retry(failing, policy, timeout=2.0))
    assert calls == [0]
