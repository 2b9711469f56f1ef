"""The cross-process provider limit (toolscore.models.limits.shared): permits shared by several
processes, never more than the limit at once, freed when a process holding them is killed,
given back during a retry's backoff, cheap when nobody waits, and applied by ModelClient to
every call of a limited provider."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models.client import ModelClient
from toolscore.models.limits import shared as shared_limit
from toolscore.models.limits.retry import RetryPolicy
from toolscore.models.limits.shared import SharedLimit, group_of, install, limiter_for
from toolscore.models.providers import get_model
from toolscore.types import Message


@pytest.fixture(autouse=True)
def _no_limits() -> Any:
    yield
    install({})


def _hold(path: str, permits: int, count: int, ready: Any) -> None:
    """Child process: take ``count`` permits, say so, then sleep until killed."""
    limit = SharedLimit(path, permits)
    for _ in range(count):
        assert limit.try_acquire() is not None
    ready.set()
    time.sleep(600)


def _worker(path: str, permits: int, calls: int, log: Any) -> None:
    """Child process: ``calls`` coroutines each holding a permit for 20 ms, logging how many
    permits the file has held at once (by counting the ones it can see taken)."""

    async def one() -> None:
        async with SharedLimit_of(path, permits).permit():
            log.put(("in", time.monotonic()))
            await asyncio.sleep(0.02)
            log.put(("out", time.monotonic()))

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(calls)))

    asyncio.run(main())


_OPEN: dict[str, SharedLimit] = {}


def SharedLimit_of(path: str, permits: int) -> SharedLimit:  # noqa: N802 - one per process
    if path not in _OPEN:
        _OPEN[path] = SharedLimit(path, permits)
    return _OPEN[path]


def test_permits_are_shared_between_processes_and_freed_when_a_holder_is_killed(
        tmp_path: Path) -> None:
    path = str(tmp_path / "openai.lock")
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    child = ctx.Process(target=_hold, args=(path, 3, 2, ready), daemon=True)
    child.start()
    assert ready.wait(60)
    here = SharedLimit(path, 3)
    first = here.try_acquire()
    assert first is not None and here.try_acquire() is None  # 2 there + 1 here = 3
    os.kill(child.pid, signal.SIGKILL)  # a worker killed with permits in hand
    child.join(30)
    # the kernel dropped its locks: both permits are free again, and no more than those
    got = [here.try_acquire(), here.try_acquire()]
    assert None not in got and here.try_acquire() is None
    for slot in [first, *got]:
        here.release(slot)
    assert here.held() == 0
    here.close()


def test_processes_together_never_exceed_the_limit(tmp_path: Path) -> None:
    path = str(tmp_path / "p.lock")
    ctx = multiprocessing.get_context("spawn")
    log = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, 3, 8, log)) for _ in range(3)]
    for p in procs:
        p.start()
    events = [log.get(timeout=120) for _ in range(3 * 8 * 2)]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    # "in" is logged after taking a permit and "out" before giving it back, so the count of
    # open intervals bounds the permits held at once from below
    level = peak = 0
    for kind, _ in sorted(events, key=lambda e: (e[1], e[0] == "in")):
        level += 1 if kind == "in" else -1
        peak = max(peak, level)
    assert 2 <= peak <= 3


def test_waiters_in_one_loop_get_permits_in_turn_without_blocking_the_loop(
        tmp_path: Path) -> None:
    limit = SharedLimit(str(tmp_path / "x.lock"), 2)
    held = peak = 0
    ticks = 0

    async def one() -> None:
        nonlocal held, peak
        async with limit.permit():
            held += 1
            peak = max(peak, held)
            await asyncio.sleep(0.01)
            held -= 1

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    async def main() -> None:
        stop = asyncio.Event()
        tick = asyncio.ensure_future(ticker(stop))
        await asyncio.gather(*(one() for _ in range(10)))
        stop.set()
        await tick

    asyncio.run(main())
    assert peak == 2 and limit.held() == 0 and ticks >= 10
    limit.close()


def test_a_cancelled_waiter_leaves_no_permit_behind(tmp_path: Path) -> None:
    limit = SharedLimit(str(tmp_path / "c.lock"), 1)

    async def main() -> None:
        slot = await limit.acquire()
        waiter = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limit.release(slot)
        assert limit.held() == 0 and not limit._waiters
        again = await asyncio.wait_for(limit.acquire(), 1)
        limit.release(again)

    asyncio.run(main())
    limit.close()


def test_an_uncontended_permit_costs_far_less_than_a_tenth_of_a_millisecond(
        tmp_path: Path) -> None:
    limit = SharedLimit(str(tmp_path / "f.lock"), 16)

    async def main() -> float:
        n = 2000
        started = time.process_time()
        for _ in range(n):
            async with limit.permit():
                pass
        return (time.process_time() - started) / n

    per_call = asyncio.run(main())
    assert per_call < 50e-6, f"{per_call * 1e6:.1f} us per permit"
    limit.close()


def test_group_of_and_limiter_for_follow_the_plan_names(tmp_path: Path) -> None:
    assert group_of("openai/gpt-4o") == "openai" and group_of("replay:x.jsonl") == "replay"
    assert group_of("oracle") == "oracle"
    assert limiter_for("openai/x") is None  # nothing installed: an ordinary run
    install({"openai": (str(tmp_path / "a"), 4), "anthropic/claude": (str(tmp_path / "b"), 2)})
    assert limiter_for("openai/gpt-4o").permits == 4
    assert limiter_for("anthropic/claude").permits == 2
    assert limiter_for("anthropic/other") is None
    kept = limiter_for("openai/x")
    install({"openai": (str(tmp_path / "a"), 4)})  # unchanged group: same limiter
    assert limiter_for("openai/y") is kept and limiter_for("anthropic/claude") is None
    install({})
    assert shared_limit.installed() == {}


def _client(url: str, **kw: Any) -> ModelClient:
    return ModelClient(get_model("openai/fake", base_url=url, api_key="dummy"), cache=None,
                       **kw)


def test_every_client_of_a_limited_provider_counts_against_the_shared_limit(
        tmp_path: Path) -> None:
    install({"openai": (str(tmp_path / "openai.lock"), 3)})
    with FakeOpenAIServer(latency=0.05) as srv:
        # two clients (an assistant and a judge), each allowed 8 at once by its own setting
        a = _client(srv.base_url, max_concurrency=8)
        j = _client(srv.base_url, max_concurrency=8, role="judge")

        async def main() -> None:
            await asyncio.gather(*(c.generate([Message(role="user", content=f"q{i}")])
                                   for i in range(8) for c in (a, j)))

        asyncio.run(main())
    assert srv.requests == 16 and srv.max_in_flight == 3


def test_a_retry_gives_its_permit_back_during_the_backoff(tmp_path: Path) -> None:
    install({"openai": (str(tmp_path / "openai.lock"), 1)})
    seen: list[int] = []  # permits held while the call is between its two attempts
    with FakeOpenAIServer(fault_plan={0: "500"}) as srv:
        failing = _client(srv.base_url, retry=RetryPolicy(base_delay=0.3, max_delay=0.3))
        failing._rng.seed(0)
        limit = limiter_for("openai/fake")

        async def main() -> None:
            call = asyncio.ensure_future(failing.generate([Message(role="user", content="hi")]))
            while not call.done():
                if failing.failures:  # the first attempt failed: backing off, or retrying
                    seen.append(limit.held())
                await asyncio.sleep(0.005)
            await call

        asyncio.run(main())
    assert failing.failures == 1 and srv.requests == 2
    assert seen.count(0) >= 10  # free while it backed off (about 0.25 s)
    assert limit.held() == 0
