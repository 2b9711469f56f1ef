"""``asyncio.timeout`` and ``asyncio.timeout_at`` on every Python toolscore supports: the
standard ones from 3.11, and on 3.10 a cancel scope that behaves the same way for the uses
here (one task, one deadline, :class:`TimeoutError` when it passes)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator


@contextlib.asynccontextmanager
async def scope_at(when: float | None) -> AsyncIterator[None]:
    """Cancel the block at loop time ``when`` (None: never), raising TimeoutError (the 3.10
    stand-in for ``asyncio.timeout_at``)."""
    task = asyncio.current_task()
    if when is None or task is None:
        yield
        return
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_at(when, expire)
    try:
        yield
    except asyncio.CancelledError:
        if expired:
            raise TimeoutError from None
        raise
    finally:
        handle.cancel()


def scope(delay: float | None) -> contextlib.AbstractAsyncContextManager[None]:
    """Cancel the block after ``delay`` seconds (None: never), raising TimeoutError (the 3.10
    stand-in for ``asyncio.timeout``)."""
    return scope_at(None if delay is None else asyncio.get_running_loop().time() + delay)


if sys.version_info >= (3, 11):
    from asyncio import timeout, timeout_at
else:
    timeout, timeout_at = scope, scope_at

__all__ = ["scope", "scope_at", "timeout", "timeout_at"]
