"""The fake OpenAI server with a provider's rate limits: requests and tokens per minute, each a
token bucket of ``burst_s`` seconds of the budget (full at start, as an idle key's is), and a
429 for a request past either, as a provider answers; the request refused is not charged.

A request costs one request and its tokens: its prompt (:func:`request_tokens`, words of its
messages and tools) plus the reply's completion tokens; the reply's ``usage`` reports that
same prompt count, so a client that settles its budget with the usage counts what the server
counted. ``accepted`` holds the arrival time (``time.monotonic()``) and cost of every request
let through; ``throttled`` counts the 429s.
"""

from __future__ import annotations

import time
from typing import Any

from support.testing.dialects import request_tokens
from support.testing.openai_server import FakeOpenAIServer, _error


class RateLimitedServer(FakeOpenAIServer):
    def __init__(self, *args: Any, rpm: float | None = None, tpm: float | None = None,
                 burst_s: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rpm, self.tpm, self.burst_s = rpm, tpm, burst_s
        self.accepted: list[tuple[float, int]] = []
        self.throttled = 0
        now = time.monotonic()
        self._levels = {"rpm": self._cap(rpm), "tpm": self._cap(tpm)}
        self._at = {"rpm": now, "tpm": now}

    def _cap(self, rate: float | None) -> float:
        return 0.0 if not rate else rate / 60.0 * self.burst_s

    def admit(self, tokens: int) -> bool:
        """Charge one request of ``tokens`` if both buckets hold it."""
        now = time.monotonic()
        costs = {"rpm": 1.0, "tpm": float(tokens)}
        for key, rate in (("rpm", self.rpm), ("tpm", self.tpm)):
            if rate:
                self._levels[key] = min(self._cap(rate), self._levels[key]
                                        + (now - self._at[key]) * rate / 60.0)
                self._at[key] = now
        if any(rate and self._levels[k] < costs[k] for k, rate in (("rpm", self.rpm),
                                                                   ("tpm", self.tpm))):
            self.throttled += 1
            return False
        for key in costs:
            self._levels[key] -= costs[key]
        self.accepted.append((now, tokens))
        return True

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = request_tokens(request)
        body = self.responder(request)
        usage = body.get("usage") or {}
        completion = int(usage.get("completion_tokens") or 0)
        if not self.admit(prompt + completion):
            return 429, _error("rate limit reached for requests or tokens per minute",
                               "rate_limit_exceeded")
        status, answer = await super().handle_chat(request)
        if status == 200:
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return status, answer

    def span(self) -> float:
        """Seconds from the first request let through to the last."""
        if len(self.accepted) < 2:
            return 0.0
        return self.accepted[-1][0] - self.accepted[0][0]
