"""Retrying infrastructure failures with a bounded budget.

Transient failures (429, 5xx, timeouts, empty completions) must not be scored as the assistant's
failure, so they are retried. Retrying forever would hang a run on a dead endpoint, so both the
number of attempts and the total wall time are bounded; when either runs out the last error is
raised as an :class:`InfraError`, which the runner records on the sample as an error.

Backoff is exponential with *full jitter* (a uniform delay in ``[0, min(cap, base * 2**n)]``) so
that many concurrent samples hitting the same rate limit do not retry in lock-step.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from toolscore.models.base import InfraError
from toolscore.models.limits.deadline import timeout as time_limit

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``budget_s`` seconds in total and, when set, at most ``max_attempts``
    calls (by default the whole budget is spent before giving up). A server's Retry-After is
    honoured, capped at ``max_retry_after`` seconds."""

    max_attempts: int | None = None
    base_delay: float = 0.5
    max_delay: float = 20.0
    budget_s: float = 120.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Full-jitter backoff before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        cap = min(self.max_delay, self.base_delay * (2**attempt))
        return (rng or random).uniform(0.0, cap)


async def call_with_retry(
    fn: Callable[[int], Awaitable[T]],
    policy: RetryPolicy,
    *,
    timeout: float | None,
    rng: random.Random | None = None,
    on_error: Callable[[int, InfraError], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await ``fn(attempt)`` until it succeeds, retrying retryable :class:`InfraError`s.

    Each attempt is cut off after ``timeout`` seconds (or the remaining budget, if smaller) and
    a cut-off counts as a retryable error. Non-retryable errors propagate at once. ``on_error``
    sees every failed attempt (for accounting and logs). When attempts or budget are exhausted
    the last error is re-raised, wrapped with the attempt count and elapsed time.
    """
    start = time.monotonic()
    last: InfraError | None = None
    attempts = 0
    limit_attempts = policy.max_attempts if policy.max_attempts is not None else 10**9
    for attempt in range(max(1, limit_attempts)):
        remaining = policy.budget_s - (time.monotonic() - start)
        if attempt and remaining <= 0:
            break
        # The budget bounds retrying, not the first attempt: a slow model (e.g. the embedded
        # one on a long prompt) always gets its full timeout once.
        if attempt == 0:
            limit = timeout
        else:
            limit = remaining if timeout is None else min(timeout, remaining)
        attempts += 1
        try:
            # asyncio.timeout, not wait_for: wait_for ran each attempt as a task of its own
            # (a task, a timer and two extra loop steps per model call)
            async with time_limit(limit):
                return await fn(attempt)
        except TimeoutError:
            last = InfraError(f"timed out after {limit:.1f}s", retryable=True, status=None)
        except InfraError as e:
            if not e.retryable:
                raise
            last = e
        if on_error is not None:
            on_error(attempt, last)
        if attempt + 1 >= limit_attempts:
            break
        pause = policy.delay(attempt, rng)
        if last.retry_after is not None:  # the server said when: wait that long (capped)
            pause = max(pause, min(last.retry_after, policy.max_retry_after))
        if time.monotonic() - start + pause >= policy.budget_s:
            break
        await sleep(pause)
    elapsed = time.monotonic() - start
    raise InfraError(
        f"gave up after {attempts} attempt(s) in {elapsed:.1f}s: {last}",
        retryable=True,
        status=last.status if last is not None else None,
    ) from last
