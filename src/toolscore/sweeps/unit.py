"""One run unit, run in whatever process the executor gives it: the same code for the local
pool, a Ray task and ``sweep run --index I`` (a SLURM array task or a Kubernetes indexed job).

A unit is a run directory plus the arguments of ``toolscore run``. If the directory already
holds the run, it is resumed: finished samples are kept, so a unit killed half way (a worker
lost, a job pre-empted) and submitted again repeats no finished sample. A unit that fails
returns its one-line reason instead of raising, so one bad unit never stops the sweep.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolscore.models.limits import shared as shared_limit
from toolscore.records import RunStore
from toolscore.records.store import RunLocked
from toolscore.runs.api import evaluate_with, resume_with
from toolscore.runs.loaded import Run
from toolscore.runs.settings import RunExecution
from toolscore.sweeps.plan_rules import unit_key


def run_unit(unit: dict[str, Any], settings: dict[str, Any],
             shard: tuple[int, int] | None = None) -> dict[str, Any]:
    """Run (or resume) ``unit`` (a :class:`~.plan.Unit` as a dict); ``settings`` are
    max_concurrency, cache, timeout and ``limits`` (see :func:`provider_limits`). Returns what
    happened, for the sweep's summary."""
    with provider_limits(settings.get("limits") or {}):
        return _run(unit, settings, shard)


@contextlib.contextmanager
def provider_limits(limits: dict[str, Any]) -> Iterator[None]:
    """Count this process's calls (every role) against ``{group: [file, permits]}`` (and
    ``[..., rpm, tpm]``, a rate budget): a file the sweep's processes share, or None for a
    limiter of this unit alone (a fixed share)."""
    with tempfile.TemporaryDirectory(prefix="toolscore-limits-") as private:
        shared_limit.install({g: (v[0] or str(Path(private) / f"{i}.lock"), int(v[1]), *v[2:])
                              for i, (g, v) in enumerate(sorted(limits.items()))})
        try:
            yield
        finally:
            shared_limit.install({})


def _run(unit: dict[str, Any], settings: dict[str, Any],
         shard: tuple[int, int] | None) -> dict[str, Any]:
    started, cpu = time.perf_counter(), time.process_time()

    def timing() -> dict[str, float]:  # CPU too: what a unit costs the machine, load or not
        return {"wall_s": round(time.perf_counter() - started, 3),
                "cpu_s": round(time.process_time() - cpu, 3)}

    result: dict[str, Any] = {"index": unit["index"], "run_dir": unit["run_dir"],
                              "shard": None if shard is None else f"{shard[0]}/{shard[1]}"}
    store = RunStore(unit["run_dir"])
    how = RunExecution(max_concurrency=settings["max_concurrency"], cache=settings["cache"],
                       timeout=settings["timeout"], progress=False, shard=shard,
                       download=False)
    try:
        with unit_key(unit["model"], unit.get("api_key_env")):
            run = _start(unit, how, store, shard)
    except RunLocked as e:
        return {**result, "state": "busy", "message": str(e), **timing()}
    except Exception as e:  # noqa: BLE001 - reported per unit; the sweep goes on
        return {**result, "state": "failed", "message": f"{type(e).__name__}: "
                f"{' '.join(str(e).split())}", **timing()}
    summary = run.summary or {}
    errors, _ = run.error_count()  # read without the outputs: a unit may hold 10,000 records
    return {**result, "state": "error" if errors else "done", "errors": errors,
            "run_now": summary.get("run_now", 0), "skipped": summary.get("skipped", 0),
            "calls": summary.get("calls", 0), **timing()}


def _start(unit: dict[str, Any], how: RunExecution, store: RunStore,
           shard: tuple[int, int] | None) -> Run:
    """Resume the unit's run, or start it (a new run, or a shard of one that may have been
    started by another shard)."""
    if store.exists() and shard is None:
        # the plan is what the user runs, so what it says may start processes (an MCP
        # server, a plugin set): repeated here, as a user repeats them on the command line
        return resume_with(store.path, how,
                           trusted_options={**unit["options"], "model": unit["model"]})
    return evaluate_with(unit["benchmark"], unit["model"], how, out=store.path,
                         data=unit.get("data"), epochs=unit["epochs"], limit=unit["limit"],
                         base_url=unit.get("base_url"), model_args=unit["model_args"],
                         options=unit["options"])
