"""A provider's rate budget (requests and tokens per minute) and its adaptive concurrency,
shared by every process that opens one state file.

Providers limit more than connections: a key has requests-per-minute and tokens-per-minute
quotas, answered with 429 past them. Here each is a token bucket (half a second of the budget
deep, refilled continuously at ``rpm / 60`` requests and ``tpm / 60`` tokens a second), the
model providers themselves describe. A request is charged when it is sent, if both buckets
hold its cost; else it waits the time they take to refill that far and asks again. Its tokens
are an estimate (its size, scaled by what past replies reported, plus the usual reply
length), settled when the reply's usage comes back. Charging at the send rather than
reserving ahead matters: a reservation made long before the send, settled after, would hand
back budget of a past second that the provider's own bucket (full, then) already lost, and
the requests that used it would arrive in a burst. The buckets start nearly empty (one
request's worth): a sweep never starts with a burst into a budget that something else may
have used, at the cost of at most half a second.

The number of requests in flight adapts too (AIMD): a 429 halves the window of permits in use
(once per round: the 429s of requests sent before that cut do not cut again) and, when the
server says Retry-After, holds every process's next request until then; each window's worth
of successes grows it back by one, up to the configured limit.

The state (eight doubles) lives in a small file locked with ``lockf`` around each read-modify-
write (microseconds, never held across an await), so the processes of a sweep on one machine
share one budget, and a process killed mid-update leaves the lock to the kernel. Times are
``time.monotonic()``, one clock for every process of the machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolscore.types import GenerateConfig, Message, ToolSpec, Usage

# seconds of budget a bucket holds: half of what providers let through at once (a second's
# worth or more), so that the network's jitter (requests sent in turn arriving closer
# together) never finds the provider's bucket emptier than ours
BURST_S = 0.5
MAX_HOLD_S = 60.0  # the longest Retry-After every request is held for
CHARS_PER_TOKEN = 4.0  # the estimate's prior, before any reply has reported its usage
LEARN = 0.2  # weight of the newest reply in the estimate's running averages

# request level, its time, token level, its time, hold until, window, successes, last cut
_STATE = struct.Struct("<8d")
REQ, REQ_T, TOK, TOK_T, HOLD, WINDOW, WINS, CUT = range(8)


@dataclass(frozen=True)
class Budget:
    """Requests and tokens per minute (None: not limited)."""

    rpm: float | None = None
    tpm: float | None = None

    def __bool__(self) -> bool:
        return bool(self.rpm or self.tpm)


class RateState:
    """The shared budget and window of one provider limit of ``permits`` connections."""

    def __init__(self, path: str, permits: int, budget: Budget = Budget()) -> None:
        self.path = str(path)
        self.permits = permits
        self.budget = budget
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        self._mutex = threading.Lock()  # lockf is per process: threads take this first
        with self._state():  # the first process to open it starts the buckets' clock
            pass

    def _fresh(self, now: float) -> list[float]:
        return [1.0, now, 0.0, now, 0.0, float(self.permits), 0.0, 0.0]

    @contextlib.contextmanager
    def _state(self) -> Iterator[list[float]]:
        """The state, locked across processes; what the block leaves in it is written back."""
        with self._mutex:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 0, 0, os.SEEK_SET)
            try:
                raw = os.pread(self._fd, _STATE.size, 0)
                now = time.monotonic()
                state = list(_STATE.unpack(raw)) if len(raw) == _STATE.size else self._fresh(now)
                state[WINDOW] = min(state[WINDOW], float(self.permits))
                yield state
                os.pwrite(self._fd, _STATE.pack(*state), 0)
            finally:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 0, 0, os.SEEK_SET)

    def window(self) -> int:
        """Permits that may be in use now (the configured limit until a 429 cuts it)."""
        # read alone, unlocked (one aligned double): every permit taken asks, and a value one
        # update old is as good as a fresh one
        raw = os.pread(self._fd, 8, 8 * WINDOW)
        if len(raw) < 8:
            return self.permits
        value = struct.unpack("<d", raw)[0]
        return max(1, min(self.permits, int(value))) if math.isfinite(value) else self.permits

    def take(self, tokens: float) -> float:
        """Charge one request of ``tokens`` (estimated) if the buckets hold it now: 0.0;
        else charge nothing and return the seconds until they should (ask again then)."""
        now = time.monotonic()
        with self._state() as s:
            wait = s[HOLD] - now
            rates = ((REQ, REQ_T, self.budget.rpm, 1.0), (TOK, TOK_T, self.budget.tpm, tokens))
            for level, at, rate, cost in rates:
                if rate:
                    per_s = rate / 60.0
                    s[level] = min(per_s * BURST_S, s[level] + max(0.0, now - s[at]) * per_s)
                    s[at] = max(now, s[at])
                    # a request larger than the bucket goes when it is full
                    wait = max(wait, (min(cost, per_s * BURST_S) - s[level]) / per_s)
            if wait > 0:
                return wait
            for level, _, rate, cost in rates:
                if rate:
                    s[level] -= cost
        return 0.0

    def held_for(self) -> float:
        """Seconds every request waits still for a Retry-After (read unlocked, as
        :meth:`window`)."""
        raw = os.pread(self._fd, 8, 8 * HOLD)
        if len(raw) < 8:
            return 0.0
        until = struct.unpack("<d", raw)[0]
        return max(0.0, until - time.monotonic()) if math.isfinite(until) else 0.0

    def refund(self, tokens: float, requests: float = 0.0) -> None:
        """Give back what a reservation over-charged (negative: charge what it missed)."""
        if not self.budget.tpm and not requests:
            return
        with self._state() as s:
            if self.budget.tpm:
                s[TOK] = min(self.budget.tpm / 60.0 * BURST_S, s[TOK] + tokens)
            if self.budget.rpm and requests:
                s[REQ] = min(self.budget.rpm / 60.0 * BURST_S, s[REQ] + requests)

    def throttled(self, retry_after: float | None, sent_at: float) -> None:
        """A 429 for a request sent at ``sent_at``: halve the window (unless a 429 of a later
        request already did), empty the buckets, hold everyone for Retry-After."""
        now = time.monotonic()
        with self._state() as s:
            if sent_at >= s[CUT]:
                s[WINDOW] = max(1.0, math.floor(s[WINDOW] / 2))
                s[WINS], s[CUT] = 0.0, now
            s[REQ], s[TOK] = min(s[REQ], 0.0), min(s[TOK], 0.0)
            if retry_after is not None and retry_after > 0:
                s[HOLD] = max(s[HOLD], now + min(retry_after, MAX_HOLD_S))

    def succeeded(self) -> None:
        """One success: a window's worth of them grows the window by one."""
        if self.window() >= self.permits:  # the usual case: no lock taken
            return
        with self._state() as s:
            if s[WINDOW] >= self.permits:
                return
            s[WINS] += 1
            if s[WINS] >= s[WINDOW]:
                s[WINDOW], s[WINS] = min(float(self.permits), s[WINDOW] + 1), 0.0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class TokenEstimate:
    """What a request will cost in tokens, before it is sent: its characters over the
    characters per token its provider's replies reported, plus their average reply length.
    Learned in this process from the replies' usage (every process learns alike)."""

    def __init__(self) -> None:
        self.chars_per_token = CHARS_PER_TOKEN
        self.reply_tokens = 0.0
        self._seen = 0

    @staticmethod
    def size(messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> int:
        """The request's characters (messages and tool schemas as JSON)."""
        body: list[Any] = [m.to_dict() for m in messages] + [t.to_dict() for t in tools]
        return len(json.dumps(body, ensure_ascii=False, default=str))

    def tokens(self, chars: int) -> float:
        return chars / self.chars_per_token + self.reply_tokens

    def learn(self, chars: int, usage: Usage) -> None:
        if usage.input_tokens <= 0 and usage.output_tokens <= 0:
            return  # a provider that reports no usage: keep the prior
        weight = 1.0 if self._seen == 0 else LEARN
        self._seen += 1
        if usage.input_tokens > 0:
            ratio = chars / usage.input_tokens
            self.chars_per_token += weight * (ratio - self.chars_per_token)
        self.reply_tokens += weight * (usage.output_tokens - self.reply_tokens)
