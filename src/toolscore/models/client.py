"""The one call path for every model: cache, concurrency limit, timeout, retries, accounting.

Benchmarks, user simulators and judges all talk to models through a :class:`ModelClient`, so the
guarantees the design promises hold everywhere at once: a cached request costs nothing and gives
the same reply; a provider never sees more than ``max_concurrency`` requests in flight from this
process; transient infrastructure failures are retried within a bounded budget and surface as
:class:`InfraError` (recorded, never scored) if they persist; tokens and latency are counted.

Providers therefore stay thin: they map one request to one reply and classify their errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from toolscore.models.accounting import record_usage
from toolscore.models.base import (
    ContextLengthExceeded,
    InfraError,
    Model,
    Reachable,
    model_secrets,
    redact,
    redact_reply,
    strip_credentials,
)
from toolscore.models.cache import ResponseCache, cache_key
from toolscore.models.limits.retry import RetryPolicy, call_with_retry
from toolscore.models.limits.shared import limiter_for
from toolscore.models.loopbound import LoopTable
from toolscore.text import safe_logger
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec, Usage

log = safe_logger("toolscore.models")  # endpoint text in warnings is shown, never obeyed

# One semaphore per (event loop, model name): every client of a model shares the provider's
# concurrency limit. asyncio primitives belong to one loop, hence the per-loop table.
_LIMITS: LoopTable[dict[str, asyncio.Semaphore]] = LoopTable()
_RECORD_LOCK = threading.Lock()


def model_semaphore(name: str, limit: int) -> asyncio.Semaphore:
    """The semaphore shared by all clients of model ``name`` in the running loop.

    The first client to ask fixes the limit; later clients with another ``max_concurrency``
    share the existing one (a provider's limit is a property of the provider, not the caller).
    """
    loop = asyncio.get_running_loop()
    per_loop = _LIMITS.get(loop)
    if per_loop is None:
        per_loop = {}
        _LIMITS.set(loop, per_loop)
    sem = per_loop.get(name)
    if sem is None:
        sem = per_loop[name] = asyncio.Semaphore(max(1, limit))
    return sem


# An empty completion is asked again this many times in all before it is taken as the answer
# (a few: it is usually the model, not the endpoint; the retry budget is for real outages).
EMPTY_ATTEMPTS = 3


class EmptyCompletion(InfraError):
    """An empty completion: retried like an infrastructure failure, but if the last attempt is
    empty too, the empty reply is the model's answer (``finish_reason`` "empty")."""

    def __init__(self, reply: Reply, elapsed: float) -> None:
        super().__init__("empty completion (no text, no tool calls)", retryable=True)
        self.reply = reply
        self.elapsed = elapsed

    def accept(self) -> Reply:
        reply = self.reply
        reply.usage.calls, reply.usage.cached_calls = 1, 0
        reply.usage.latency_s = self.elapsed
        reply.finish_reason = "empty"
        if reply.message.content is None:
            reply.message.content = ""
        return reply


def is_empty(reply: Reply) -> bool:
    """No text and no tool calls: the endpoint produced nothing, which is an infra failure."""
    return not reply.message.tool_calls and not (reply.message.content or "").strip()


# Set by a protocol around a request built by the benchmark alone (see benchmark_prompt): the
# advice its message gives (possibly ""), or None for a request that holds the model's words.
_BENCHMARK_PROMPT: ContextVar[str | None] = ContextVar("toolscore_benchmark_prompt",
                                                       default=None)


@contextlib.contextmanager
def benchmark_prompt(active: bool = True, advice: str = "") -> Iterator[None]:
    """Mark the requests made in the block as the benchmark's own prompt: nothing the model
    wrote in this sample is in them yet.

    A context overflow then cannot be the model's doing (its dialogue did not grow it), so it
    is not :class:`ContextLengthExceeded`, which protocols score as the model's failure, but
    :class:`PromptTooLong`: an infrastructure error, recorded on the sample and left out of the
    scores, said once per run with ``advice`` (what to change, e.g. "offer fewer tools
    (--tools exact)"). ``active`` False marks nothing, for a protocol's later requests."""
    if not active:
        yield
        return
    token = _BENCHMARK_PROMPT.set(advice)
    try:
        yield
    finally:
        _BENCHMARK_PROMPT.reset(token)


class PromptTooLong(InfraError):
    """The benchmark's prompt does not fit the model's context before the model has said
    anything: this model cannot be evaluated on the sample (not retryable, never scored).
    ``window`` and ``requested`` are the token counts the endpoint gave, when it gave them."""

    def __init__(self, message: str, *, window: int | None = None,
                 requested: int | None = None) -> None:
        super().__init__(message, retryable=False, status=400)
        self.window = window
        self.requested = requested


# How endpoints state the context size and the tokens asked for (OpenAI, vLLM, llama.cpp's
# server and llama-cpp-python's, the embedded model); the error text holds the parsed body.
_WINDOW = re.compile(r"maximum context length (?:is |\()(\d+)|available context size \((\d+)"
                     r"|\bn_ctx['\"]?: ?(\d+)|(\d+)-token context window", re.IGNORECASE)
_REQUESTED = re.compile(r"you requested (\d+) tokens|resulted in (\d+) tokens|contains "
                        r"(?:at least )?(\d+) input tokens|input length \((\d+)\)|request "
                        r"\((\d+) tokens\)|\bn_prompt_tokens['\"]?: ?(\d+)|prompt of (\d+) "
                        r"tokens", re.IGNORECASE)


def context_numbers(text: str) -> tuple[int | None, int | None]:
    """(the model's context size, the tokens requested) as a context-overflow error states
    them; None for what it does not say."""
    def first(pattern: re.Pattern[str]) -> int | None:
        found = pattern.search(text)
        return None if found is None else int(next(g for g in found.groups() if g))

    return first(_WINDOW), first(_REQUESTED)


def request_record(
    model: Model, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, object]:
    """The request half of a ``record_path`` line (and of a ``replay:`` file)."""
    return {
        "model": model.name,
        "messages": [m.to_dict() for m in messages],
        "tools": [t.to_dict() for t in tools],
        "config": config.to_dict(),
    }


class ModelClient:
    """Wraps a :class:`Model` with caching, limits, retries and usage accounting.

    ``usage`` aggregates every reply returned (cached replies add ``cached_calls`` and their
    stored token counts, so a run re-played from cache reports the same tokens; real calls add
    ``calls`` and latency). ``calls`` counts requests that actually reached the model, failed
    attempts included; ``failures`` counts the failed attempts. ``role`` ("assistant", "user",
    "judge") labels the client in logs and attributes its usage in the per-sample ledger
    (:mod:`toolscore.models.accounting`); :meth:`with_role` gives the same model under another
    role.
    """

    def __init__(
        self,
        model: Model,
        cache: ResponseCache | None = None,
        max_concurrency: int = 8,
        retry: RetryPolicy = RetryPolicy(),
        timeout: float | None = 60,
        role: str = "assistant",
        record_path: str | Path | None = None,
    ):
        self.model = model
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.retry = retry
        self.timeout = timeout
        self.role = role
        self.record_path = Path(record_path) if record_path is not None else None
        self.usage = Usage()
        self.calls = 0
        self.failures = 0
        self._rng = random.Random()
        self._said: set[str] = set()  # one-time warnings, shared with with_role's copies
        # Scripted models (oracle, replay) are free and exact: caching them only adds noise. A
        # provider written against the protocol's first members alone gets its defaults.
        self._cacheable = bool(getattr(model, "cacheable", Model.cacheable))
        self._empty_is_error = bool(getattr(model, "empty_is_error", Model.empty_is_error))
        self._model_limit: int | None = getattr(model, "max_concurrency", Model.max_concurrency)
        self._base_url: str | None = getattr(model, "base_url", Model.base_url)

    @property
    def name(self) -> str:
        return self.model.name

    def with_role(self, role: str) -> ModelClient:
        """The same model, cache and limits, with usage counted under ``role`` (its own
        ``usage`` counters start at zero)."""
        other = copy.copy(self)
        other.role = role
        other.usage = Usage()
        other.calls = other.failures = 0
        return other

    async def generate(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        config: GenerateConfig | None = None,
    ) -> Reply:
        """One assistant turn; raises :class:`InfraError` when the infrastructure fails."""
        tools = list(tools or [])
        config = config or GenerateConfig()
        # The model's secrets never reach disk: errors are redacted below, and an ordinary
        # reply that echoes the key (as is, encoded, a tail) is redacted before it is cached,
        # returned to the protocol (which stores it in records) or recorded.
        secrets = model_secrets(self.model)
        key = None
        if self.cache is not None and self._cacheable:
            key = cache_key(self.model.cache_identity(), messages, tools, config)
            hit = self.cache.get(key)
            if hit is not None:
                redact_reply(hit, secrets)  # a cache written before replies were redacted
                hit.usage = Usage(input_tokens=hit.usage.input_tokens,
                                  output_tokens=hit.usage.output_tokens, cached_calls=1,
                                  reasoning_tokens=hit.usage.reasoning_tokens)
                self.usage.add(hit.usage)
                record_usage(self.role, hit.usage, self.model.name)
                self._record(messages, tools, config, hit)
                return hit

        # A model that serialises calls itself (the embedded one) says so; queueing for it must
        # not count against the timeout, so the slot is taken before the first attempt and held
        # through retries (which also backs off the endpoint when it is rate limiting).
        limit = min(self.max_concurrency, self._model_limit or 10**6)
        sem = model_semaphore(self.model.name, limit)

        empties: list[int] = []

        async def attempt(n: int) -> Reply:
            self.calls += 1
            started = time.monotonic()
            reply = await self.model.generate(messages, tools, config)
            elapsed = time.monotonic() - started
            if self._empty_is_error and is_empty(reply):
                empties.append(n)
                if len(empties) < EMPTY_ATTEMPTS:
                    raise EmptyCompletion(reply, elapsed)
                accepted = EmptyCompletion(reply, elapsed).accept()  # it keeps saying nothing
                accepted.model = accepted.model or self.model.name
                return accepted
            reply.usage.calls = 1
            reply.usage.cached_calls = 0
            reply.usage.latency_s = elapsed
            reply.model = reply.model or self.model.name
            return reply

        # Every error leaving the client is redacted here, whatever the provider did: its
        # text reaches logs, samples.jsonl, reports and exports.
        def failed(n: int, err: InfraError) -> None:
            self.failures += 1
            log.info("%s (%s) attempt %d failed: %s", self.model.name, self.role, n + 1,
                     redact(err, secrets))

        # In a sweep, the provider's limit across all its processes too (models.shared_limit):
        # taken outside the timeout like the run's slot, but given back during retry backoff.
        # Its rate budget is charged per attempt and settled with the reply's usage; its 429s
        # narrow the requests it lets in flight (models.limits.budget).
        shared = limiter_for(self.model.name)
        held = shared.permit(messages, tools, config) if shared else None
        try:
            async with sem, held or contextlib.nullcontext():
                reply = await call_with_retry(attempt, self.retry, timeout=self.timeout,
                                              rng=self._rng, on_error=held.watch(failed)
                                              if held else failed,
                                              **({"sleep": held.pause} if held else {}))
                if held:
                    held.settle(reply)
        except InfraError as e:
            if isinstance(e.__cause__, EmptyCompletion):
                # The model kept answering nothing: that is its answer, scored as such
                # (never dropped from the denominator), and cached like any other.
                reply = e.__cause__.accept()
                log.info("%s (%s): empty completion kept after retries", self.model.name,
                         self.role)
            else:
                if not e.retryable:
                    self.failures += 1
                safe: Exception = redact(e, secrets)
                log.warning("%s (%s) failed: %s", self.model.name, self.role, safe)
                if safe is e:
                    raise
                raise safe from None
        except ContextLengthExceeded as e:
            advice = _BENCHMARK_PROMPT.get()
            if advice is not None:  # the benchmark's prompt: not the model's doing
                self.failures += 1
                raise self._prompt_too_long(redact(e, secrets), advice) from None
            safe = redact(e, secrets)  # the model's dialogue outgrew its context: scored
            if safe is e:
                raise
            raise safe from None
        except Exception as e:
            safe = redact(e, secrets)
            if safe is e:
                raise
            raise safe from None
        redact_reply(reply, secrets)
        self.usage.add(reply.usage)
        record_usage(self.role, reply.usage, self.model.name)
        if key is not None and self.cache is not None:
            self.cache.put(key, reply, model=self.model.name)
        self._record(messages, tools, config, reply)
        return reply

    def _prompt_too_long(self, err: ContextLengthExceeded, advice: str) -> PromptTooLong:
        """The sample's error, and once per run the line that says what happened and what to
        do (every sample of a benchmark would otherwise fail the same way in silence)."""
        window, requested = context_numbers(str(err))
        if requested is not None and window is not None and requested <= window:
            requested = None  # e.g. vLLM's "max_tokens is too large": the prompt count misleads
        sizes = ", ".join(part for part in (
            None if window is None else f"{window} tokens",
            None if requested is None else f"{requested} tokens requested") if part)
        if "prompt too long" not in self._said:
            self._said.add("prompt too long")
            url = strip_credentials(self._base_url)
            where = self.model.name + (f" at {url}" if url else "")
            log.warning("%s: the benchmark's prompt exceeds the model's context%s before the "
                        "model has said anything: those samples are recorded as errors and "
                        "left out of the scores; use a model with a longer context%s", where,
                        f" ({sizes})" if sizes else "", f", or {advice}" if advice else "")
        return PromptTooLong(f"prompt exceeds the model's context before the model said "
                             f"anything{f' ({sizes})' if sizes else ''}: {err}",
                             window=window, requested=requested)

    async def preflight(self) -> None:
        """Check, once before a run, that the model's endpoint can be reached, so that a wrong
        address is said at once in one line (:class:`~toolscore.models.base.EndpointUnreachable`,
        a user error) rather than after every sample has spent its retries. Delegates to the
        provider's own ``preflight()``; a provider without one (an embedded or scripted model)
        has nothing to check. Sends no request to the model."""
        if not isinstance(self.model, Reachable):
            return
        try:
            await self.model.preflight()
        except Exception as e:
            safe = redact(e, model_secrets(self.model))
            if safe is e:
                raise
            raise safe from None

    def _record(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig, reply: Reply
    ) -> None:
        """Append one request/reply line; each line is written whole, so a kill loses at most
        the line being written, never an earlier one."""
        if self.record_path is None:
            return
        line = json.dumps({"request": request_record(self.model, messages, tools, config),
                           "reply": reply.to_dict()}, ensure_ascii=False)
        with _RECORD_LOCK:
            self.record_path.parent.mkdir(parents=True, exist_ok=True)
            with self.record_path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")


class RunModel(Protocol):
    """The run's model as a benchmark's ``run_sample`` receives it (the runner's
    ``SampleModel``): ``generate`` goes through the run's :class:`ModelClient`, which
    ``client`` gives for requests made under another role (``client.with_role("judge")``);
    None when the run has no model."""

    @property
    def name(self) -> str: ...

    @property
    def client(self) -> ModelClient | None: ...

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply: ...
