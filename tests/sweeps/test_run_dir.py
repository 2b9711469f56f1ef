"""``toolscore run`` names its default directory after the run's configuration, so repeating
a command resumes (or reports a finished run) instead of starting over; ``--shard K/N``
splits a run into parts that write one run directory, at the same time, safely."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from support.cli import json_doc, toolscore
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

import toolscore as api
from toolscore.records import RunStore, RunStoreError
from toolscore.runs.api import default_run_dir, parse_shard, run_identity

DEMO = ("demo", "--model", "oracle", "--embedder", "hashing", "--no-cache")


def test_the_same_command_finds_the_same_directory_and_runs_nothing(tmp_path: Path) -> None:
    first = json_doc(toolscore("run", *DEMO, "--json", cwd=tmp_path))
    again = toolscore("run", *DEMO, "--json", cwd=tmp_path)
    doc = json_doc(again)
    assert doc["run_dir"] == first["run_dir"] and Path(first["run_dir"]).parent.name == "runs"
    assert doc["summary"]["run_now"] == 0 and doc["summary"]["calls"] == 0
    assert doc["metrics"] == first["metrics"]
    assert "already complete" in again.stderr
    other = json_doc(toolscore("run", *DEMO, "--epochs", "2", "--json", cwd=tmp_path))
    assert other["run_dir"] != first["run_dir"]


def test_a_partial_default_run_is_resumed(tmp_path: Path) -> None:
    first = json_doc(toolscore("run", *DEMO, "--json", cwd=tmp_path))
    samples = tmp_path / first["run_dir"] / "samples.jsonl"
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:2]))  # as if killed after two samples
    doc = json_doc(toolscore("run", *DEMO, "--json", cwd=tmp_path))
    assert (doc["summary"]["skipped"], doc["summary"]["run_now"]) == (2, 4)
    assert doc["metrics"] == first["metrics"]


def test_identity_leaves_out_what_does_not_change_results() -> None:
    a = run_identity("demo", "openai/x", options={"seed": 1}, base_url="http://u:secret@h/v1")
    assert "secret" not in json.dumps(a)
    assert default_run_dir("demo", "openai/x", a) == default_run_dir("demo", "openai/x", a)
    b = run_identity("demo", "openai/x", options={"seed": 2})
    assert default_run_dir("demo", "openai/x", a) != default_run_dir("demo", "openai/x", b)
    assert default_run_dir("demo", "openai/x", a).name.startswith("demo-openai_x-")


@pytest.mark.parametrize(("text", "message"), [("3", "expected K/N"), ("0/2", "between 1"),
                                                ("3/2", "between 1"), ("a/b", "expected K/N")])
def test_bad_shards_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_shard(text)


def test_shards_run_at_once_into_one_directory(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Three shards of one run in three threads (each its own event loop), against the
    fake server: together they run every sample exactly once, and the last to finish scores
    them all, exactly like the run in one piece."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    oracle = oracle_recording("demo", None, embedder="hashing")
    whole = api.evaluate("demo", "oracle", embedder="hashing", epochs=2, cache=None,
                         out=tmp_path / "whole")
    out = tmp_path / "sharded"
    with FakeOpenAIServer(oracle.responder, latency=0.02) as srv:
        failures: list[BaseException] = []

        def shard(k: int) -> None:
            try:
                asyncio.run(api.evaluate_async(
                    "demo", "openai/fake", base_url=srv.base_url, embedder="hashing",
                    epochs=2, cache=None, out=out, shard=f"{k}/3", max_concurrency=2))
            except BaseException as e:  # noqa: BLE001 - a thread's error must fail the test
                failures.append(e)

        threads = [threading.Thread(target=shard, args=(k,)) for k in (1, 2, 3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []  # e.g. shards writing run.json at once must not collide
        assert srv.requests == 2 * oracle.calls
    keys = [(r["id"], r["epoch"]) for r in RunStore(out).records()]
    assert len(keys) == len(set(keys)) == 12
    scores = json.loads((out / "scores.json").read_text())
    assert scores["easy"] == whole.metrics["easy"] and scores["hard"] == whole.metrics["hard"]
    # a whole run is refused while shards hold the directory, and the other way round
    with RunStore(out).lock(shared=True), pytest.raises(RunStoreError, match="another"):
        api.resume(out)


def test_a_shard_killed_mid_line_does_not_corrupt_the_others(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append({"id": "a", "epoch": 0, "status": "ok"})
    with open(store.samples_path, "ab") as fh:
        fh.write(b'{"id": "b", "epo')  # a shard killed while writing
    store.append({"id": "c", "epoch": 0, "status": "ok"})
    assert [r["id"] for r in store.records()] == ["a", "c"]
