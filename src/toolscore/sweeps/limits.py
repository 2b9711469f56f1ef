"""Per-provider limits across a whole sweep, not per run.

A provider limit (``limits: {openai: 16}``) is the number of requests in flight to that
provider from the whole sweep, whoever sends them: the model under test, a simulated user or a
judge (:func:`groups_of` finds which limited providers a unit may call).

* The local pool counts every call against one limiter per provider shared by all its worker
  processes (:mod:`toolscore.models.limits.shared`): any unit may use the whole limit, so a
  unit at its tail leaves its unused permits to the others instead of a fixed share idling.
* Where processes share no machine (Ray, ``--index`` jobs of SLURM or Kubernetes) each unit
  gets a fixed share: ``limit // slots`` of every provider it uses, where ``slots`` is how
  many units using that provider may run at once, so the shares add up to at most the limit.
  A process-local limiter of that size bounds its calls, judge and user calls included.
  For ``--index`` jobs, how many tasks run at once is ``--slots N`` (neither SLURM nor a
  Kubernetes indexed Job tells its tasks), so ``slots = min(N, limit, units using it)`` and
  the unit's own concurrency is ``min(max_concurrency, share)``: ``limits: {openai: 16}``,
  ``max_concurrency: 8`` and ``--slots 8`` give each task 2 permits and 2 samples in flight.
  A share is at least 1, so with N above the limit the tasks together exceed it.

A limit may carry a rate budget too (``limits: {openai: {concurrency: 16, rpm: 600, tpm:
200000}}``: :mod:`toolscore.models.limits.budget`). The local pool's workers share it whole,
like the permits, and so do Ray's tasks (one actor holds it: :mod:`.ray_executor`); with
fixed shares (``--index``) each unit gets ``rpm / slots`` and ``tpm / slots``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from toolscore.sweeps.plan import Manifest, Unit, limit_group


def models_of(unit: Unit) -> set[str]:
    """The models a unit may call: its own, a user or judge model named in its options
    (``user_model``...) and the model of a judge configuration file it names."""
    models = {unit.model}
    for key, value in {**unit.options, **unit.judge}.items():
        if key.endswith("_model") and isinstance(value, str):
            models.add(value)
        elif key == "judge_config" and value:
            from toolscore.judges.registry import load_judge_config

            try:
                model = load_judge_config(Path(str(value))).model
            except (OSError, ValueError):  # the unit reports its own broken config
                continue
            if model:
                models.add(model)
    return models


def groups_of(manifest: Manifest, unit: Unit) -> set[str]:
    """The limited groups (providers, or models limited by name) a unit may call."""
    found = set()
    for model in models_of(unit):
        try:
            group = limit_group(model, manifest.limits)
        except ValueError:
            continue
        if group in manifest.limits:
            found.add(group)
    return found


def slots(manifest: Manifest, units: list[Unit], workers: int) -> dict[str, int]:
    """How many units using each limited group may run at once with ``workers`` processes."""
    using = Counter(g for u in units for g in groups_of(manifest, u))
    return {g: max(1, min(workers, manifest.limits[g], n)) for g, n in using.items()}


def share(manifest: Manifest, group: str, group_slots: dict[str, int]) -> int:
    return max(1, manifest.limits[group] // group_slots.get(group, 1))


def concurrency(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> int:
    """Requests in flight one unit may have: the run's own setting, cut to its share."""
    own = manifest.max_concurrency
    if unit.group not in manifest.limits:
        return own
    return max(1, min(own, share(manifest, unit.group, group_slots)))


def budget(manifest: Manifest, group: str, parts: int = 1) -> list[float | None]:
    """``[rpm, tpm]`` of a group's budget split in ``parts`` (None: not limited); empty
    without a budget, so a limit without one keeps its two-field form."""
    rates = manifest.budgets.get(group) or {}
    if not rates:
        return []
    return [None if rates.get(k) is None else rates[k] / parts for k in ("rpm", "tpm")]


def shares(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> dict[str, Any]:
    """The ``limits`` setting of a unit with fixed shares: a private limiter per group it
    uses, of its share (of its :func:`concurrency` for its own model's group), and its share
    of the group's rate budget."""
    return {g: [None, concurrency(manifest, unit, group_slots) if g == unit.group
                else share(manifest, g, group_slots),
                *budget(manifest, g, group_slots.get(g, 1))]
            for g in sorted(groups_of(manifest, unit))}
