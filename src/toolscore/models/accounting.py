"""Tokens per model role within one unit of work (one sample of a run).

Every :class:`~toolscore.models.client.ModelClient` is tagged with a role ("assistant", "user",
"judge"); each reply it returns is also added to the ledger of the running task, if one is
open, under that role. The runner opens one ledger per sample, so a sample's record can say
what the assistant, the simulated user and the judge each cost, without every benchmark and
simulator threading counters through its signatures. The ledger lives in a context variable:
concurrent samples (asyncio tasks) and work they hand to threads each see their own.
"""

from __future__ import annotations

from collections.abc import Iterator
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

    def add(self, role: str, usage: Usage) -> None:
        self.by_role.setdefault(role, Usage()).add(usage)

    def total(self) -> Usage:
        out = Usage()
        for usage in self.by_role.values():
            out.add(usage)
        return out

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {role: u.to_dict() for role, u in sorted(self.by_role.items())}


_LEDGER: ContextVar[UsageLedger | None] = ContextVar("toolscore_usage_ledger", default=None)


def record_usage(role: str, usage: Usage) -> None:
    """Add ``usage`` under ``role`` to the open ledger (no-op when none is open)."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.add(role, usage)


@contextmanager
def usage_ledger() -> Iterator[UsageLedger]:
    """Open a ledger for the calls made inside the block (in this task and its threads)."""
    ledger = UsageLedger()
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)
