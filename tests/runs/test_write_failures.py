"""A record that cannot be stored stops the run; it is never lost with exit 0.

Writes fail short of their data on a full disk (ENOSPC) and past the file size limit
(``ulimit -f``: Python ignores SIGXFSZ, so the kernel writes what fits and the next write
fails with EFBIG; with SIGXFSZ at its default the process is killed mid-line). Each way, the
run must stop with one line saying what was kept and how to resume (exit 3), keep only whole
records, write no scores over a subset, and its resume must end with exactly the records and
scores of a run that never failed.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import data

from toolscore.records import NotStored, RunStore
from toolscore.runs.api import evaluate, resume, score
from toolscore.runs.stopped import RunStopped

DEMO = {"embedder": "hashing", "cache": None}
EPOCHS = 4  # 24 records of about 3 kB


def _records(run: Path) -> dict[tuple[str, int], Any]:
    out = {}
    for line in (run / "samples.jsonl").read_text().splitlines():
        r = json.loads(line)
        r.pop("time_s", None)
        for usage in [r["usage"], *r["usage_by_role"].values()]:
            usage.pop("latency_s", None)
        out[(r["id"], r["epoch"])] = r
    return out


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that never failed; its embedding cache is shared by the runs below, so that
    under a file size limit only the run's own files grow."""
    root = tmp_path_factory.mktemp("unbroken")
    with pytest.MonkeyPatch.context() as env:  # the folder conftest gives every test
        env.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
        evaluate("demo", "oracle", out=root / "run", epochs=EPOCHS, **DEMO)
    return root / "run"


def _whole_lines(run: Path) -> int:
    raw = (run / "samples.jsonl").read_bytes()
    assert raw.endswith(b"\n"), "a torn last line was left behind"
    for line in raw.splitlines():
        json.loads(line)
    return raw.count(b"\n")


# -- a full disk, in this process -----------------------------------------------------------
class FullDisk:
    """``os.write`` that stores ``room`` more bytes of samples.jsonl, writing what fits of the
    write that reaches it (as a disk does), then fails every later write with ENOSPC."""

    def __init__(self, room: int, name: str = "samples.jsonl") -> None:
        self.room = room
        self.name = name
        self.real = os.write

    def __call__(self, fd: int, data: Any) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").split("/")[-1].startswith(self.name):
            return self.real(fd, data)
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self.real(fd, bytes(data)[: self.room])
        self.room -= n
        return n


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FullDisk]]:
    def install(room: int, name: str = "samples.jsonl") -> FullDisk:
        disk = FullDisk(room, name)
        monkeypatch.setattr(os, "write", disk)
        return disk

    yield install


pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def test_a_full_disk_stops_the_run_and_the_resume_is_exact(
        unbroken: Path, tmp_path: Path, full_disk: Callable[..., FullDisk],
        monkeypatch: pytest.MonkeyPatch) -> None:
    size = (unbroken / "samples.jsonl").stat().st_size
    full_disk(size // 3)
    with pytest.raises(RunStopped) as e:
        evaluate("demo", "oracle", out=tmp_path / "run", epochs=EPOCHS, **DEMO)
    message = str(e.value)
    kept = _whole_lines(tmp_path / "run")
    assert "\n" not in message and "No space left on device" in message
    assert message.startswith(f"a record could not be stored: {tmp_path / 'run'}/samples.jsonl")
    assert f"{kept} of {EPOCHS * 6} samples finished" in message
    assert message.endswith(f"resume with: toolscore run demo --resume {tmp_path / 'run'}")
    assert 0 < kept < EPOCHS * 6 and not (tmp_path / "run" / "scores.json").exists()
    reference = _records(unbroken)
    assert all(r == reference[k] for k, r in _records(tmp_path / "run").items())

    monkeypatch.undo()  # room again
    done = resume(tmp_path / "run")
    assert _records(tmp_path / "run") == reference
    assert done.metrics == json.loads((unbroken / "scores.json").read_text())
    assert (tmp_path / "run" / "scores.json").read_bytes() == (
        unbroken / "scores.json").read_bytes()


def test_a_failed_append_leaves_only_whole_records(tmp_path: Path,
                                                   full_disk: Callable[..., FullDisk]) -> None:
    store = RunStore(tmp_path / "run")
    record = {"id": "a", "epoch": 0, "status": "ok", "output": "x" * 100, "scores": {}}
    store.append(record)
    before = store.samples_path.read_bytes()
    full_disk(40)  # part of the next line fits
    with pytest.raises(NotStored, match=r"samples\.jsonl: not written \(No space left"):
        store.append({**record, "id": "b"})
    assert store.samples_path.read_bytes() == before  # the part written was cut off


@pytest.mark.parametrize("name", ["scores.json", "samples.jsonl"])
def test_rescoring_on_a_full_disk_leaves_the_run_as_it_was(
        unbroken: Path, tmp_path: Path, full_disk: Callable[..., FullDisk], name: str) -> None:
    run = tmp_path / "run"
    evaluate("demo", "oracle", out=run, **DEMO)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    full_disk(100, name)
    with pytest.raises(NotStored, match=rf"{name}: not written \(No space left on device\)"):
        score(run)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # no temporary file left


# -- the file size limit, in a child process -------------------------------------------------
def _limited(cwd: Path, limit: int | None, *args: str, sigxfsz: Any = signal.SIG_IGN,
             xdg: Path) -> subprocess.CompletedProcess[str]:
    """``toolscore ARGS`` under ``ulimit -f`` of ``limit`` bytes (None: none), SIGXFSZ set to
    ``sigxfsz`` in the interpreter (Python itself ignores it as it starts)."""
    code = ("import signal, sys, runpy; signal.signal(signal.SIGXFSZ, signal.Handlers("
            f"{int(sigxfsz)})); sys.argv[0] = 'toolscore'; "
            "runpy.run_module('toolscore.cli', run_name='__main__')")

    def limit_size() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CACHE_HOME=str(xdg), TOOLSCORE_DATA=str(data.ROOT))
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=limit_size)  # noqa: PLW1509 - sets only a limit


RUN = ("run", "demo", "--model", "oracle", "--embedder", "hashing", "--no-cache",
       "--epochs", str(EPOCHS), "--out", "run")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_file_size_limit_stops_the_run_with_one_line_and_exit_3(
        unbroken: Path, tmp_path: Path, workers: str) -> None:
    xdg = Path(os.environ["XDG_CACHE_HOME"])
    limit = (unbroken / "samples.jsonl").stat().st_size // 2
    done = _limited(tmp_path, limit, *RUN, "--workers", workers, xdg=xdg)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 3, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    kept = _whole_lines(tmp_path / "run")
    assert lines[0].startswith("stopped: a record could not be stored: run/samples.jsonl: ")
    assert "File too large" in lines[0] and "ulimit -f" in lines[0]
    said = int(lines[0].split("; ")[-2].split(" of ")[0])
    # with workers, the one that failed counts; another may still store a shorter record
    assert said == kept if workers == "1" else 0 < said <= kept
    assert lines[0].endswith("resume with: toolscore run demo --resume run")
    assert 0 < kept < EPOCHS * 6 and not (tmp_path / "run" / "scores.json").exists()
    assert done.stdout == ""  # no metrics printed over the records that fitted

    again = _limited(tmp_path, None, "run", "demo", "--resume", "run", xdg=xdg)
    assert again.returncode == 0, again.stderr
    assert _records(tmp_path / "run") == _records(unbroken)
    assert (tmp_path / "run" / "scores.json").read_bytes() == (
        unbroken / "scores.json").read_bytes()


def test_killed_by_sigxfsz_mid_line_the_resume_is_exact(unbroken: Path, tmp_path: Path) -> None:
    xdg = Path(os.environ["XDG_CACHE_HOME"])
    limit = (unbroken / "samples.jsonl").stat().st_size // 2
    done = _limited(tmp_path, limit, *RUN, sigxfsz=signal.SIG_DFL, xdg=xdg)
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert (tmp_path / "run" / "samples.jsonl").stat().st_size == limit  # cut mid-line

    again = _limited(tmp_path, None, "run", "demo", "--resume", "run", xdg=xdg)
    assert again.returncode == 0, again.stderr
    assert _records(tmp_path / "run") == _records(unbroken)
    assert (tmp_path / "run" / "scores.json").read_bytes() == (
        unbroken / "scores.json").read_bytes()
