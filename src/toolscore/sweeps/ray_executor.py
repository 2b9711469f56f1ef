"""The Ray executor: one Ray task per run unit (per shard for a sharded local-model unit),
so a sweep that outgrows one machine runs on an existing cluster engine, not one of ours.

* Retries are Ray's: a task whose worker dies (node lost, OOM, killed) is run again, up to
  ``ray.max_retries`` times, and the unit resumes from its run directory, so finished samples
  are not repeated. Run directories must therefore be on storage every node sees.
* Provider limits are Ray custom resources: a unit that may have ``c`` requests in flight to
  provider ``p`` (as the model under test, a simulated user or a judge: a limiter in the
  task's process holds it to ``c``) asks for ``c`` units of resource ``provider:p``, and the
  cluster declares the provider's limit as that resource's total (``ray start
  --resources='{"provider:openai": 16}'``). Ray then never runs units whose requests add up
  to more than the limit, across all nodes, with no controller of ours. A local instance
  started here declares them itself.
* A rate budget (rpm, tpm) is the cluster's, not split: one actor per budgeted provider holds
  its buckets and every task's calls are charged to it
  (:mod:`toolscore.models.limits.cluster`), so a unit at its tail leaves its part of the
  budget to the others, as in the local pool.
* ``local/*`` units ask for CPUs (and GPUs) to hold their embedded model; API-model units ask
  for a fraction of a CPU, since they mostly wait on the network.

The response cache stays node-local (SQLite does not belong on a network file system); merge
the nodes' caches afterwards with ``toolscore cache merge``.

Ray prints its own notices on the driver's stdout ("(raylet) A worker died or was killed...",
from a thread of its own, whenever they come), where a caller's output (the one JSON document
of ``sweep run --json``) must stay alone. While Ray is in use here, this process's stdout is
therefore its stderr, down to the file descriptor, so Ray's threads and the processes it
starts write there; the real stdout is back once Ray is shut down.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from toolscore.models.limits.cluster import keeper_name, start_keepers
from toolscore.models.providers import split_name
from toolscore.sweeps.limits import groups_of, shares, slots
from toolscore.sweeps.local import settings, tasks_of
from toolscore.sweeps.plan import Manifest, Unit
from toolscore.sweeps.unit import run_unit


def resource_name(group: str) -> str:
    return f"provider:{group}"


def provider_resources(manifest: Manifest) -> dict[str, float]:
    """The custom resources a local Ray instance declares: each provider's limit."""
    return {resource_name(g): float(n) for g, n in sorted(manifest.limits.items())}


def requests(manifest: Manifest, unit: Unit, group_slots: dict[str, int]) -> dict[str, Any]:
    """The Ray resources one task of ``unit`` asks for."""
    local = split_name(unit.model)[0] == "local"
    need: dict[str, Any] = {"num_cpus": manifest.ray["local_cpus" if local else "api_cpus"],
                            "num_gpus": manifest.ray["local_gpus"] if local else 0}
    limits = shares(manifest, unit, group_slots)  # judge and user providers too
    if limits:
        need["resources"] = {resource_name(g): float(v[1]) for g, v in limits.items()}
    return need


def _connect(manifest: Manifest, address: str | None) -> tuple[Any, bool]:
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray executor needs ray: pip install 'toolscore[ray]'") from None
    if ray.is_initialized():
        return ray, False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(resources=provider_resources(manifest) or None, include_dashboard=False,
                 log_to_driver=False)
    return ray, True


def _check(ray: Any, manifest: Manifest, units: list[Unit]) -> float:
    """The cluster's CPUs; a one-line error when it lacks a provider resource."""
    have = ray.cluster_resources()
    for group in sorted({g for u in units for g in groups_of(manifest, u)}):
        name = resource_name(group)
        if have.get(name, 0) < 1:
            raise ValueError(f"the Ray cluster declares no resource {name!r}; start its nodes "
                             f"with ray start --resources='{{\"{name}\": "
                             f"{manifest.limits[group]}}}'")
    return float(have.get("CPU", 1))


def run_ray(manifest: Manifest, *, address: str | None = None, units: list[Unit] | None = None,
            on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every unit (or ``units``) as Ray tasks; results in completion order. Uses the Ray
    instance already initialised in this process, else connects to ``address``, else
    starts a local one (with the plan's provider limits as resources). This process's stdout
    is its stderr until it returns (see the module)."""
    with stdout_to_stderr():
        return _run(manifest, address, tasks_of(list(manifest.units if units is None
                                                     else units)), on_result)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 is a copy of 2 inside, the original after (what Python's
    ``sys.stdout`` buffered meanwhile is flushed to stderr before it comes back)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no stdout to keep clean
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _run(manifest: Manifest, address: str | None, todo: list[Any],
         on_result: Callable[[dict[str, Any]], None] | None) -> list[dict[str, Any]]:
    ray, started = _connect(manifest, address)
    keepers: dict[str, Any] = {}
    try:
        cpus = _check(ray, manifest, [u for u, _ in todo])
        parallel = max(1, int(cpus / max(manifest.ray["api_cpus"], 0.01)))
        group_slots = slots(manifest, [u for u, _ in todo], parallel)
        task = ray.remote(run_unit)
        retries = int(manifest.ray["max_retries"])
        run = uuid.uuid4().hex[:12]
        keepers.update(start_keepers(manifest.budgets, run))
        pending: dict[Any, Unit] = {}
        for unit, shard in todo:
            ref = task.options(max_retries=retries, retry_exceptions=False,
                               **requests(manifest, unit, group_slots)).remote(
                unit.to_dict(), cluster_settings(manifest, unit, group_slots, run), shard)
            pending[ref] = unit
        results = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                unit = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - retries exhausted
                    result = {"index": unit.index, "run_dir": unit.run_dir, "state": "failed",
                              "message": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
                results.append(result)
                if on_result is not None:
                    on_result(result)
        return results
    finally:
        for handle in keepers.values():
            with contextlib.suppress(Exception):  # the sweep's outcome matters, not this
                ray.kill(handle)
        if started:
            ray.shutdown()


def cluster_settings(manifest: Manifest, unit: Unit, group_slots: dict[str, int],
                     run: str) -> dict[str, Any]:
    """A task's settings: fixed shares of the permits, each budget whole at its keeper."""
    how = settings(manifest, unit, group_slots)
    for group, value in how["limits"].items():
        rates = manifest.budgets.get(group)
        if rates:
            how["limits"][group] = [*value[:2], rates.get("rpm"), rates.get("tpm"),
                                    keeper_name(group, run)]
    return how
