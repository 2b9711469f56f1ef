"""The local executor: a sweep's units in a pool of worker processes on this machine.

Processes rather than threads, because a run is CPU work between model calls (building
prompts, scoring, embedding) and one interpreter would serialise it. The parent only
schedules: it starts a unit when a worker is free and the unit's provider has a free slot
(:mod:`.limits`), so a sweep of 40 runs against one endpoint never has more than the
provider's limit of requests in flight, whatever the number of workers.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Callable
from typing import Any

from toolscore.sweeps.limits import Gate, concurrency, slots
from toolscore.sweeps.plan import Manifest, Unit
from toolscore.sweeps.unit import run_unit

Task = tuple[Unit, "tuple[int, int] | None"]


def tasks_of(units: list[Unit]) -> list[Task]:
    """One task per unit, or per shard of a sharded (local-model) unit."""
    return [(u, None if u.shards == 1 else (k, u.shards))
            for u in units for k in range(1, u.shards + 1)]


def settings(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> dict[str, Any]:
    return {"max_concurrency": concurrency(manifest, unit, group_slots),
            "cache": manifest.cache, "timeout": manifest.timeout}


def run_one(manifest: Manifest, index: int) -> dict[str, Any]:
    """Unit ``index`` in this process (``sweep run --index I``). Other units may be running
    at the same time as other jobs, so it takes the smallest share of its provider's limit:
    ``limit // units of that provider``."""
    if not 0 <= index < len(manifest.units):
        raise ValueError(f"--index {index}: the plan has units 0 to {len(manifest.units) - 1}")
    unit = manifest.units[index]
    share = slots(manifest, manifest.units, len(manifest.units))
    return run_unit(unit.to_dict(), settings(manifest, unit, share))


def run_local(manifest: Manifest, *, workers: int = 4, units: list[Unit] | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every unit (or ``units``) in ``workers`` processes; results in completion order."""
    todo = tasks_of(list(manifest.units if units is None else units))
    workers = max(1, workers)
    group_slots = slots(manifest, [u for u, _ in todo], workers)
    gate = Gate(group_slots)
    results: list[dict[str, Any]] = []
    running: dict[cf.Future[dict[str, Any]], Unit] = {}
    # spawn: a forked child would inherit the parent's threads' locks (a test's server)
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(workers, max(1, len(todo))),
                                mp_context=context) as pool:
        while todo or running:
            for task in list(todo):
                if len(running) >= workers:
                    break
                unit, shard = task
                if gate.admits(unit):
                    todo.remove(task)
                    gate.start(unit)
                    future = pool.submit(run_unit, unit.to_dict(),
                                         settings(manifest, unit, group_slots), shard)
                    running[future] = unit
            done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                unit = running.pop(future)
                gate.finish(unit)
                try:
                    result = future.result()
                except Exception as e:  # noqa: BLE001 - a worker died (OOM, killed)
                    result = {"index": unit.index, "run_dir": unit.run_dir, "state": "failed",
                              "message": f"worker died: {type(e).__name__}: {e}"}
                results.append(result)
                if on_result is not None:
                    on_result(result)
    return results
