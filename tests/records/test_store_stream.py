"""Rewriting samples.jsonl from a stream (rescoring 10,000 records never holds them all): a
stream that fails half-way leaves the run's file, and nothing else, as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolscore.records import RunStore


def test_a_failing_stream_leaves_the_file_and_no_temporary(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    for i in range(3):
        store.append({"id": f"s{i}", "epoch": 0, "status": "ok", "output": {"i": i}})
    before = store.samples_path.read_bytes()

    def stream() -> Iterator[dict[str, Any]]:
        yield from store.records()
        raise ValueError("the scorer failed on the last record")

    with pytest.raises(ValueError, match="last record"):
        store.rewrite(stream())
    assert store.samples_path.read_bytes() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_partial_tail_names_the_torn_line_without_reading_everything(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.partial_tail() is None
    store.append({"id": "a", "epoch": 0, "status": "ok"})
    assert store.partial_tail() is None
    with open(store.samples_path, "ab") as fh:
        fh.write(b'{"id": "b", "epo')
    assert store.partial_tail() == 2
