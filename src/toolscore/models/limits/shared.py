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

A limit may also carry a rate budget (requests and tokens per minute) and adapts the permits
it hands out to the provider's 429s; both are shared the same way, through a second file
(:mod:`toolscore.models.limits.budget`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import json
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from toolscore.models.base import InfraError
from toolscore.models.limits.budget import Budget, RateState, TokenEstimate
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

MIN_POLL_S = 0.001
MAX_POLL_S = 0.005
SAFETY_WAKE_S = 1.0  # a waiter not first in line re-checks this often, whatever happens

_BUSY = (errno.EACCES, errno.EAGAIN)


class SharedLimit:
    """``permits`` requests in flight across every process that opens ``path`` (fewer
    after 429s), within ``budget`` requests and tokens per minute."""

    def __init__(self, path: str, permits: int, budget: Budget = Budget(),
                 keeper: str | None = None) -> None:
        if permits < 1:
            raise ValueError(f"a shared limit needs at least 1 permit, got {permits}")
        self.path = str(path)
        self.permits = permits
        self.budget = budget
        self.keeper = keeper  # a Ray actor holding the budget for a cluster (models.cluster)
        if keeper:
            from toolscore.models.limits.cluster import ClusterRate

            self.rate: RateState = ClusterRate(self.path + ".rate", permits, budget, keeper)
        else:
            self.rate = RateState(self.path + ".rate", permits, budget)
        self.estimate = TokenEstimate()
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
        window = self.rate.window()
        with self._mutex:
            for k in range(window):
                slot = (self._next + k) % window
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

    def permit(self, messages: list[Message] | None = None, tools: list[ToolSpec] | None = None,
               config: GenerateConfig | None = None) -> Permit:
        """``async with limit.permit() as p``: one permit for one request and its retries
        (the request, when given, is what a token budget charges)."""
        chars = 0
        if self.budget.tpm and messages is not None:
            chars = TokenEstimate.size(messages, tools or [], config or GenerateConfig())
        return Permit(self, chars)

    def close(self) -> None:
        """Drop every permit this process holds and the file (its other processes go on)."""
        with self._mutex:
            self._held.clear()
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
        self.rate.close()


class Permit:
    """A permit held for one request. Between two attempts of a retried request it is given
    back (:meth:`pause`, the retry layer's sleep), so a unit backing off an endpoint does not
    keep other units from it; waiting for it again never counts against an attempt's timeout.
    Each attempt is charged to the limit's rate budget before it is sent (waiting for it, out
    of the attempt's timeout too); :meth:`settle` corrects the charge with the reply's usage,
    and :meth:`watch` tells the limit of the attempts a 429 refused."""

    def __init__(self, limit: SharedLimit, chars: int = 0) -> None:
        self.limit = limit
        self.slot: int | None = None
        self.chars = chars
        self.charged = 0.0
        self.sent_at = 0.0

    async def __aenter__(self) -> Permit:
        self.slot = await self.limit.acquire()
        await self._admit()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.slot is not None:
            self.limit.release(self.slot)
            self.slot = None

    async def _admit(self) -> None:
        """Wait until the budget holds this attempt's cost, and charge it."""
        if self.limit.budget:
            self.charged = self.limit.estimate.tokens(self.chars) if self.chars else 0.0
            while (wait := self.limit.rate.take(self.charged)) > 0:
                await asyncio.sleep(wait + random.uniform(0, MIN_POLL_S))  # not all at once
        elif (wait := self.limit.rate.held_for()) > 0:  # a Retry-After holds every request
            await asyncio.sleep(wait)
        self.sent_at = time.monotonic()

    async def pause(self, seconds: float) -> None:
        if self.slot is not None:
            self.limit.release(self.slot)
            self.slot = None
        await asyncio.sleep(seconds)
        self.slot = await self.limit.acquire()
        await self._admit()

    def settle(self, reply: Reply) -> None:
        """The attempt succeeded: charge what its reply used instead of the estimate."""
        limit, usage = self.limit, reply.usage
        if limit.budget.tpm and (usage.input_tokens or usage.output_tokens):
            limit.rate.refund(self.charged - usage.total_tokens)
            if self.chars:
                limit.estimate.learn(self.chars, usage)
        limit.rate.succeeded()

    def watch(self, on_error: Callable[[int, InfraError], None]) -> Callable[[int, InfraError],
                                                                            None]:
        """``on_error`` that first tells the limit of a 429 (see :meth:`RateState.throttled`)."""
        def seen(attempt: int, err: InfraError) -> None:
            if err.status == 429:
                self.limit.rate.throttled(err.retry_after, self.sent_at)
            on_error(attempt, err)

        return seen


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


# The limits of this process, also in the environment of the processes it starts: a process
# forked from it inherits them as they are, a spawned one (or one of a fork server started
# meanwhile) installs them from there when it imports this module.
LIMITS_ENV = "TOOLSCORE_PROVIDER_LIMITS"

# The limits of this process: group (a provider like "openai", or a full model name) -> its
# limiter. Empty outside a sweep, so an ordinary run pays one dict lookup per call.
_GROUPS: dict[str, SharedLimit] = {}


def install(limits: dict[str, tuple[Any, ...]]) -> None:
    """Make this process count its calls against ``{group: (file, permits)}``, or
    ``(file, permits, rpm, tpm)`` for a rate budget too, or ``(file, permits, rpm, tpm,
    keeper)`` for a budget held by a Ray actor of that name (replacing the groups installed
    before; an unchanged group keeps its limiter and the permits it holds)."""
    wanted = {g: (str(v[0]), int(v[1]), _budget(v), v[4] if len(v) > 4 else None)
              for g, v in limits.items()}
    for group in list(_GROUPS):
        old = _GROUPS[group]
        if (old.path, old.permits, old.budget, old.keeper) != wanted.get(group):
            del _GROUPS[group]
            if old not in _GROUPS.values():
                old.close()
    for group, (path, permits, budget, keeper) in wanted.items():
        if group not in _GROUPS:
            same = next((g for g in _GROUPS.values() if g.path == path), None)
            _GROUPS[group] = same or SharedLimit(path, permits, budget, keeper)
    # for the processes this one starts (a run's --workers), but for a Ray actor's budget: a
    # process outside Ray that asked for the actor would start a Ray instance of its own
    mine = {g: v for g, v in installed().items() if len(v) <= 4}
    if mine:
        os.environ[LIMITS_ENV] = json.dumps(mine)
    else:
        os.environ.pop(LIMITS_ENV, None)


def _budget(value: tuple[Any, ...]) -> Budget:
    rpm, tpm = (list(value[2:4]) + [None, None])[:2]
    return Budget(None if rpm is None else float(rpm), None if tpm is None else float(tpm))


def installed() -> dict[str, tuple[Any, ...]]:
    return {g: (lim.path, lim.permits)
            + ((lim.budget.rpm, lim.budget.tpm) if lim.budget or lim.keeper else ())
            + ((lim.keeper,) if lim.keeper else ()) for g, lim in _GROUPS.items()}


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


def _inherited() -> None:
    """The limits of the process that started this one, if it had any."""
    raw = os.environ.get(LIMITS_ENV)
    if not raw or _GROUPS:
        return
    try:
        limits = json.loads(raw)
        install({str(g): tuple(v) for g, v in limits.items()})
    except (ValueError, TypeError, AttributeError, IndexError, OSError):
        os.environ.pop(LIMITS_ENV, None)  # not ours to make sense of: no limit, as before


_inherited()
