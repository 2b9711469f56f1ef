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


class LoopTable(Generic[T]):
    """Event loop -> value, forgotten with the loop. The loop asked last is found without a
    lookup in the ``WeakKeyDictionary``, which makes a weak reference each time: every model
    call asks (:class:`PerLoop`, ``client.model_semaphore``)."""

    def __init__(self) -> None:
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary())
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], T] | None = None

    def get(self, loop: asyncio.AbstractEventLoop) -> T | None:
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        value = self._items.get(loop)
        if value is not None:
            self._last = (weakref.ref(loop), value)
        return value

    def set(self, loop: asyncio.AbstractEventLoop, value: T) -> None:
        self._items[loop] = value
        self._last = (weakref.ref(loop), value)

    def pop(self, loop: asyncio.AbstractEventLoop) -> T | None:
        self._last = None
        return self._items.pop(loop, None)


class PerLoop(Generic[T]):
    """``get()`` returns this loop's instance, creating it (and its shutdown hook) on first use."""

    def __init__(self, make: Callable[[], T], close: Callable[[T], Awaitable[object]]):
        self._make = make
        self._close = close
        self._items: LoopTable[tuple[T, object]] = LoopTable()

    async def get(self) -> T:
        loop = asyncio.get_running_loop()
        entry = self._items.get(loop)
        if entry is None:
            item = self._make()
            hook = _close_at_shutdown(lambda: self._close(item))
            entry = (item, hook)
            self._items.set(loop, entry)
            await hook.__anext__()  # park it at ``yield``; the loop now tracks it
        return entry[0]

    async def aclose(self) -> None:
        """Close this loop's instance now (optional: loop shutdown does it anyway)."""
        entry = self._items.pop(asyncio.get_running_loop())
        if entry is not None:
            await entry[1].aclose()  # type: ignore[attr-defined]
