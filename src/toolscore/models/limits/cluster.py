"""A rate budget shared by processes on several machines: the buckets of
:mod:`toolscore.models.limits.budget` held by one Ray actor that every task asks.

On one machine the budget is a file every process locks; processes on a Ray cluster share
no file, so the sweep's driver starts a :class:`BudgetKeeper` actor per budgeted provider and
each task's limiter (:class:`ClusterRate`) charges the keeper instead: one call to it per
request sent (about a millisecond, against the tens of milliseconds of a model call; the
task's loop waits for it, which keeps a budget's requests in the order they asked). What
concerns one task alone stays in its own file: the permits of its fixed share and the window
a 429 cuts, whose Retry-After the keeper also holds every task to. Times cross no machine:
the keeper reads its own clock, and a Retry-After travels as a duration.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from toolscore.models.limits.budget import HOLD, Budget, RateState


class MemoryRate(RateState):
    """The state of :class:`RateState` in this process's memory (the keeper's)."""

    def __init__(self, budget: Budget) -> None:
        self.path, self.permits, self.budget, self._fd = "", 1, budget, -1
        self._values = self._fresh(time.monotonic())

    @contextlib.contextmanager
    def _state(self) -> Iterator[list[float]]:
        yield self._values

    def window(self) -> int:
        return 1

    def held_for(self) -> float:
        return max(0.0, self._values[HOLD] - time.monotonic())

    def close(self) -> None:
        pass


class BudgetKeeper:
    """The Ray actor holding one provider's budget for the whole cluster."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        self.rate = MemoryRate(Budget(rpm, tpm))

    def ready(self) -> bool:
        return True

    def take(self, tokens: float) -> float:
        return self.rate.take(tokens)

    def refund(self, tokens: float) -> None:
        self.rate.refund(tokens)

    def throttled(self, retry_after: float | None) -> None:
        self.rate.throttled(retry_after, time.monotonic())


class ClusterRate(RateState):
    """A task's rate state: its window in its own file, its budget at the keeper ``name``."""

    def __init__(self, path: str, permits: int, budget: Budget, name: str) -> None:
        super().__init__(path, permits, budget)
        self.keeper = keeper(name)

    def _call(self, method: str, *args: Any) -> Any:
        import ray

        return ray.get(getattr(self.keeper, method).remote(*args))

    def take(self, tokens: float) -> float:
        return float(self._call("take", tokens))

    def refund(self, tokens: float, requests: float = 0.0) -> None:
        self._call("refund", tokens)

    def throttled(self, retry_after: float | None, sent_at: float) -> None:
        super().throttled(retry_after, sent_at)
        self._call("throttled", retry_after)


def keeper_name(group: str, run: str) -> str:
    return f"toolscore-budget-{run}-{group}"


def keeper(name: str) -> Any:
    import ray

    return ray.get_actor(name)


def start_keepers(budgets: dict[str, dict[str, float]], run: str) -> dict[str, Any]:
    """One keeper per budgeted group (its actor handle, by group), named for ``run``."""
    import ray

    actor = ray.remote(num_cpus=0)(BudgetKeeper)
    keepers: dict[str, Any] = {
        g: actor.options(name=keeper_name(g, run)).remote(b.get("rpm"), b.get("tpm"))
        for g, b in budgets.items()}
    ray.get([k.ready.remote() for k in keepers.values()])  # named before any task asks
    return keepers
