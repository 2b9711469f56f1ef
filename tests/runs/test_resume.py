"""Nothing is lost: a run killed with SIGKILL resumes where it stopped, ends with the scores of an
uninterrupted run, and repeats no model call whose reply it had received.

The run is the real CLI in a subprocess (``openai/fake`` through the real SDK) against a fake
OpenAI server in this process that answers like the oracle on ToolTalk hard. Two kills:

* at a quiet moment, chosen by the server: it answers the first N requests, then holds every
  later one; once all 4 samples in flight wait on it, every reply the run received has been
  processed and cached, so kill + resume must serve exactly the requests of an uninterrupted
  run, each once;
* at an arbitrary moment, once samples.jsonl has a few lines (possibly mid-write): requests in
  flight at the kill are lost with the process and sent again, nothing else.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import data
from support.data import needs
from support.testing.openai_server import FakeOpenAIServer, Responder
from support.testing.oracle_replies import OracleRecording, oracle_recording

from toolscore.models.cache import ResponseCache, sha256_json
from toolscore.records import RunStore
from toolscore.runs.api import evaluate

DATA = data.path("tooltalk")
CONCURRENCY = 4
OPTIONS = {"split": "hard", "tools": "all", "strict": False, "embedder": "hashing"}

pytestmark = needs("tooltalk")


class GatedServer(FakeOpenAIServer):
    """Answers the first ``admit`` requests, then holds every later one unanswered (until the
    server stops); ``admit = None`` answers everything. Held requests are never served."""

    def __init__(self, responder: Responder, admit: int | None = None, **kw: Any) -> None:
        super().__init__(responder, **kw)
        self.admit = admit
        self.admitted = 0
        self.held = 0
        self.changed = threading.Condition()

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.admit is not None and self.admitted >= self.admit:
            with self.changed:
                self.held += 1
                self.changed.notify_all()
            await asyncio.get_running_loop().create_future()  # never answered
        self.admitted += 1
        return await super().handle_chat(request)

    def keys(self) -> list[str]:
        """One hash per request served (requests are kept in arrival order)."""
        return [sha256_json(r) for r in self.received]


@pytest.fixture(scope="module")
def oracle() -> OracleRecording:
    return oracle_recording("tooltalk", DATA, **OPTIONS)


@pytest.fixture(scope="module")
def reference(oracle: OracleRecording, tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, Any]:
    """The uninterrupted run: same library path, same options, fresh cache."""
    tmp = tmp_path_factory.mktemp("reference")
    with GatedServer(oracle.responder) as srv:
        result = evaluate("tooltalk", "openai/fake", data=DATA, max_concurrency=CONCURRENCY,
                          cache=tmp / "cache.sqlite", base_url=srv.base_url, out=tmp / "run",
                          **OPTIONS).to_dict()
    assert result["metrics"]["errors"] == 0
    assert result["metrics"]["hard"]["success_rate"] == 1.0
    assert srv.admitted == oracle.calls
    return {"metrics": result["metrics"], "records": RunStore(tmp / "run").latest(),
            "keys": Counter(srv.keys())}


def cli(base_url: str, tmp: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolscore.cli", "run", "tooltalk", "--split", "hard",
            "--embedder", "hashing", "--data", str(DATA), "--model", "openai/fake",
            "--base-url", base_url, "--cache", str(tmp / "cache.sqlite"),
            "--max-concurrency", str(CONCURRENCY), "--json", *extra]


def subprocess_env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "dummy", "XDG_CACHE_HOME": str(tmp / "xdg")}


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def kill(proc: subprocess.Popen[bytes]) -> None:
    assert proc.poll() is None, f"the run ended (exit {proc.returncode}) before the kill"
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def resume(base_url: str, tmp: Path, run: Path) -> dict[str, Any]:
    done = subprocess.run(cli(base_url, tmp, "--resume", str(run)), env=subprocess_env(tmp),
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout)


def check_same_as_reference(result: dict[str, Any], run: Path, reference: dict[str, Any]
                            ) -> None:
    """Identical metrics, per-conversation scores and transcripts; every sample once as ok."""
    assert result["metrics"] == reference["metrics"]
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    ok = Counter((r["id"], r["epoch"]) for r in records if r["status"] == "ok")
    assert set(ok) == set(reference["records"])
    assert max(ok.values()) == 1, [k for k, n in ok.items() if n > 1]
    latest = RunStore(run).latest()
    for key, ref in reference["records"].items():
        assert latest[key]["scores"] == ref["scores"], key
        assert latest[key]["output"] == ref["output"], key


def test_kill_at_a_quiet_moment_then_resume_repeats_no_call(
        oracle: OracleRecording, reference: dict[str, Any], tmp_path: Path) -> None:
    admit = 120  # of 415: some samples finished, 4 part-way through
    run = tmp_path / "run"
    with GatedServer(oracle.responder, admit=admit, latency=0.005) as srv:
        proc = subprocess.Popen(cli(srv.base_url, tmp_path, "--out", str(run)),
                                env=subprocess_env(tmp_path), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            with srv.changed:
                assert srv.changed.wait_for(lambda: srv.held >= CONCURRENCY, timeout=120)
        finally:
            kill(proc)
        finished = lines(run / "samples.jsonl")
        assert 0 < finished < len(reference["records"])
        with ResponseCache(tmp_path / "cache.sqlite") as cache:
            assert len(cache) == admit  # the in-flight samples' calls too
        # A kill during the append of a record leaves a torn line: emulate one for a sample
        # that had not finished, so that resume has to cut it off and run the sample again.
        torn_id = next(k for k in reference["records"]
                       if k not in RunStore(run).latest())
        torn = json.dumps(reference["records"][torn_id]).encode()
        with open(run / "samples.jsonl", "ab") as f:
            f.write(torn[: len(torn) // 2])

        srv.admit = None
        result = resume(srv.base_url, tmp_path, run)
    check_same_as_reference(result, run, reference)
    assert srv.admitted == oracle.calls
    assert Counter(srv.keys()) == reference["keys"]  # each request served once, none repeated
    assert result["summary"]["skipped"] == finished
    assert result["summary"]["calls"] == oracle.calls - admit


def test_kill_at_any_moment_then_resume_repeats_only_calls_in_flight(
        oracle: OracleRecording, reference: dict[str, Any], tmp_path: Path) -> None:
    run = tmp_path / "run"
    with GatedServer(oracle.responder, latency=0.02) as srv:
        proc = subprocess.Popen(cli(srv.base_url, tmp_path, "--out", str(run)),
                                env=subprocess_env(tmp_path), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: lines(run / "samples.jsonl") >= 3 or proc.poll() is not None,
                       "three finished samples")
        finally:
            kill(proc)
        # Requests the dead process had sent may still be in the server's socket buffers.
        wait_until(lambda: srv.in_flight == 0 and not srv._tasks, "the server to go idle")
        before = srv.keys()
        finished = lines(run / "samples.jsonl")
        assert finished < len(reference["records"]), "the run ended before the kill"
        with ResponseCache(tmp_path / "cache.sqlite") as cache:
            cached = len(cache)
        result = resume(srv.base_url, tmp_path, run)
    check_same_as_reference(result, run, reference)
    after = srv.keys()[len(before):]
    repeated = Counter(before) & Counter(after)
    lost = len(before) - cached  # served, but the reply died with the process
    assert sum(repeated.values()) == lost <= CONCURRENCY
    assert Counter(before) + Counter(after) - repeated == reference["keys"]
