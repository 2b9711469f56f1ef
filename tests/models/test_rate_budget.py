"""Rate budgets (toolscore.models.limits.budget): requests and tokens per minute as token
buckets shared by processes, charged when a request is sent and settled with the reply's
usage; and the permits in use halved on a 429 (once per round, honouring Retry-After) and
grown back with successes. Applied by ModelClient to every call of a limited provider."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer
from support.testing.rate_server import RateLimitedServer

from toolscore.models.client import ModelClient
from toolscore.models.limits.budget import Budget, RateState, TokenEstimate
from toolscore.models.limits.retry import RetryPolicy
from toolscore.models.limits.shared import SharedLimit, install, installed, limiter_for
from toolscore.models.providers import get_model
from toolscore.types import Message, Usage


@pytest.fixture(autouse=True)
def _no_limits() -> Any:
    yield
    install({})


def test_a_request_budget_lets_requests_through_at_its_rate(tmp_path: Path) -> None:
    state = RateState(str(tmp_path / "r"), 4, Budget(rpm=600))  # 10 a second
    assert state.take(0) == 0.0  # a fresh budget holds one request
    wait = state.take(0)
    assert 0.09 < wait <= 0.1  # the next when the bucket has refilled one
    time.sleep(wait)
    assert state.take(0) == 0.0
    state.close()


def test_a_token_budget_waits_for_the_tokens_and_a_refund_gives_them_back(
        tmp_path: Path) -> None:
    state = RateState(str(tmp_path / "t"), 4, Budget(tpm=60_000))  # 1,000 a second
    time.sleep(0.3)
    assert state.take(250) == 0.0  # ~300 refilled
    assert 0.15 < state.take(250) < 0.25  # ~50 left: 200 more to wait for
    state.refund(200)  # the reply used 50 of the 250 charged
    assert state.take(250) == 0.0
    # a request larger than the bucket goes when the bucket is full, not never
    assert 0.4 < state.take(5_000) <= 0.5
    state.close()


def test_a_429_halves_the_window_once_per_round_and_successes_grow_it_back(
        tmp_path: Path) -> None:
    state = RateState(str(tmp_path / "w"), 16)
    assert state.window() == 16
    sent = time.monotonic()
    state.throttled(None, sent)
    assert state.window() == 8
    state.throttled(None, sent)  # a 429 of a request sent before the cut: no second cut
    assert state.window() == 8
    state.throttled(None, time.monotonic())
    assert state.window() == 4
    for _ in range(4):  # one window's worth of successes: one more permit
        state.succeeded()
    assert state.window() == 5
    for _ in range(200):
        state.succeeded()
    assert state.window() == 16  # never past the configured limit
    state.close()


def test_retry_after_holds_every_request_of_the_budget(tmp_path: Path) -> None:
    state = RateState(str(tmp_path / "h"), 4, Budget(rpm=60_000))
    state.throttled(0.5, time.monotonic())
    assert 0.4 < state.take(0) <= 0.5
    state.close()


def test_the_window_bounds_the_permits_handed_out(tmp_path: Path) -> None:
    limit = SharedLimit(str(tmp_path / "p.lock"), 8)
    limit.rate.throttled(None, time.monotonic())
    limit.rate.throttled(None, time.monotonic() + 1)
    slots = [limit.try_acquire() for _ in range(3)]
    assert None not in slots[:2] and slots[2] is None  # 8 -> 4 -> 2
    limit.close()


def _taker(path: str, count: int, out: Any) -> None:
    state = RateState(path, 4, Budget(rpm=1200))
    for _ in range(count):
        while (wait := state.take(0)) > 0:
            time.sleep(wait)
        out.put(time.monotonic())


def test_processes_share_one_budget(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.rate")
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_taker, args=(path, 10, out)) for _ in range(2)]
    for p in procs:
        p.start()
    times = sorted(out.get(timeout=120) for _ in range(20))
    for p in procs:
        p.join(60)
    # 20 requests at 20 a second from two processes: ~0.95 s, not the 0.45 s of two budgets
    assert times[-1] - times[0] > 0.85


def test_the_token_estimate_learns_the_providers_count() -> None:
    estimate = TokenEstimate()
    assert estimate.tokens(400) == 100  # four characters a token until told otherwise
    estimate.learn(400, Usage(input_tokens=50, output_tokens=20))
    assert estimate.tokens(400) == 70
    estimate.learn(400, Usage())  # no usage reported: nothing learned
    assert estimate.tokens(400) == 70


def test_install_takes_a_budget_and_keeps_the_two_field_form(tmp_path: Path) -> None:
    install({"openai": (str(tmp_path / "a"), 4, 600, None),
             "anthropic": (str(tmp_path / "b"), 2)})
    assert limiter_for("openai/x").budget == Budget(rpm=600.0)
    assert not limiter_for("anthropic/y").budget
    assert installed() == {"openai": (str(tmp_path / "a"), 4, 600.0, None),
                           "anthropic": (str(tmp_path / "b"), 2)}
    kept = limiter_for("openai/x")
    install({"openai": (str(tmp_path / "a"), 4, 300, None)})  # another budget: new limiter
    assert limiter_for("openai/x") is not kept and limiter_for("openai/x").budget.rpm == 300


def _client(url: str, **kw: Any) -> ModelClient:
    return ModelClient(get_model("openai/fake", base_url=url, api_key="dummy"), cache=None,
                       **kw)


async def _calls(client: ModelClient, n: int) -> None:
    await asyncio.gather(*(client.generate([Message("user", f"question {i} " + "word " * 40)])
                           for i in range(n)))


def test_a_client_stays_within_both_budgets_of_the_server(tmp_path: Path) -> None:
    rpm, tpm, n = 600, 12_000, 30  # 10 requests and 200 tokens a second
    with RateLimitedServer(rpm=rpm, tpm=tpm, latency=0.02, keep_requests=False) as srv:
        install({"openai": (str(tmp_path / "o.lock"), 16, rpm, tpm)})
        client = _client(srv.base_url, max_concurrency=16)
        started = time.monotonic()
        asyncio.run(_calls(client, n))
        took = time.monotonic() - started
    tokens = sum(cost for _, cost in srv.accepted)
    ideal = max(n / (rpm / 60), tokens / (tpm / 60))
    assert srv.throttled == 0 and client.failures == 0 and len(srv.accepted) == n
    assert ideal * 0.8 < took < ideal * 1.1, (took, ideal)


def test_429s_narrow_the_requests_in_flight_and_retry_after_is_honoured(
        tmp_path: Path) -> None:
    # every request's first attempt is refused with Retry-After: 0.3
    with FakeOpenAIServer(fault_plan={0: "429"}, retry_after="0.3", latency=0.05) as srv:
        install({"openai": (str(tmp_path / "o.lock"), 8)})
        client = _client(srv.base_url, max_concurrency=8,
                         retry=RetryPolicy(base_delay=0.01, max_delay=0.02))
        started = time.monotonic()
        asyncio.run(_calls(client, 8))
        took = time.monotonic() - started
    assert client.failures == 8 and srv.requests == 16
    assert took >= 0.3
    assert limiter_for("openai/fake").rate.window() < 8  # cut, growing back
    assert srv.max_in_flight <= 8
