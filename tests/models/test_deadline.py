"""The request timeouts on every supported Python: ``asyncio.timeout`` from 3.11, and the
cancel scope that stands in for it on 3.10 (checked here on whatever Python runs the tests)."""

from __future__ import annotations

import asyncio

import pytest

from toolscore.models.limits import deadline


@pytest.mark.parametrize("limit", [deadline.scope, deadline.timeout])
def test_a_block_past_its_deadline_raises_timeout_error(limit) -> None:
    async def go() -> None:
        async with limit(0.02):
            await asyncio.sleep(5)

    with pytest.raises(TimeoutError):
        asyncio.run(go())


@pytest.mark.parametrize("limit", [deadline.scope, deadline.timeout])
def test_a_block_in_time_or_without_a_limit_is_left_alone(limit) -> None:
    async def go() -> str:
        async with limit(5):
            await asyncio.sleep(0)
        async with limit(None):
            await asyncio.sleep(0.01)
        return "done"

    assert asyncio.run(go()) == "done"


def test_the_scope_at_a_loop_time_and_an_outside_cancel() -> None:
    async def inner() -> None:
        async with deadline.scope(5):
            await asyncio.sleep(5)

    async def go() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(TimeoutError):
            async with deadline.scope_at(loop.time() + 0.02):
                await asyncio.sleep(5)
        task = asyncio.ensure_future(inner())
        await asyncio.sleep(0.01)
        task.cancel()  # a cancel from outside stays a cancel, not a timeout
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
