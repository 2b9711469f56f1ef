"""SDK clients that live exactly as long as the event loop they were made in.

The async SDKs (openai, anthropic) hold HTTP connection pools bound to the loop they first ran
on. A CLI or a test suite may call ``asyncio.run`` many times, so a provider needs one SDK
client per loop, and each must be closed *inside* its loop before that loop closes; otherwise
the SDK's finaliser later tries to close it on another loop and logs "Event loop is closed".

The trick used: ``asyncio.run`` finalises every live async generator of its loop before closing
it (``loop.shutdown_asyncgens``), so a parked async generator whose ``finally`` closes the client
is a loop-shutdown hook that needs no cooperation from the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


async def _close_at_shutdown(close: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # best effort: the loop is going away anyway
            await close()


class PerLoop(Generic[T]):
    """``get()`` returns this loop's instance, creating it (and its shutdown hook) on first use."""

    def __init__(self, make: Callable[[], T], close: Callable[[T], Awaitable[object]]):
        self._make = make
        self._close = close
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[T, object]] = (
            weakref.WeakKeyDictionary()
        )
        # the loop asked last and its instance: a lookup in a WeakKeyDictionary makes a weak
        # reference each time, and every model call asks
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], T] | None = None

    async def get(self) -> T:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        entry = self._items.get(loop)
        if entry is None:
            item = self._make()
            hook = _close_at_shutdown(lambda: self._close(item))
            entry = self._items[loop] = (item, hook)
            await hook.__anext__()  # park it at ``yield``; the loop now tracks it
        self._last = (weakref.ref(loop), entry[0])
        return entry[0]

    async def aclose(self) -> None:
        """Close this loop's instance now (optional: loop shutdown does it anyway)."""
        self._last = None
        entry = self._items.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()  # type: ignore[attr-defined]
