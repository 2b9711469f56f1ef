"""Caches from several nodes merge into one (entries the target lacks are copied; a key held
with another reply is reported, never overwritten), and a cache is pruned by age or size."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore

from toolscore.models.cache import ResponseCache
from toolscore.models.cache_admin import CacheError, info, merge, parse_size, prune
from toolscore.types import Message, Reply


def reply(text: str) -> Reply:
    return Reply(message=Message(role="assistant", content=text))


def fill(path: Path, entries: dict[str, str], model: str = "openai/x") -> None:
    with ResponseCache(path) as cache:
        for key, text in entries.items():
            cache.put(key, reply(text), model=model)


def test_info_counts_entries_and_size(tmp_path: Path) -> None:
    fill(tmp_path / "c.sqlite", {"a": "one", "b": "two"})
    fill(tmp_path / "c.sqlite", {"c": "three"}, model="oracle")
    doc = info(tmp_path / "c.sqlite")
    assert doc["entries"] == 3 and doc["models"] == {"openai/x": 2, "oracle": 1}
    assert doc["bytes"] > 0 and doc["path"] == str(tmp_path / "c.sqlite")
    with pytest.raises(CacheError, match="no such cache file"):
        info(tmp_path / "missing.sqlite")
    (tmp_path / "junk").write_text("not sqlite")
    with pytest.raises(CacheError, match="junk: not a toolscore response cache"):
        info(tmp_path / "junk")


def test_merge_copies_what_is_missing_and_reports_conflicts(tmp_path: Path) -> None:
    target, a, b = tmp_path / "t.sqlite", tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    fill(target, {"k1": "one", "k2": "two"})
    fill(a, {"k2": "two", "k3": "three"})
    fill(b, {"k1": "ONE (another reply)", "k4": "four"})
    report = merge(target, [a, b])
    assert (report.copied, report.same, report.conflicts) == (2, 1, ["k1"])
    with ResponseCache(target) as cache:
        assert len(cache) == 4
        assert cache.get("k1").message.content == "one"  # kept, not overwritten
        assert cache.get("k3").message.content == "three"
        assert cache.get("k4").message.content == "four"
    again = merge(target, [a])
    assert (again.copied, again.same) == (0, 2)  # merging twice changes nothing


def test_merge_into_a_new_file(tmp_path: Path) -> None:
    fill(tmp_path / "a.sqlite", {"x": "1"})
    assert merge(tmp_path / "new" / "t.sqlite", [tmp_path / "a.sqlite"]).copied == 1
    assert info(tmp_path / "new" / "t.sqlite")["entries"] == 1


def _age(path: Path, key: str, days: float) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE replies SET created = ? WHERE key = ?",
                 (time.time() - days * 86400, key))
    conn.commit()
    conn.close()


def test_prune_by_age_then_by_size(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    fill(path, {f"k{i}": "x" * 1000 for i in range(6)})
    for i in range(6):
        _age(path, f"k{i}", 10 - i)  # k0 oldest (10 days) ... k5 newest (5 days)
    assert prune(path, older_than_days=8.5) == {"path": str(path), "removed": 2, "entries": 4}
    done = prune(path, max_bytes=2500)  # two ~1 kB replies fit: the two newest stay
    assert (done["removed"], done["entries"]) == (2, 2)
    with ResponseCache(path) as cache:
        assert cache.get("k5") is not None and cache.get("k4") is not None
        assert cache.get("k3") is None
    with pytest.raises(ValueError, match="--older-than DAYS or --max-size"):
        prune(path)


def test_parse_size() -> None:
    assert parse_size("500M") == 500 << 20 and parse_size("2GB") == 2 << 30
    assert parse_size("10k") == 10240 and parse_size("123") == 123
    with pytest.raises(ValueError, match="--max-size 'lots'"):
        parse_size("lots")


def test_cache_commands(tmp_path: Path) -> None:
    default = tmp_path / "xdg-cache" / "toolscore" / "responses.sqlite"  # what runs use
    fill(default, {"a": "1"})
    fill(tmp_path / "node2.sqlite", {"a": "other", "b": "2"})
    doc = json_doc(toolscore("cache", "info", "--json", cwd=tmp_path))
    assert (doc["entries"], doc["path"]) == (1, str(default))
    done = toolscore("cache", "merge", "node2.sqlite", "--json", cwd=tmp_path)
    assert done.returncode == 3  # a conflict is reported, with its exit code
    assert '"copied": 1' in done.stdout and "keys hold another reply" in done.stderr
    pruned = json_doc(toolscore("cache", "prune", "--max-size", "1", "--json", cwd=tmp_path))
    assert pruned["entries"] == 0
    assert_user_error(toolscore("cache", "info", "--cache", "nope.sqlite", cwd=tmp_path),
                      "nope.sqlite: no such cache file")
