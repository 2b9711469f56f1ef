"""Faults injected by the fake OpenAI server, run through the real runner, client and SDK on
ToolTalk hard with oracle replies:

* transient faults (429/500, timeouts, empty completions) are retried: no crash, and every
  conversation scores exactly as in a fault-free run;
* malformed tool-call JSON is the model's mistake: recorded and scored, never an error;
* a persistent failure marks its samples as errors, excluded from scores and counted, and the
  run completes; a resume against a healthy endpoint runs them again.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset, needs
from support.testing.openai_server import MALFORMED_ARGUMENTS, FakeOpenAIServer, Responder
from support.testing.oracle_replies import OracleRecording, oracle_recording

from toolscore.benchmarks.registry import make_benchmark
from toolscore.env.environment import PARSE_FAILED
from toolscore.models import ModelClient, RetryPolicy, get_model
from toolscore.records import RunStore
from toolscore.runs.runner import RunOptions, RunSummary, execute_run

OPTIONS = {"split": "hard", "tools": "all", "strict": False, "embedder": "hashing"}
CONCURRENCY = 16
# Quick retries; enough attempts that a 40% fault rate never exhausts them (faults are drawn
# per request and attempt from the seed, so this holds deterministically).
PATIENT = RetryPolicy(max_attempts=12, base_delay=0.01, max_delay=0.05, budget_s=60)
IMPATIENT = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02, budget_s=10)

pytestmark = needs("tooltalk")


@pytest.fixture(scope="module")
def oracle() -> OracleRecording:
    return oracle_recording("tooltalk", dataset("tooltalk"), **OPTIONS)


@pytest.fixture(scope="module")
def benchmark() -> Any:
    return make_benchmark("tooltalk", dataset("tooltalk"), **OPTIONS)


def run(benchmark: Any, srv: FakeOpenAIServer, store: RunStore, *, retry: RetryPolicy = PATIENT,
        timeout: float = 10.0) -> tuple[RunSummary, ModelClient]:
    client = ModelClient(get_model("openai/fake", base_url=srv.base_url), cache=None,
                         max_concurrency=CONCURRENCY, retry=retry, timeout=timeout)
    options = RunOptions(max_concurrency=CONCURRENCY, progress=False)
    return asyncio.run(execute_run(benchmark, client, store, options)), client


def without_shape(output: dict[str, Any]) -> dict[str, Any]:
    turns = [{k: v for k, v in t.items() if k != "api"} for t in output["turns"]]
    return {**output, "turns": turns}


def test_transient_faults_change_no_score(benchmark: Any, oracle: OracleRecording,
                                          tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    with FakeOpenAIServer(oracle.responder, latency=0.002, seed=3, error_rate=0.3,
                          timeout_rate=0.03, empty_rate=0.05, timeout_sleep=2.0) as srv:
        summary, client = run(benchmark, srv, store, timeout=0.5)
    assert {"429", "500", "timeout", "empty"} <= set(srv.faults), srv.faults
    assert client.failures >= sum(srv.faults.values()) > 100
    assert summary.errors == 0 and summary.done == len(oracle.records)
    assert summary.usage.calls == oracle.calls  # replies used: exactly the oracle's calls
    records = store.latest()
    for (sample_id, _), record in records.items():
        assert record["status"] == "ok", record.get("error")
        assert record["scores"] == oracle.records[sample_id]["scores"], sample_id
        # the same turns, but for the request shape an openai/ model records in each turn
        # (the oracle's replies have none)
        assert without_shape(record["output"]) == oracle.records[sample_id]["output"], sample_id
    metrics = benchmark.aggregate(list(records.values()))
    assert metrics == benchmark.aggregate(list(oracle.records.values()))
    assert metrics["errors"] == 0 and metrics["hard"]["success_rate"] == 1.0


def test_malformed_tool_calls_are_the_models_mistake(benchmark: Any, oracle: OracleRecording,
                                                     tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    with FakeOpenAIServer(oracle.responder, seed=5, malformed_rate=0.2) as srv:
        summary, client = run(benchmark, srv, store)
    assert srv.faults["malformed"] > 10
    assert summary.errors == 0 and client.failures == 0  # not an infrastructure failure
    records = list(store.latest().values())
    assert all(r["status"] == "ok" for r in records)
    failed = [p for r in records for t in r["output"]["turns"] for p in t["predictions"]
              if p["exception"] == PARSE_FAILED]
    assert failed and all(p["raw_arguments"] == MALFORMED_ARGUMENTS for p in failed)
    metrics = benchmark.aggregate(records)
    hard = metrics["hard"]
    assert metrics["errors"] == 0 and hard["conversations"] == len(oracle.records)
    assert hard["predictions"] >= len(failed)
    assert hard["precision"] < 1.0 and hard["success_rate"] < 1.0
    # only the calls of a turn after its first malformed one are skipped, so recall stays high
    assert hard["recall"] > 0.5


def failing_for(responder: Responder, first_user_texts: set[str]) -> Responder:
    """A responder that always fails (HTTP 500) for the conversations given."""
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        if first in first_user_texts:
            raise RuntimeError("persistent failure (injected)")
        return responder(request)
    return respond


def first_user_text(sample: Any) -> str:
    return next(t.text for t in sample.data.turns if t.role == "user")


def test_persistent_failure_is_an_error_not_a_score(benchmark: Any, oracle: OracleRecording,
                                                    tmp_path: Path) -> None:
    samples = benchmark.samples()
    counts = Counter(first_user_text(s) for s in samples)
    doomed = [s.id for s in samples if counts[first_user_text(s)] == 1][:3]
    doomed_texts = {first_user_text(s) for s in samples if s.id in doomed}
    store = RunStore(tmp_path / "run")
    with FakeOpenAIServer(failing_for(oracle.responder, doomed_texts)) as srv:
        summary, _ = run(benchmark, srv, store, retry=IMPATIENT)
    assert summary.done == len(samples) and summary.errors == len(doomed)
    records = store.latest()
    errors = {k[0]: r for k, r in records.items() if r["status"] == "error"}
    assert sorted(errors) == sorted(doomed)
    for r in errors.values():
        assert r["error"].startswith("infrastructure: gave up after 3 attempt(s)"), r["error"]
        assert "scores" not in r
    metrics = benchmark.aggregate(list(records.values()))
    others = [r for k, r in oracle.records.items() if k not in doomed]
    assert metrics == {**benchmark.aggregate(others), "errors": len(doomed)}
    assert metrics["hard"]["conversations"] == len(samples) - len(doomed)

    # Errors are not results: a resume runs exactly those samples again.
    with FakeOpenAIServer(oracle.responder) as srv:
        summary, _ = run(benchmark, srv, store)
    assert summary.skipped == len(samples) - len(doomed) and summary.errors == 0
    records = store.latest()
    assert benchmark.aggregate(list(records.values())) == benchmark.aggregate(
        list(oracle.records.values()))


def test_endpoint_down_for_good_errors_every_sample_and_completes(
        benchmark: Any, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    always_500 = {attempt: "500" for attempt in range(IMPATIENT.max_attempts)}
    with FakeOpenAIServer(fault_plan=always_500) as srv:
        summary, client = run(benchmark, srv, store, retry=IMPATIENT)
    samples = len(benchmark.samples())
    assert summary.done == summary.errors == samples
    assert srv.requests == client.calls == samples * IMPATIENT.max_attempts  # one call each
    metrics = benchmark.aggregate(list(store.latest().values()))
    assert metrics["errors"] == samples and "hard" not in metrics
