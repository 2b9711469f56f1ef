"""A cache row that cannot be decoded is a miss, whatever is wrong with it: JSON nested deeper
than the decoder goes (RecursionError) included. The model is asked again, the run's samples
all succeed with the scores of a run without the cache, and the fault is said once."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

from toolscore.models.cache import ResponseCache
from toolscore.runs.api import evaluate

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deeply_nested_row_is_a_miss(tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with sqlite3.connect(tmp_path / "cache.sqlite") as conn:
        conn.execute("INSERT INTO replies VALUES ('k', 'm', ?, 0)", (DEEP,))
    assert cache.get("k") is None and cache.get("k") is None
    assert cache.misses == 2
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "RecursionError" in said[0] and "treated as misses" in said[0]


def test_a_run_over_a_cache_of_undecodable_rows_has_no_sample_errors(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    oracle = oracle_recording("demo", None, embedder="hashing")
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(oracle.responder) as srv:
        first = evaluate("demo", "openai/fake", base_url=srv.base_url, cache=cache,
                         embedder="hashing", out=tmp_path / "first")
        with sqlite3.connect(cache) as conn:
            rows = conn.execute("UPDATE replies SET reply = ?", (DEEP,)).rowcount
        assert rows == oracle.calls
        caplog.clear()
        again = evaluate("demo", "openai/fake", base_url=srv.base_url, cache=cache,
                         embedder="hashing", out=tmp_path / "again")
    assert again.error_count() == (0, 6)
    assert again.metrics == first.metrics
    assert srv.requests == 2 * oracle.calls  # every poisoned row was a miss, asked again
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "treated as misses" in said[0]
