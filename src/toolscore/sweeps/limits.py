"""Per-provider limits across a whole sweep, not per run.

A provider limit (``limits: {openai: 16}``) is the number of requests in flight to that
provider from the whole sweep. Each run already keeps its own requests under its
``max_concurrency`` (one semaphore per model in the run's process), so the sweep only has to
choose, per provider, how many of its units run at once (``slots``) and give each of them
``limit // slots`` connections: the total in flight is then at most ``slots * (limit //
slots) <= limit``. The local pool enforces ``slots`` when it schedules units; on Ray the same
sum is enforced by the cluster through custom resources (see :mod:`.ray_executor`).
"""

from __future__ import annotations

from collections import Counter

from toolscore.sweeps.plan import Manifest, Unit


def slots(manifest: Manifest, units: list[Unit], workers: int) -> dict[str, int]:
    """How many units of each limited group may run at once with ``workers`` processes."""
    pending = Counter(u.group for u in units)
    return {g: max(1, min(workers, manifest.limits[g], n)) for g, n in pending.items()
            if g in manifest.limits}


def concurrency(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> int:
    """Requests in flight one unit may have: the run's own setting, cut to its share."""
    own = manifest.max_concurrency
    if unit.group not in manifest.limits:
        return own
    share = manifest.limits[unit.group] // group_slots.get(unit.group, 1)
    return max(1, min(own, share))


class Gate:
    """Which units may start now: at most ``slots[group]`` running per limited group."""

    def __init__(self, group_slots: dict[str, int]) -> None:
        self.slots = group_slots
        self.running: Counter[str] = Counter()

    def admits(self, unit: Unit) -> bool:
        return unit.group not in self.slots or self.running[unit.group] < self.slots[unit.group]

    def start(self, unit: Unit) -> None:
        self.running[unit.group] += 1

    def finish(self, unit: Unit) -> None:
        self.running[unit.group] -= 1
