"""The public API: ``evaluate`` a benchmark with a model into a run directory, ``score`` a run
again, ``load_run`` a finished one. The CLI is a thin layer over these.

Every method goes through the same path (benchmark -> runner -> run store), so every run gets
resume, cache determinism and the same reports. A run is rebuilt from its ``run.json`` alone
(benchmark name, options, data folder, model), so resuming and rescoring need no arguments
repeated, except an option that starts a process or loads code: a run directory is never
trusted to name one (:mod:`toolscore.benchmarks.trust`). ``evaluate`` also works where an
event loop is already running (a notebook): the run then gets its own loop in a worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from toolscore.benchmarks.base import Benchmark, OptionError, RunSettings, option_fields
from toolscore.benchmarks.registry import make_benchmark
from toolscore.benchmarks.trust import EVERYTHING, Trust
from toolscore.models.base import ModelCrashed
from toolscore.records import RUN_FILE, NotStored, RunConfig, RunStore, RunStoreError, sample_key
from toolscore.records.store import project_record
from toolscore.runs.costlimit import cost_guard, parse_cost_limit, run_models
from toolscore.runs.identity import (
    NO_MODEL,
    default_run_dir,
    run_identity,
    same_run,
    slug,
)
from toolscore.runs.loaded import Run, load_run, summary_dict
from toolscore.runs.progress import cache_notice
from toolscore.runs.rebuild import check_trusted, rebuild_benchmark, refuse_withheld
from toolscore.runs.runner import (
    RunOptions,
    execute_run,
    new_run_config,
    parse_limit,
    parse_sample_ids,
    parse_shard,
    pending,
    rescore,
    select,
)
from toolscore.runs.settings import RunExecution, RunIdentity
from toolscore.runs.stopped import RunStopped, interrupted, stop_facts, stoppable
from toolscore.runs.workers import WorkerError, WorkerJob, check_workers, run_in_workers

T = TypeVar("T")
__all__ = ["NO_MODEL", "Run", "RunExecution", "RunIdentity", "default_run_dir", "evaluate",
           "evaluate_async", "evaluate_run", "evaluate_with", "load_run", "resume",
           "resume_async", "resume_run", "resume_with",
           "run_identity", "score", "score_files", "slug"]


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to completion from synchronous code, even inside a running
    event loop (a notebook): it then runs on its own loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="toolscore") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def _benchmark(benchmark: str | Benchmark, data: str | Path | None, download: bool,
               options: dict[str, Any]) -> Benchmark:
    if isinstance(benchmark, Benchmark):
        if options:
            raise OptionError(f"benchmark {benchmark.name!r} is already built; options "
                              f"({', '.join(sorted(options))}) go to its constructor")
        return benchmark
    if isinstance(benchmark, str):
        return make_benchmark(benchmark, data, download=download, **options)
    raise TypeError(f"benchmark must be a name or a Benchmark, not {type(benchmark).__name__}")


def _stored_options(bench: Benchmark, options: dict[str, Any]) -> dict[str, Any]:
    """The declared options with defaults filled in, as stored in run.json: those the
    benchmark was built with and reads (``bench.options``)."""
    from toolscore.benchmarks.base import options_to_json, parse_options

    if not option_fields(bench.Options):
        return {}
    built = getattr(bench, "options", None)
    if isinstance(built, bench.Options):
        return options_to_json(built)
    return options_to_json(parse_options(bench.Options, options, f"benchmark {bench.name!r}"))


async def evaluate_async(benchmark: str | Benchmark, model: str | None = None, *,
                         data: str | Path | None = None, out: str | Path | None = None,
                         epochs: int = 1, limit: int | str | tuple[int, int] | None = None,
                         sample_ids: list[str] | str | None = None, max_concurrency: int = 8,
                         cache: str | Path | None = "default", base_url: str | None = None,
                         timeout: float = 120.0, progress: bool | str = False,
                         download: bool = True,
                         on_record: Callable[[dict[str, Any]], None] | None = None,
                         default_model: str | None = None,
                         model_args: dict[str, Any] | None = None,
                         shard: str | tuple[int, int] | None = None, workers: int = 1,
                         runs_root: str | Path = "runs", cost_limit: float | None = None,
                         prices: str | Path | None = None, **options: Any) -> Run:
    """Run ``benchmark`` (a registered name or a Benchmark object) with ``model`` into a new
    run directory ``out``; ``options`` are the benchmark's own (see ``toolscore run NAME
    --help``). ``model`` may be None for a benchmark that calls no model; when it calls one,
    ``default_model`` or the benchmark's own default (the demo's embedded model) is used, and
    with neither it is a one-line error rather than a run of a model nobody chose.

    Without ``out`` the directory is :func:`default_run_dir` of the run's configuration, under
    ``runs_root``: when
    it already holds that run, the run is resumed (a finished one: nothing runs, no model
    call). ``shard`` ("K/N") runs only the K-th of N deterministic parts of the samples; the
    shards of one run may run at once into the same directory (see :mod:`toolscore.records`).
    ``workers`` > 1 runs the samples in that many processes (:mod:`toolscore.runs.workers`):
    the same results, for a harness that one process cannot keep up with. ``limit`` is N (the
    first N samples) or "A-B" (samples A to B, from 1, as Inspect counts), ``sample_ids`` only
    those samples (a list or "a,b,c"); both are part of the run's identity.

    ``model_args`` (e.g. ``{"temperature": 1.0, "reasoning_effort": "low", "top_p": 0.9}``)
    replace the benchmark's generation settings on every call of the model; unset ones leave
    the benchmark's (:mod:`toolscore.models.modelargs`). They are stored in run.json.

    ``cost_limit`` (USD) stops the run once its model calls cost that much, priced by the
    pinned table and ``prices`` (a price file) over it (:mod:`toolscore.runs.costlimit`): it
    raises :class:`~toolscore.runs.stopped.RunStopped`, and the run resumes."""
    how = RunExecution(max_concurrency=max_concurrency, cache=cache, timeout=timeout,
                       progress=progress, shard=parse_shard(shard),
                       workers=workers, download=download, on_record=on_record,
                       cost_limit=parse_cost_limit(cost_limit),
                       prices=None if prices is None else str(prices))
    return await evaluate_run(benchmark, model, how, data=data, out=out, epochs=epochs,
                              limit=limit, sample_ids=sample_ids, base_url=base_url,
                              default_model=default_model, model_args=model_args,
                              runs_root=runs_root, options=options)


async def evaluate_run(benchmark: str | Benchmark, model: str | None, how: RunExecution, *,
                       data: str | Path | None = None, out: str | Path | None = None,
                       epochs: int = 1, limit: int | str | tuple[int, int] | None = None,
                       sample_ids: list[str] | str | None = None,
                       base_url: str | None = None, default_model: str | None = None,
                       model_args: dict[str, Any] | None = None, runs_root: str | Path = "runs",
                       options: dict[str, Any] | None = None) -> Run:
    """:func:`evaluate_async` once how the run runs is one object: the run's identity is
    built here, once the benchmark (its options) and the model are known."""
    from toolscore.models.modelargs import ModelArgs

    options = dict(options or {})
    args = ModelArgs.from_dict(model_args, "model argument").to_dict()
    bench = _benchmark(benchmark, data, how.download, options)
    if model is None:
        model = (default_model or bench.default_model) if bench.uses_model() else NO_MODEL
        if model is None:
            raise OptionError(f"benchmark {bench.name!r} needs a model: give --model "
                              "provider/name or set TOOLSCORE_MODEL (in Python: "
                              "model='provider/name')")
    registered = isinstance(benchmark, str)
    run = RunIdentity(bench.name, model, options=_stored_options(bench, options)
                      if registered else {}, model_args=args, epochs=epochs,
                      limit=parse_limit(limit), sample_ids=parse_sample_ids(sample_ids),
                      base_url=base_url, data=_str(data))
    if run.sample_ids is not None:  # an unknown id: one line before anything is written
        select(bench.samples(), None, run.sample_ids)
    cost_guard(how.cost_limit, how.prices, run_models(model, bench.config()))  # idem
    how = replace(how, shard=parse_shard(how.shard))
    check_workers(how.workers, how.shard)
    store = RunStore(out or default_run_dir(bench.name, model, run, runs_root))
    new = not store.exists()
    if not new and (out is not None and how.shard is None or not same_run(store.config(), run)):
        raise RunStoreError(f"{store.path}: already a run directory; use --resume {store.path} "
                            "(in Python: toolscore.resume)")
    data_dir = bench.config().get("data_dir") if registered else None
    if data_dir is not None:  # stored resolved (the identity has the folder as given)
        run = replace(run, data=data_dir)
    # One writer per run directory (a second one is refused at once); shards share it.
    with store.lock(shared=how.shard is not None):
        new = not store.exists()  # another shard may have just written run.json
        return await _execute(bench, store, run, how, new=new, registered=registered)


def _str(value: str | Path | None) -> str | None:
    return None if value is None else str(value)


async def resume_async(run_dir: str | Path, *, benchmark: Benchmark | None = None,
                       max_concurrency: int | None = None, cache: str | Path | None = None,
                       timeout: float | None = None, progress: bool | str = False,
                       on_record: Callable[[dict[str, Any]], None] | None = None,
                       shard: str | tuple[int, int] | None = None, workers: int = 1,
                       allow_run_commands: bool = False,
                       trusted_options: dict[str, Any] | None = None,
                       cost_limit: float | None = None,
                       prices: str | Path | None = None) -> Run:
    """Continue a run: finished samples are kept, the rest are run. Everything that determines
    results comes from run.json (a benchmark object must be passed again if the run was made
    with one that is not registered); ``shard`` and ``workers`` as for :func:`evaluate_async`;
    the concurrency, cache and timeout default to the run's. A stored option that starts a
    process or loads code is refused unless ``trusted_options`` repeats it (``"model"``: the
    model) or ``allow_run_commands`` is true."""
    config = RunStore(run_dir).config()
    how = RunExecution(max_concurrency=max_concurrency or config.max_concurrency,
                       cache=cache if cache is not None else (config.cache or None),
                       timeout=timeout or config.timeout, progress=progress,
                       shard=parse_shard(shard), workers=workers, on_record=on_record,
                       cost_limit=parse_cost_limit(cost_limit),
                       prices=None if prices is None else str(prices))
    return await resume_run(run_dir, how, benchmark=benchmark,
                            allow_run_commands=allow_run_commands,
                            trusted_options=trusted_options)


async def resume_run(run_dir: str | Path, how: RunExecution, *,
                     benchmark: Benchmark | None = None, allow_run_commands: bool = False,
                     trusted_options: dict[str, Any] | None = None) -> Run:
    """:func:`resume_async` once how the run runs is one object (its identity is run.json's)."""
    store = RunStore(run_dir)
    config = store.config()
    check_trusted(config, Trust.given(trusted_options, allow_run_commands),
                  store.path / RUN_FILE, options=benchmark is None)
    bench = benchmark or rebuild_benchmark(config, store.path / RUN_FILE, trust=EVERYTHING)
    check_workers(how.workers, how.shard)
    cost_guard(how.cost_limit, how.prices, run_models(config.model, bench.config()))
    run = RunIdentity.of_config(config, stored_model_args(config, store.path))
    with store.lock(shared=how.shard is not None):
        return await _execute(bench, store, run, how, new=False, registered=benchmark is None)


def stored_model_args(config: RunConfig, path: Path) -> dict[str, Any]:
    """The model arguments a run.json holds, validated (one line naming the file if bad)."""
    from toolscore.models.modelargs import ModelArgs

    try:
        return ModelArgs.from_dict(config.model_args, "model argument").to_dict()
    except ValueError as e:
        raise RunStoreError(f"{path / 'run.json'}: field 'model_args': {e}") from None


async def _execute(bench: Benchmark, store: RunStore, run: RunIdentity, how: RunExecution, *,
                   new: bool, registered: bool = False) -> Run:
    from toolscore.models.base import model_secrets, redact_argv
    from toolscore.models.factory import cache_path, make_client

    refuse_withheld(bench, store.path)
    cap = bench.max_concurrency()
    concurrency = min(how.max_concurrency, cap) if cap else how.max_concurrency
    bench.check()  # bad data fails here, before the first model call
    cache_file = cache_path(how.cache)
    # as it runs: the benchmark's cap applied, the cache resolved to its file (or None)
    how = replace(how, max_concurrency=concurrency,
                  cache=None if cache_file is None else str(cache_file))
    if how.workers == 1:
        bench.bind(RunSettings(cache=how.cache, timeout=how.timeout,  # type: ignore[arg-type]
                               max_concurrency=concurrency))
    # with workers, each builds its own client (connections, cache handle); this one only
    # names the model in run.json
    client = None if run.model == NO_MODEL else make_client(
        run.model, role="assistant", base_url=run.base_url, timeout=how.timeout,
        model_args=dict(run.model_args), cache=cache_file if how.workers == 1 else None,
        max_concurrency=concurrency)
    run_options = RunOptions.of(run, how)
    guard = cost_guard(how.cost_limit, how.prices, run_models(run.model, bench.config()))
    # a wrong address: one line now, not after every retry (only for a model with an endpoint
    # to check, and only when there is work: a complete run is read, not rerun)
    work = client is not None and (new or bool(pending(bench, store, run_options)[1]))
    if work and client is not None and getattr(client.model, "preflight", None) is not None:
        await client.preflight()
    if work:
        cache_notice(how.progress, how.cache)
    if new:
        identity = client.model.cache_identity() if client is not None else {}
        config = new_run_config(bench, run, how, identity)
        config.command = redact_argv(config.command,
                                     model_secrets(None if client is None else client.model))
        store.write_config(config)
    else:
        config = store.config()
    try:
        if how.workers == 1:
            summary = await execute_run(bench, client, store, run_options, how.on_record,
                                        guard)
        else:
            job = WorkerJob(run_dir=str(store.path), run=run, how=how.without_callback(),
                            registered=registered, relay="records" if how.on_record
                            else "ticks" if how.progress else "none")
            summary = await run_in_workers(bench, store, job, run_options, how.workers,
                                           how.on_record)
    except (ModelCrashed, WorkerError, NotStored) as e:  # what was kept, read from the store
        reason = f"a record could not be stored: {e}" if isinstance(e, NotStored) else str(e)
        raise RunStopped(stop_facts(reason, bench, store, run_options)) from e
    except (KeyboardInterrupt, asyncio.CancelledError):
        interrupted.remember(stop_facts("interrupted (Ctrl-C)", bench, store, run_options))
        raise
    if summary.cost_stop is not None:  # what finished is kept; the rest runs on resume
        raise RunStopped(stop_facts(summary.cost_stop, bench, store, run_options))
    with store.append_lock():  # shards: the last one to finish scores every shard's samples
        metrics = bench.aggregate(list(store.latest(bench.summary_output).values()))
        try:
            store.write_scores(metrics)
        except NotStored as e:  # every record is kept: scoring again needs no model call
            raise RunStopped(stop_facts(f"{e} (score it with: toolscore score {store.path})",
                                        bench, store, run_options)) from e
    return Run(store.path, config, metrics, summary_dict(summary))  # records read on demand


def evaluate(benchmark: str | Benchmark, model: str | None = None, **kwargs: Any) -> Run:
    """:func:`evaluate_async` from synchronous code (also inside a running event loop)."""
    return stoppable(run_sync, lambda: evaluate_async(benchmark, model, **kwargs))


def resume(run_dir: str | Path, **kwargs: Any) -> Run:
    """:func:`resume_async` from synchronous code."""
    return stoppable(run_sync, lambda: resume_async(run_dir, **kwargs))


def evaluate_with(benchmark: str | Benchmark, model: str | None, how: RunExecution,
                  **kwargs: Any) -> Run:
    """:func:`evaluate_run` from synchronous code (the CLI, a sweep unit)."""
    return stoppable(run_sync, lambda: evaluate_run(benchmark, model, how, **kwargs))


def resume_with(run_dir: str | Path, how: RunExecution, **kwargs: Any) -> Run:
    """:func:`resume_run` from synchronous code (a sweep unit)."""
    return stoppable(run_sync, lambda: resume_run(run_dir, how, **kwargs))


def score(run_dir: str | Path, *, benchmark: Benchmark | None = None, write: bool | None = None,
          allow_run_commands: bool = False, **overrides: Any) -> Run:
    """Recompute every record's scores from its stored output (no model calls).

    ``overrides`` change scoring options (e.g. ``strict=True``); by default the run's files
    are rewritten only when nothing is overridden, so a what-if rescoring never replaces the
    run's own scores. Nothing the run names is started (:mod:`toolscore.benchmarks.trust`)."""
    store = RunStore(run_dir)
    config = store.config()
    bench = benchmark or rebuild_benchmark(config, store.path / RUN_FILE,
                                           trust=Trust(everything=allow_run_commands),
                                           **overrides)
    shown = RunConfig(**{**config.to_dict(), "benchmark_config": bench.config()})
    index = store.latest_index()
    order = {n: i for i, n in enumerate(index.values())}  # aggregate in first-written order
    summaries: dict[int, dict[str, Any]] = {}

    def rescored() -> Iterator[dict[str, Any]]:
        """Streamed to the file and reduced to its summary as it goes: 10,000 transcripts are
        never held at once."""
        for n, r in zip(sorted(order), rescore(bench, store, set(order)), strict=True):
            yield r
            summaries[order[n]] = project_record(r, bench.summary_output)

    if write if write is not None else not overrides:
        with store.lock():
            store.rewrite(rescored())
            metrics = bench.aggregate([summaries[i] for i in sorted(summaries)])
            store.write_scores(metrics)
        return Run(store.path, shown, metrics)
    records = list(rescore(bench, store, set(order)))  # a what-if: nothing is written
    metrics = bench.aggregate(sorted(records, key=lambda r: order_of(r, index, order)))
    run = Run(store.path, shown, metrics)
    run._records = sorted(records, key=lambda r: (str(r["id"]), int(r.get("epoch", 0))))
    return run


def order_of(record: dict[str, Any], index: dict[tuple[str, int], int],
             order: dict[int, int]) -> int:
    return order[index[sample_key(record)]]


def score_files(benchmark: str, path: str | Path, *, data: str | Path | None = None,
                out: str | Path | None = None, **options: Any) -> dict[str, Any]:
    """Score files written by a method's own reference code (e.g. ToolTalk's prediction
    folders, AutoDE's result files) with ``benchmark``'s scorer."""
    bench = make_benchmark(benchmark, data, **options)
    return bench.score_files(Path(path), None if out is None else Path(out))
