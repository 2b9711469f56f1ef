"""Provider limits shared by several processes: the requests in flight to one provider from a
whole sweep, whichever worker process (and whichever role: assistant, user agent, judge) sends
them.

Why not a share per run: a fixed ``limit // units`` per running unit sits idle when a unit
reaches its tail (a few samples left) while other units could use it. Here every run may send
up to the provider's whole limit and a counter common to all the sweep's processes caps the
total, so a permit one unit does not need is at once another's.

Why byte-range locks on a file rather than a ``multiprocessing`` semaphore: permit ``i`` is an
exclusive POSIX lock on byte ``i`` of a file the sweep creates, and the kernel drops a
process's locks when it dies. A worker killed mid-call (OOM, SIGKILL) therefore cannot leak
its permits, which a semaphore of a killed process would do for good. POSIX locks belong to the
process, not to a coroutine or a thread, so which permits this process holds is kept here
(``_held``), and the file is opened once per process (closing any descriptor of it would drop
all of the process's locks on it: hence one :class:`SharedLimit` per path, in the registry).

Taking a free permit is one non-blocking ``lockf`` (microseconds); it never blocks the event
loop. A coroutine that finds none waits: a permit released in this process wakes the first
local waiter at once; permits released by other processes are noticed by that first waiter
alone, polling with a short backoff (1 to 5 ms, against calls of tens of milliseconds or more),
so the other waiters of the process cost nothing while they wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import threading
from collections import deque

MIN_POLL_S = 0.001
MAX_POLL_S = 0.005
SAFETY_WAKE_S = 1.0  # a waiter not first in line re-checks this often, whatever happens

_BUSY = (errno.EACCES, errno.EAGAIN)


class SharedLimit:
    """``permits`` requests in flight across every process that opens ``path``."""

    def __init__(self, path: str, permits: int) -> None:
        if permits < 1:
            raise ValueError(f"a shared limit needs at least 1 permit, got {permits}")
        self.path = str(path)
        self.permits = permits
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        self._held: set[int] = set()
        self._mutex = threading.Lock()
        self._next = os.getpid() % permits  # processes start their search at different bytes
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = deque()

    def held(self) -> int:
        """Permits this process holds now."""
        return len(self._held)

    def try_acquire(self) -> int | None:
        """A free permit (its number), or None when every one is held by some process."""
        with self._mutex:
            for k in range(self.permits):
                slot = (self._next + k) % self.permits
                if slot in self._held:
                    continue
                try:
                    fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot, os.SEEK_SET)
                except OSError as e:
                    if e.errno in _BUSY:
                        continue
                    raise
                self._held.add(slot)
                self._next = (slot + 1) % self.permits
                return slot
        return None

    def release(self, slot: int) -> None:
        with self._mutex:
            if slot not in self._held:
                return
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, slot, os.SEEK_SET)
            self._held.discard(slot)
            first = self._waiters[0] if self._waiters else None
        if first is not None:
            _wake(*first)

    async def acquire(self) -> int:
        """A permit, waiting without blocking the loop until one is free."""
        slot = self.try_acquire()
        if slot is not None:
            return slot
        loop = asyncio.get_running_loop()
        me = (loop, asyncio.Event())
        with self._mutex:
            self._waiters.append(me)
        delay = MIN_POLL_S
        try:
            while True:
                first = self._waiters[0] is me
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(me[1].wait(), delay if first else SAFETY_WAKE_S)
                me[1].clear()
                slot = self.try_acquire()
                if slot is not None:
                    return slot
                delay = min(delay * 2, MAX_POLL_S) if first else MIN_POLL_S
        finally:
            with self._mutex:
                self._waiters.remove(me)
                after = self._waiters[0] if self._waiters else None
            if after is not None:  # the next in line now watches for permits
                _wake(*after)

    def permit(self) -> Permit:
        """``async with limit.permit() as p``: one permit for one request and its retries."""
        return Permit(self)

    def close(self) -> None:
        """Drop every permit this process holds and the file (its other processes go on)."""
        with self._mutex:
            self._held.clear()
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


class Permit:
    """A permit held for one request. Between two attempts of a retried request it is given
    back (:meth:`pause`, the retry layer's sleep), so a unit backing off an endpoint does not
    keep other units from it; waiting for it again never counts against an attempt's timeout."""

    def __init__(self, limit: SharedLimit) -> None:
        self.limit = limit
        self.slot: int | None = None

    async def __aenter__(self) -> Permit:
        self.slot = await self.limit.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.slot is not None:
            self.limit.release(self.slot)
            self.slot = None

    async def pause(self, seconds: float) -> None:
        if self.slot is not None:
            self.limit.release(self.slot)
            self.slot = None
        await asyncio.sleep(seconds)
        self.slot = await self.limit.acquire()


def _wake(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    try:
        if loop is _running_loop():
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)
    except RuntimeError:  # that waiter's loop is closed: nobody to wake
        pass


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# The limits of this process: group (a provider like "openai", or a full model name) -> its
# limiter. Empty outside a sweep, so an ordinary run pays one dict lookup per call.
_GROUPS: dict[str, SharedLimit] = {}


def install(limits: dict[str, tuple[str, int]]) -> None:
    """Make this process count its calls against ``{group: (file, permits)}`` (replacing the
    groups installed before; an unchanged group keeps its limiter and the permits it holds)."""
    for group in list(_GROUPS):
        old = _GROUPS[group]
        path, permits = limits.get(group, (None, None))
        if (old.path, old.permits) != (path, permits):
            del _GROUPS[group]
            if old not in _GROUPS.values():
                old.close()
    for group, (path, permits) in limits.items():
        if group not in _GROUPS:
            same = next((g for g in _GROUPS.values() if g.path == str(path)), None)
            _GROUPS[group] = same or SharedLimit(path, int(permits))


def installed() -> dict[str, tuple[str, int]]:
    return {g: (lim.path, lim.permits) for g, lim in _GROUPS.items()}


def group_of(model: str) -> str:
    """The provider part of a model name (``openai/gpt-4o`` -> ``openai``, ``replay:f`` ->
    ``replay``), the default name a limit is counted under."""
    cut = min((i for i in (model.find("/"), model.find(":")) if i >= 0), default=len(model))
    return model[:cut]


def limiter_for(model: str) -> SharedLimit | None:
    """The limiter a call to ``model`` counts against: the model's own if a limit names it,
    else its provider's, else None."""
    if not _GROUPS:
        return None
    return _GROUPS.get(model) or _GROUPS.get(group_of(model))
