"""A cache fault never stops a run: a cache file that is garbage, a directory, of the wrong
schema, or holding an unreadable entry, and a write that fails, all degrade to calling the
model, said once in a warning that names the cache file."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer, text_responder

from toolscore.models import ModelClient, ResponseCache, get_model
from toolscore.types import GenerateConfig, Message

HELLO = [Message(role="system", content="s"), Message(role="user", content="hello")]


def ask(srv: FakeOpenAIServer, cache: ResponseCache, n: int = 2) -> list[str | None]:
    client = ModelClient(get_model("openai/fake", base_url=srv.base_url), cache=cache)
    return [asyncio.run(client.generate(HELLO, [], GenerateConfig())).text for _ in range(n)]


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("kind", ["garbage", "directory", "wrong schema"])
def test_an_unusable_cache_file_leaves_the_cache_off(tmp_path: Path, kind: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite"
    if kind == "garbage":
        path.write_bytes(b"\x00not a database" * 100)
    elif kind == "directory":
        path.mkdir()
    else:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE replies (something TEXT)")
    cache = ResponseCache(path)
    with FakeOpenAIServer(text_responder("hi")) as srv:
        assert ask(srv, cache) == ["hi", "hi"]
        assert srv.requests == 2  # nothing was cached, both went to the model
    said = warnings(caplog)
    assert len(said) == 1 and str(path) in said[0] and "without a cache" in said[0]


def test_an_unreadable_entry_is_a_miss_and_is_replaced(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    with FakeOpenAIServer(text_responder("hi")) as srv:
        ask(srv, cache, 1)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE replies SET reply = '{not json'")
        assert ask(srv, cache, 2) == ["hi", "hi"]
        assert srv.requests == 2  # the poisoned entry was a miss, then stored again and hit
    said = warnings(caplog)
    assert len(said) == 1 and "treated as misses" in said[0]


def test_a_failed_write_keeps_the_answer(tmp_path: Path,
                                         caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as conn:  # every insert fails, as on a full disk
        conn.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                     "reply TEXT NOT NULL CHECK (length(reply) < 5), created REAL NOT NULL)")
    cache = ResponseCache(path)
    with FakeOpenAIServer(text_responder("hi")) as srv:
        assert ask(srv, cache, 3) == ["hi", "hi", "hi"]
        assert srv.requests == 3
    said = warnings(caplog)
    assert len(said) == 1 and "answers are kept, uncached" in said[0]
