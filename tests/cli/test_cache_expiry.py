"""The response cache on by default, said in the run's first line, and ``--cache-expiry`` /
``TOOLSCORE_CACHE_EXPIRY``: replies cached longer ago than the expiry are asked again, and the
fresh reply replaces the old one."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from support.cli import assert_user_error, toolscore
from support.testing.openai_server import FakeOpenAIServer

from toolscore.models.cache import ResponseCache, parse_expiry
from toolscore.types import Message, Reply


def test_durations_and_bad_values() -> None:
    assert parse_expiry("90") == parse_expiry("90s") == 90.0
    assert parse_expiry("30m") == 1800.0 and parse_expiry("12h") == 43200.0
    assert parse_expiry("7d") == 7 * 86400.0 and parse_expiry("2W") == 14 * 86400.0
    assert parse_expiry("1.5h") == 5400.0
    assert parse_expiry("never") is None
    for bad in ("7x", "-1d", "0", "abc", "inf", "nan"):
        with pytest.raises(ValueError, match=f"--cache-expiry '{bad}': a duration"):
            parse_expiry(bad)


def _reply(text: str) -> Reply:
    return Reply(Message(role="assistant", content=text))


def _age(path: Path, seconds: float) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE replies SET created = created - ?", (seconds,))


def test_an_expired_entry_is_a_miss_then_replaced(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.sqlite"
    monkeypatch.delenv("TOOLSCORE_CACHE_EXPIRY", raising=False)
    with ResponseCache(path) as cache:
        cache.put("k", _reply("old"))
    _age(path, 3600)
    with ResponseCache(path) as cache:  # no expiry: kept forever
        assert cache.get("k") is not None and cache.expired == 0
    with ResponseCache(path, max_age_s=1800) as cache:
        assert cache.get("k") is None and cache.expired == 1 and cache.misses == 1
        cache.put("k", _reply("new"))
        got = cache.get("k")
        assert got is not None and got.text == "new"
    _age(path, 3600)
    monkeypatch.setenv("TOOLSCORE_CACHE_EXPIRY", "30m")
    with ResponseCache(path) as cache:  # the environment's expiry
        assert cache.max_age_s == 1800 and cache.get("k") is None
    started = time.time()
    with ResponseCache(path, max_age_s=60) as cache:
        cache.put("fresh", _reply("x"))
        assert cache.get("fresh") is not None and time.time() - started < 60


def test_the_command_says_replies_are_cached_and_expiry_asks_again(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    with FakeOpenAIServer() as srv:
        def run(out: str, *extra: str, env: dict[str, str] | None = None):
            return toolscore("run", "demo", "--model", "openai/fake", "--base-url", srv.base_url,
                             "--embedder", "hashing", "--limit", "2", "--cache", str(cache),
                             "--out", out, *extra, cwd=tmp_path, env=env)

        first = run("a")
        assert first.returncode == 0, first.stderr
        assert first.stderr.splitlines()[0] == (
            f"model replies are cached in {cache} (a re-run replays them at no cost; "
            "--no-cache or --cache-expiry DURATION for fresh samples)")
        asked = srv.requests
        assert asked > 0
        assert run("b").returncode == 0 and srv.requests == asked  # replayed from the cache
        _age(cache, 7200)
        again = run("c", "--cache-expiry", "1h")
        assert again.returncode == 0 and srv.requests == 2 * asked  # expired: asked again
        assert "those older than 1h are asked again" in again.stderr.splitlines()[0]
        assert run("d").returncode == 0 and srv.requests == 2 * asked  # fresh ones replaced
        _age(cache, 7200)
        assert run("e", env={"TOOLSCORE_CACHE_EXPIRY": "2h"}).returncode == 0
        assert srv.requests == 3 * asked
        quiet = run("f", "--no-cache")
        assert quiet.returncode == 0 and "cached" not in quiet.stderr
    assert_user_error(toolscore("run", "demo", "--model", "oracle", "--cache-expiry", "soon",
                                cwd=tmp_path),
                      "--cache-expiry 'soon': a duration such as 90s, 30m, 12h, 7d or 2w "
                      "(or never)")
    text = " ".join(toolscore("run", "demo", "--help", cwd=tmp_path).stdout.split())
    assert "--cache-expiry" in text and "TOOLSCORE_CACHE_EXPIRY" in text
