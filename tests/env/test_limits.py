"""What one tool call leaves in a run record is bounded (issue 10, item 9): a model that sends
enormous names, arguments or texts cannot make a record too large to load, and whatever was cut
says so and gives its full length."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.env.limits import NAME_LIMIT, VALUE_LIMIT, bounded, bounded_text

MIB = 1 << 20


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def test_values_that_fit_are_kept_as_they_are() -> None:
    value = {"to": ["a@b.c"] * 50, "body": "x" * 2000, "n": 12, "deep": [[[[{"k": None}]]]]}
    assert bounded(value) is value
    assert bounded_text("short") == "short"


def test_a_long_string_keeps_its_head_and_its_length() -> None:
    text = "é" * MIB
    cut = bounded_text(text)
    assert cut.startswith("é" * VALUE_LIMIT) and cut.endswith(f"[truncated: {MIB} chars in all]")
    assert len(cut) < VALUE_LIMIT + 60


def test_containers_stay_containers_and_count_what_they_dropped() -> None:
    many = {f"key{i}": "v" * 100 for i in range(10_000)}
    cut = bounded(many)
    assert isinstance(cut, dict) and _size(cut) < 2 * VALUE_LIMIT
    kept = len(cut) - 1
    assert cut["…"] == f"[truncated: {10_000 - kept} more keys]"
    items = bounded([["x" * 1000] * 10] * 100)
    assert isinstance(items, list) and _size(items) < 2 * VALUE_LIMIT
    assert items[-1].startswith("…[truncated: ") and items[-1].endswith(" more items]")


def test_deep_and_unprintable_values_are_bounded_without_raising() -> None:
    deep: Any = "x" * VALUE_LIMIT
    for _ in range(500):
        deep = [deep]
    assert _size(bounded(deep)) < 2 * VALUE_LIMIT
    assert bounded({"n": 10 ** 5000})["n"] == "…[truncated: an integer too long to print]"


def test_a_huge_tool_name_repeated_30_times_leaves_a_bounded_record(tmp_path: Path) -> None:
    name = "N" * MIB
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps({"q": "a" * MIB})}}
             for i in range(30)]
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
             "choices": [{"index": 0, "finish_reason": "tool_calls",
                          "message": {"role": "assistant", "content": None,
                                      "tool_calls": calls}}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    with FakeOpenAIServer(lambda request: reply) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 limit=1, embedder="hashing", out=tmp_path / "run")
    (record,) = run.records
    assert record["status"] == "ok"
    turns = record["output"]["turns"]
    line = (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0]
    per_turn = 30 * (NAME_LIMIT * 3 + VALUE_LIMIT * 8)  # every stored copy of every call
    assert len(line) < len(turns) * per_turn < 30 * MIB  # it was 172 MB for one conversation
    (first, *_) = turns[0]["predictions"]
    assert first["request"]["api_name"].endswith(f"[truncated: {MIB} chars in all]")
    assert first["exception"].endswith(f"[truncated: {MIB + 14} chars in all]")
    assert first["raw_arguments"].endswith(f"[truncated: {MIB + 9} chars in all]")
    # the scores come from the stored record: rescoring it gives the same numbers
    assert record["scores"]["predictions"] == sum(len(t["predictions"]) for t in turns) > 0
    assert toolscore.score(tmp_path / "run").metrics == run.metrics
