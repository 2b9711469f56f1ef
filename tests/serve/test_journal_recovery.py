"""A served run directory survives its server: ``toolscore mcp serve --transport http`` runs
as a subprocess, 5 episodes are opened and called (one ended), and the server is killed. After
SIGKILL, ``toolscore mcp recover OUT`` (or the next start over OUT) records the 4 open ones,
marked unfinished, with every call; after SIGTERM or SIGINT the server records them itself
before it exits. In process: an episode recorded just before a kill is not recorded twice, a
half-written journal line is cut off, and resets replay from the journal."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from serve.test_http import CONTROL, free_port, http, post_call
from support.data import dataset

pytest.importorskip("mcp")

import toolscore  # noqa: E402
from toolscore.benchmarks.serve.episodes import Episodes  # noqa: E402
from toolscore.benchmarks.serve.journal import JOURNAL_FILE  # noqa: E402
from toolscore.records import RunStore  # noqa: E402

SRC = Path(toolscore.__file__).resolve().parents[1]
CONVERSATIONS = ["AddAlarm-easy", "CreateEvent-easy", "ChangePassword-easy", "SendEmail-easy",
                 "DeleteAlarm-easy"]


def environment() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "TOOLSCORE_DATA": str(dataset("tooltalk").parent),
            "TOOLSCORE_MCP_CONTROL_TOKEN": CONTROL}


def toolscore_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "toolscore.cli", *args]


@contextmanager
def server(out: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``toolscore mcp serve tooltalk --transport http --out OUT`` on a free loopback port;
    yields the process and its base URL once it accepts connections. Killed at the end."""
    port = free_port()
    proc = subprocess.Popen(toolscore_cli("mcp", "serve", "tooltalk", "--transport", "http",
                                          "--port", str(port), "--out", str(out),
                                          "--embedder", "hashing"),
                            env=environment(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        if proc.stderr is not None:
            proc.stderr.close()


def play(base: str, world: Any) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Five episodes, each with its ground-truth calls and one wrong call; the first ended.
    Returns the calls sent per conversation."""
    sent: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    tools = world.benchmark.tools
    for n, conv_id in enumerate(CONVERSATIONS):
        created = http.post(f"{base}/episodes", json={"conversation": conv_id})
        assert created.status_code == 201, created.body
        episode = created.json()
        conversation = world.sample(conv_id).data
        calls = [(c.name, {k: v for k, v in (c.arguments or {}).items()
                           if k not in tools[c.name].hidden})
                 for t in conversation.turns for c in t.apis]
        calls.append((calls[0][0], {**calls[0][1], "bogus_argument": n}))
        for name, arguments in calls:
            assert post_call(episode["mcp_url"], name, arguments).status_code == 200
        sent[conv_id] = calls
        if n == 0:
            assert http.post(f"{base}/episodes/{episode['id']}/end").status_code == 200
    return sent


def check_records(out: Path, sent: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
    records = {r["id"]: r for r in RunStore(out).records()}
    assert sorted(records) == sorted(CONVERSATIONS)
    for conv_id, calls in sent.items():
        record = records[conv_id]
        unfinished = conv_id != CONVERSATIONS[0]
        assert bool(record["meta"].get("unfinished")) is unfinished, conv_id
        assert ("unfinished" in record["output"]) is unfinished
        assert len(record["output"]["calls"]) == len(calls), conv_id
        logged = [(c["tool"], {k: c["arguments"].get(k) for k in args})
                  for c, (_, args) in zip(record["output"]["calls"], calls, strict=True)]
        assert logged == calls, conv_id
        assert record["status"] == "ok" and record["scores"]["predictions"] == len(calls)
        assert record["output"]["calls"][-1]["exception"]  # the wrong call, as answered
        assert "final_state" in record["output"]
    assert RunStore(out).read_scores()["easy"]["conversations"] == 5


def test_sigkill_then_recover_records_every_open_episode(world: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with server(out) as (proc, base):
        sent = play(base, world)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert len(list(RunStore(out).records())) == 1
    done = subprocess.run(toolscore_cli("mcp", "recover", str(out)), env=environment(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 unfinished episode(s)" in done.stderr
    check_records(out, sent)
    assert not (out / JOURNAL_FILE).exists()  # removed once every episode is recorded
    again = subprocess.run(toolscore_cli("mcp", "recover", str(out)), env=environment(),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "0 unfinished episode(s)" in again.stderr
    assert len(list(RunStore(out).records())) == 5


def test_sigkill_then_the_next_start_records_them(world: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with server(out) as (proc, base):
        sent = play(base, world)
        proc.kill()
        proc.wait(30)
    with server(out) as (proc, base):
        check_records(out, sent)
        created = http.post(f"{base}/episodes", json={"conversation": "AddAlarm-easy"}).json()
        assert created["epoch"] == 1  # the recovered records count


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_record_open_episodes_before_exiting(world: Any, tmp_path: Path,
                                                                stop: int) -> None:
    out = tmp_path / "run"
    with server(out) as (proc, base):
        sent = play(base, world)
        proc.send_signal(stop)
        proc.wait(60)
        assert proc.stderr is not None
        said = proc.stderr.read().decode()
        assert "Traceback" not in said and "Aborted" not in said
        if stop == signal.SIGINT:  # Ctrl-C: one line, the conventional exit status
            assert proc.returncode == 130 and said.rstrip().splitlines()[-1] == (
                f"toolscore: stopped (Ctrl-C); episodes still open were recorded as "
                f"unfinished in {out}")
    check_records(out, sent)


def test_a_record_written_just_before_a_kill_is_not_written_twice(world: Any,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "run"
    with Episodes(world, out) as episodes:
        episode = episodes.create("AddAlarm-easy")
        episode.call("AddAlarm", {"time": "18:30:00"})
        episodes.end(episode.id)
        other = episodes.create("CreateEvent-easy")
        other.call("AddAlarm", {"time": "25:00:00"})
        other.reset()
        other.call("AddAlarm", {"time": "18:30:00"})
        expected = other.world.env.state_hash()
    # killed after the first record was appended, before its "end" line, and mid-line later
    journal = out / JOURNAL_FILE
    lines = [line for line in journal.read_text().splitlines() if '"event": "end"' not in line]
    journal.write_text("\n".join(lines) + '\n{"event": "call", "epis')
    with Episodes(world, out) as episodes:
        assert [r.id for r in episodes.recovered] == ["CreateEvent-easy"]
    records = list(RunStore(out).records())
    assert [r["id"] for r in records] == ["AddAlarm-easy", "CreateEvent-easy"]
    recovered = records[1]["output"]
    assert recovered["state_hash"] == expected and recovered["attempts"] == 2
    assert [c["arguments"]["time"] for c in recovered["discarded_attempts"][0]["calls"]] == [
        "25:00:00"]
    assert [c["arguments"]["time"] for c in recovered["calls"]] == ["18:30:00"]
