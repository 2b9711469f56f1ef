"""The local executor: a sweep's units in a pool of worker processes on this machine.

Processes rather than threads, because a run is CPU work between model calls (building
prompts, scoring, embedding) and one interpreter would serialise it. The parent only
schedules: it starts a unit whenever a worker is free. The provider limits are held by the
workers together: every call of every unit (assistant, simulated user, judge) takes a permit
of its provider from a limiter all the pool's processes share (:mod:`.limits`), so a sweep of
40 runs against one endpoint never has more than the provider's limit of requests in flight,
and a unit near its end leaves the permits it does not need to the others.

The workers end with the parent, however it ends (killed, terminated, crashed): each holds
the read end of a pipe only the parent can write to, and a thread that waits on it ends the
worker when it closes. Without it a worker would run its unit on for minutes with no one to
report to, holding the sweep's stdout open; the unit resumes when the plan is submitted
again, as after any kill.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import importlib.util
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolscore.runs.workers import start_context
from toolscore.sweeps.limits import budget, concurrency, shares
from toolscore.sweeps.limits import slots as slots_per_group
from toolscore.sweeps.plan import Manifest, Unit
from toolscore.sweeps.unit import run_unit

Task = tuple[Unit, "tuple[int, int] | None"]
RETRIES = 2  # times a unit whose worker died is resumed in a new pool


def tasks_of(units: list[Unit]) -> list[Task]:
    """One task per unit, or per shard of a sharded (local-model) unit."""
    return [(u, None if u.shards == 1 else (k, u.shards))
            for u in units for k in range(1, u.shards + 1)]


def settings(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> dict[str, Any]:
    """A unit's settings with fixed shares of its providers' limits (Ray, ``--index``)."""
    return {"max_concurrency": concurrency(manifest, unit, group_slots),
            "cache": manifest.cache, "timeout": manifest.timeout,
            "limits": shares(manifest, unit, group_slots)}


def shared_settings(manifest: Manifest, folder: Path) -> dict[str, Any]:
    """Every unit's settings in the local pool: the run's own concurrency, and each limited
    provider's whole limit (and rate budget) as one limiter file in ``folder`` that all
    workers share."""
    return {"max_concurrency": manifest.max_concurrency, "cache": manifest.cache,
            "timeout": manifest.timeout,
            "limits": {g: [str(folder / f"{i}.lock"), n, *budget(manifest, g)]
                       for i, (g, n) in enumerate(sorted(manifest.limits.items()))}}


def preload(manifest: Manifest) -> list[str]:
    """Modules every worker needs: the run machinery, the plan's benchmarks and providers."""
    from toolscore.benchmarks.registry import benchmark_class
    from toolscore.entrypoints import PROVIDERS
    from toolscore.models.openai.http import env_proxy, plain_target
    from toolscore.models.providers import split_name

    names = {"toolscore.sweeps.unit"}
    # aiohttp (0.3-0.8 s to import, per worker) serves https, proxies and the default endpoints;
    # plain http:// endpoints have toolscore's own client, so a plan of those alone skips it
    plain = all(u.base_url and plain_target(u.base_url, env_proxy(u.base_url))
                for u in manifest.units)
    if not plain and importlib.util.find_spec("aiohttp") is not None:
        names.add("aiohttp")
    for unit in manifest.units:
        with contextlib.suppress(Exception):  # a unit that cannot load fails on its own
            names.add(benchmark_class(unit.benchmark).__module__)
            target = getattr(PROVIDERS.load(split_name(unit.model)[0]), "target", "")
            names.update(filter(None, [target.partition(":")[0]]))
    return sorted(names)


def pool_context(manifest: Manifest) -> Any:
    """Worker processes that start with what they need imported (a spawned worker would import
    it again, four at once on a machine with two cores: seconds of a sweep's start); see
    :func:`toolscore.runs.workers.start_context`."""
    return start_context(preload(manifest))


def run_one(manifest: Manifest, index: int, slots: int | None = None) -> dict[str, Any]:
    """Unit ``index`` in this process (``sweep run --index I --slots N``), one task of a job
    array of which at most ``slots`` run at once (None: every unit of the plan may).

    The tasks share no machine, so each takes a fixed share of every limited provider it
    uses: ``max(1, limit // min(slots, limit, units of the plan using it))`` permits, and a
    concurrency of ``min(max_concurrency, its share of its own model's provider)`` (see
    :mod:`.limits`). The result says which (``max_concurrency``, ``permits``)."""
    if not 0 <= index < len(manifest.units):
        raise ValueError(f"--index {index}: the plan has units 0 to {len(manifest.units) - 1}")
    if slots is not None and slots < 1:
        raise ValueError(f"--slots {slots}: at least one task runs at once")
    unit = manifest.units[index]
    at_once = slots_per_group(manifest, manifest.units,
                              len(manifest.units) if slots is None else slots)
    how = settings(manifest, unit, at_once)
    result = run_unit(unit.to_dict(), how)
    return {**result, "max_concurrency": how["max_concurrency"],
            "permits": {g: v[1] for g, v in how["limits"].items()}}


def run_local(manifest: Manifest, *, workers: int = 4, units: list[Unit] | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every unit (or ``units``) in ``workers`` processes; results in completion order.

    A worker that dies (OOM, killed) breaks its pool: the units it and the others were
    running are resumed in a new pool, up to ``RETRIES`` times each (finished samples are
    kept), and the permits the dead worker held were freed by the kernel with it."""
    todo = tasks_of(list(manifest.units if units is None else units))
    workers = max(1, workers)
    results: list[dict[str, Any]] = []

    def report(result: dict[str, Any]) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    context = pool_context(manifest)
    deaths: Counter[tuple[int, Any]] = Counter()  # by (unit index, shard)
    lifeline, held = context.Pipe(duplex=False)  # the workers read; only this process writes
    # a forked worker inherits this process's end too, and must close it (the same object:
    # a bare descriptor number closed there could be closed again by the object later)
    watch = (lifeline, held if context.get_start_method() == "fork" else None)
    try:
        with tempfile.TemporaryDirectory(prefix="toolscore-sweep-limits-") as folder:
            common = shared_settings(manifest, Path(folder))
            while todo:
                todo = _pool(context, workers, todo, common, deaths, report, watch)
    finally:
        held.close()
        lifeline.close()
    return results


def watch_parent(lifeline: Any, inherited: Any) -> None:
    """A pool worker's initializer: end this process as soon as the pipe from the parent
    closes, which happens when the parent ends, however it ends. A forked worker first closes
    its copy of the parent's end, ``inherited`` (else it would keep its own pipe open)."""
    if inherited is not None:
        inherited.close()

    def wait() -> None:
        with contextlib.suppress(EOFError, OSError):
            while True:
                lifeline.recv_bytes()  # never sent: returns only at the end of the pipe
        os._exit(1)

    threading.Thread(target=wait, name="toolscore-parent-watch", daemon=True).start()


def _pool(context: Any, workers: int, todo: list[Task], common: dict[str, Any],
          deaths: Counter[tuple[int, Any]], report: Callable[[dict[str, Any]], None],
          watch: tuple[Any, Any]) -> list[Task]:
    """Run ``todo`` in one pool until done or broken; returns the tasks to run again."""
    again: list[Task] = []
    running: dict[cf.Future[dict[str, Any]], Task] = {}
    with cf.ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=context,
                                initializer=watch_parent, initargs=watch) as pool:
        while todo or running:
            while todo and len(running) < workers and not again:
                task = todo.pop(0)
                try:
                    running[pool.submit(run_unit, task[0].to_dict(), common, task[1])] = task
                except cf.process.BrokenProcessPool:
                    again.append(task)
            if not running:
                break
            done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                task = running.pop(future)
                try:
                    report(future.result())
                except Exception as e:  # noqa: BLE001 - a worker died (OOM, killed)
                    deaths[task[0].index, task[1]] += 1
                    if deaths[task[0].index, task[1]] <= RETRIES:
                        again.append(task)
                    else:
                        report({"index": task[0].index, "run_dir": task[0].run_dir,
                                "state": "failed",
                                "message": f"worker died: {type(e).__name__}: {e}"})
    return again + todo
