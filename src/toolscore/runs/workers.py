"""One run in several worker processes: ``evaluate(..., workers=N)``, ``toolscore run
--workers N``.

Why: the harness is CPU work between model calls (building requests, parsing replies, running
simulated tools, hashing their state, writing records), about a millisecond per call, so one
interpreter tops out near a thousand calls a second. Against a fast endpoint with hundreds of
calls in flight, that interpreter, not the endpoint, sets the pace.

How: this process plans the run (the (sample, epoch) pairs not finished yet, longest first)
and deals them round-robin to ``N`` worker processes, so each gets an even share of long and
short samples. Each worker runs its share with its own model client (its own connections and
retries, the same response cache: SQLite in WAL mode is made for several processes) and
appends its records to the one run directory, under the run's append lock, as shards do (see
:mod:`toolscore.records`). The run's ``max_concurrency`` is split between the workers, which
therefore never have more than the run's limit of samples, or of requests to any one model, in
flight together. This process relays progress and ``on_record``, adds the workers' summaries,
and scores the whole run once at the end, as a one-process run does. What a run computes does
not depend on ``workers``: it is left out of the run's identity, and ``workers=N`` can resume a
run started with one process and the other way round.

Workers are forked from this process when it runs no other thread (they then start with its
imports and its loaded benchmark: no second start-up), else started by a fork server (a
benchmark object is then pickled to them). A worker that fails stops the others; finished
samples are kept either way, and the error is re-raised here as it was raised there. A worker
whose parent dies stops too.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import multiprocessing
import os
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from toolscore.benchmarks.base import Benchmark, RunSettings
from toolscore.exits import exit_status
from toolscore.records import RunStore
from toolscore.runs.identity import NO_MODEL
from toolscore.runs.progress import Progress
from toolscore.runs.rebuild import rebuild_from_dir
from toolscore.runs.runner import RunOptions, RunSummary, execute_run, pending
from toolscore.runs.settings import RunExecution, RunIdentity
from toolscore.types import Usage


class WorkerError(RuntimeError):
    """A worker process ended without a result (killed, out of memory, crashed)."""


@dataclass
class WorkerJob:
    """What every worker needs besides its share (plain values: it may be pickled): the run
    (its identity) and how it runs (the cache resolved to a file, no callback)."""

    run_dir: str
    run: RunIdentity
    how: RunExecution
    relay: str  # "records": every record, "ticks": status and usage (progress), "none"
    registered: bool = False  # the benchmark is rebuilt from run.json where it is not forked
    parts: int = 1  # workers of the run (each keeps to its share of a cost limit)


def check_workers(workers: int, shard: tuple[int, int] | None) -> None:
    """A one-line ValueError naming ``--workers`` if it is not a count of processes, or if it
    is combined with a shard (a shard is one process's part of a run)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers {workers!r}: expected a number of processes, 1 or more")
    if workers > 1 and shard is not None:
        raise ValueError(f"--workers {workers} with --shard {shard[0]}/{shard[1]}: give one; "
                         "a shard is run by one process")


START_METHOD_ENV = "TOOLSCORE_START_METHOD"


def start_context(modules: list[str]) -> Any:
    """A multiprocessing context whose processes start with ``modules`` imported: forked from
    this process when it runs no other thread (nothing to import again, no interpreter to
    start), else from a fork server (a plain fork would inherit the locks other threads hold)
    that imports them once; spawned where neither exists. ``$TOOLSCORE_START_METHOD`` (fork,
    forkserver or spawn) chooses instead."""
    methods = multiprocessing.get_all_start_methods()
    chosen = os.environ.get(START_METHOD_ENV, "").strip()
    if chosen and chosen not in methods:
        raise ValueError(f"${START_METHOD_ENV}={chosen!r}: this platform starts processes "
                         f"with {', '.join(methods)}")
    if chosen == "fork" or not chosen and "fork" in methods and threading.active_count() == 1:
        for name in modules:
            importlib.import_module(name)
        return multiprocessing.get_context("fork")
    if chosen == "spawn" or "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(modules)  # no effect once the server runs
    return context


def shares(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` integers that differ by at most one (largest first)."""
    return [total // parts + (k < total % parts) for k in range(parts)]


async def run_in_workers(bench: Benchmark, store: RunStore, job: WorkerJob, options: RunOptions,
                         workers: int,
                         on_record: Callable[[dict[str, Any]], None] | None) -> RunSummary:
    """Run what is left of the run in ``store`` in up to ``workers`` processes (never more than
    there are samples left or slots of ``max_concurrency``); the combined summary."""
    store.repair()
    total, todo = pending(bench, store, replace(options, shard=None, assigned=None))
    summary = RunSummary(total=total, skipped=total - len(todo))
    n = max(1, min(workers, len(todo), options.max_concurrency))
    if not todo:
        return summary
    context = start_context(["toolscore.runs.workers"])
    forked = context.get_start_method() == "fork"
    if forked:  # loaded once here, shared by every forked worker (an embedder: ~90 MB)
        bench.warm()
    deal = [[(s.id, e) for s, e in todo[k::n]] for k in range(n)]
    started = asyncio.get_running_loop().time()
    live = RunSummary(total=total, skipped=summary.skipped)
    progress = Progress(options.progress, live)

    def relayed(message: tuple[Any, ...]) -> None:
        if message[0] == "record" and on_record is not None:
            on_record(message[1])
        status, usage = ((message[1]["status"], message[1]["usage"])
                         if message[0] == "record" else message[1:3])
        live.done += 1
        live.errors += status != "ok"
        live.usage.add(Usage.from_dict(usage))
        progress.update()

    # forked workers share this process's benchmark; others rebuild it from run.json (one
    # made by name) or unpickle it, pickled once before any worker starts
    payload = bench if forked else None if job.registered else _pickled(bench)
    job = replace(job, parts=n)  # with a cost limit, each worker keeps to its share
    handles: list[_Handle] = []
    try:
        for k, (keys, concurrency) in enumerate(zip(deal, shares(options.max_concurrency, n),
                                                    strict=True)):
            part = replace(options, shard=None, assigned=keys, max_concurrency=concurrency,
                           progress=False)
            handles.append(_Handle.start(context, k, n, job, part, payload, handles))
        async with progress:
            results = await _collect(handles, relayed)
    finally:
        for h in handles:
            h.stop()
    for r in results:
        summary.done += r.done
        summary.errors += r.errors
        summary.usage.add(r.usage)
        for role, used in r.usage_by_role.items():
            summary.usage_by_role.setdefault(role, Usage()).add(used)
        if r.spent is not None:
            summary.spent = (summary.spent or 0.0) + r.spent
        summary.cost_stop = summary.cost_stop or r.cost_stop
    summary.wall_s = asyncio.get_running_loop().time() - started
    return summary


class _Handle:
    """One worker process and this end of its pipe."""

    def __init__(self, k: int, n: int, process: Any, conn: Any) -> None:
        self.name = f"worker {k + 1}/{n}"
        self.process = process
        self.conn = conn

    @classmethod
    def start(cls, context: Any, k: int, n: int, job: WorkerJob, options: RunOptions,
              payload: Any, earlier: list[_Handle]) -> _Handle:
        here, there = context.Pipe(duplex=True)
        forked = context.get_start_method() == "fork"
        # a forked worker holds copies of this end of its own pipe and of the earlier
        # workers' pipes: it closes them, or no worker would see this process end
        inherited = [here, *(h.conn for h in earlier)] if forked else []
        process = context.Process(target=_worker_main, name=f"toolscore-worker-{k + 1}",
                                  args=(job, options, payload, there, inherited))
        process.start()  # not a daemon: a run may itself be a daemon process's work
        there.close()
        return cls(k, n, process, here)

    def stop(self) -> None:
        """End the worker if it still runs (another failed, or this run was cancelled)."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)
        with contextlib.suppress(OSError):
            self.conn.close()


def _pickled(bench: Benchmark) -> bytes:
    try:
        return pickle.dumps(bench)
    except Exception as e:  # noqa: BLE001 - said in one line, naming the ways out
        raise ValueError(
            f"workers: the benchmark object {bench.name!r} cannot be sent to a worker process "
            f"({type(e).__name__}: {' '.join(str(e).split())}); this process runs other "
            "threads, so workers are not forked from it: give the benchmark by name, or "
            "workers=1") from None


async def _collect(handles: list[_Handle],
                   relayed: Callable[[tuple[Any, ...]], None]) -> list[RunSummary]:
    """Read every worker's messages until each has sent its summary; the first failure stops
    the others and is raised here."""
    loop = asyncio.get_running_loop()
    results: dict[int, RunSummary] = {}
    failed: asyncio.Future[BaseException] = loop.create_future()
    open_ = set(range(len(handles)))

    def readable(i: int) -> None:
        h = handles[i]
        try:
            while h.conn.poll():
                message = h.conn.recv()
                if message[0] == "done":
                    results[i] = message[1]
                elif message[0] == "failed":
                    raise _Failed(message[1])
                else:
                    relayed(message)
        except (EOFError, OSError):  # the worker ended; it may have said why first
            loop.remove_reader(h.conn.fileno())
            open_.discard(i)
            if i not in results and not failed.done():
                h.process.join(5)
                failed.set_result(WorkerError(
                    f"{h.name} (pid {h.process.pid}) died {exit_status(h.process.exitcode)} "
                    "before it finished its samples"))
        except _Failed as e:
            if not failed.done():
                failed.set_result(e.error)
        except BaseException as e:  # noqa: BLE001 - an on_record callback's own error
            if not failed.done():
                failed.set_result(e)
        if not open_ and not failed.done():
            failed.set_result(None)  # type: ignore[arg-type]  # everyone finished

    for i, h in enumerate(handles):
        loop.add_reader(h.conn.fileno(), readable, i)
    try:
        error = await failed
    finally:
        for i in open_:
            with contextlib.suppress(OSError, ValueError):
                loop.remove_reader(handles[i].conn.fileno())
    if error is not None:
        raise error
    return [results[i] for i in range(len(handles))]


class _Failed(Exception):
    def __init__(self, error: BaseException) -> None:
        self.error = error


def _worker_main(job: WorkerJob, options: RunOptions, payload: Any, conn: Any,
                 inherited: list[Any]) -> None:
    """A worker process: run its share, send its summary (or its error), exit."""
    for c in inherited:
        c.close()
    try:
        bench = (pickle.loads(payload) if isinstance(payload, bytes)
                 else payload if payload is not None else rebuild_from_dir(job.run_dir))
        summary = asyncio.run(_work(bench, job, options, conn))
    except BaseException as e:  # noqa: BLE001 - every failure goes to the parent
        with contextlib.suppress(OSError, BrokenPipeError):
            conn.send(("failed", _sendable(e)))
        os._exit(1)
    with contextlib.suppress(OSError, BrokenPipeError):
        conn.send(("done", summary))
    conn.close()


def _sendable(error: BaseException) -> BaseException:
    """The error itself when it survives pickling (the parent raises the same type), else a
    RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(error))
        return error.with_traceback(None)
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(error).__name__}: {error}")


async def _work(bench: Benchmark, job: WorkerJob, options: RunOptions, conn: Any) -> RunSummary:
    from toolscore.models.factory import make_client

    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    # The parent never writes to this pipe: it becomes readable when the parent is gone.
    loop.add_reader(conn.fileno(), lambda: me.cancel() if me is not None else None)
    how, run = job.how, job.run
    cache = None if how.cache is None else str(how.cache)
    bench.bind(RunSettings(cache=cache, timeout=how.timeout,
                           max_concurrency=options.max_concurrency))
    client = None if run.model == NO_MODEL else make_client(
        run.model, role="assistant", base_url=run.base_url, cache=cache,
        timeout=how.timeout, max_concurrency=options.max_concurrency,
        model_args=dict(run.model_args))

    guard = None
    if how.cost_limit is not None:
        from toolscore.runs.costlimit import cost_guard, run_models

        guard = cost_guard(how.cost_limit, how.prices, run_models(run.model, bench.config()))
        if guard is not None:
            guard.parts = job.parts

    def send(record: dict[str, Any]) -> None:
        if job.relay == "records":
            conn.send(("record", record))
        elif job.relay == "ticks":
            conn.send(("tick", record["status"], record["usage"]))

    try:
        return await execute_run(bench, client, RunStore(job.run_dir), options,
                                 None if job.relay == "none" else send, guard)
    finally:
        loop.remove_reader(conn.fileno())
