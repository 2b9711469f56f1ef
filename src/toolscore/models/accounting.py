"""Tokens per model role within one unit of work (one sample of a run).

Every :class:`~toolscore.models.client.ModelClient` is tagged with a role ("assistant", "user",
"judge"); each reply it returns is also added to the ledger of the running task, if one is
open, under that role. The runner opens one ledger per sample, so a sample's record can say
what the assistant, the simulated user and the judge each cost, without every benchmark and
simulator threading counters through its signatures. The ledger lives in a context variable:
concurrent samples (asyncio tasks) and work they hand to threads each see their own.

Each role also remembers which model served it (``model`` in its entry, or ``models`` with
the usage of each when several did), so a cost is priced per model. A run with a cost limit
opens a meter (:func:`spend_meter`) that sees every call as it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from toolscore.types import Usage

ROLES = ("assistant", "user", "judge")


@dataclass
class UsageLedger:
    """Usage per role; ``total`` is their sum."""

    by_role: dict[str, Usage] = field(default_factory=dict)
    by_model: dict[str, dict[str, Usage]] = field(default_factory=dict)

    def add(self, role: str, usage: Usage, model: str | None = None) -> None:
        self.by_role.setdefault(role, Usage()).add(usage)
        if model is not None:
            self.by_model.setdefault(role, {}).setdefault(model, Usage()).add(usage)

    def total(self) -> Usage:
        out = Usage()
        for usage in self.by_role.values():
            out.add(usage)
        return out

    def to_dict(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for role, u in sorted(self.by_role.items()):
            out[role] = entry = u.to_dict()
            models = self.by_model.get(role) or {}
            if len(models) == 1 and next(iter(models.values())) == u:
                entry["model"] = next(iter(models))
            elif models:
                entry["models"] = {m: mu.to_dict() for m, mu in sorted(models.items())}
        return out


_LEDGER: ContextVar[UsageLedger | None] = ContextVar("toolscore_usage_ledger", default=None)
Meter = Callable[[str, "str | None", Usage], None]
_METER: ContextVar[Meter | None] = ContextVar("toolscore_spend_meter", default=None)


def record_usage(role: str, usage: Usage, model: str | None = None) -> None:
    """Add ``usage`` of ``model`` under ``role`` to the open ledger (no-op when none is open),
    and show it to the open meter."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.add(role, usage, model)
    meter = _METER.get()
    if meter is not None:
        meter(role, model, usage)


@contextmanager
def spend_meter(meter: Meter) -> Iterator[None]:
    """Call ``meter(role, model, usage)`` for every reply inside the block (tasks started
    inside it, and their threads, included)."""
    token = _METER.set(meter)
    try:
        yield
    finally:
        _METER.reset(token)


@contextmanager
def usage_ledger() -> Iterator[UsageLedger]:
    """Open a ledger for the calls made inside the block (in this task and its threads)."""
    ledger = UsageLedger()
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)
