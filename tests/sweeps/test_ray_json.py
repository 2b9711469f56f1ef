"""``toolscore sweep run --executor ray --json`` prints exactly one JSON document on stdout,
even when a Ray worker dies mid-unit and Ray reports it (its "(raylet) A worker died..."
lines go to stderr); the unit is retried and resumed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, sample_keys, write_plan

from toolscore.sweeps.plan import load_plan

pytest.importorskip("ray")


def _kill_when_started(run_dir: Path, stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the Ray worker running ``run_dir`` once it has finished a sample (its pid is
    in the run's lock file)."""
    while not stop.is_set():
        if len(sample_keys(run_dir)) >= 2:
            pid = (run_dir / ".lock").read_text().strip()
            if pid.isdigit():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
                    killed.append(int(pid))
                return
        time.sleep(0.02)


def test_json_stdout_is_one_document_after_a_worker_dies(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.05) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=3, limit=4)
        target = Path(load_plan(plan).units[0].run_dir)
        env = {**os.environ, "OPENAI_API_KEY": "dummy", "RAY_DISABLE_USAGE_STATS": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "toolscore.cli", "sweep", "run",
                                 str(plan), "--executor", "ray", "--json"], cwd=tmp_path,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        stop, killed = threading.Event(), []
        watcher = threading.Thread(target=_kill_when_started, args=(target, stop, killed))
        watcher.start()
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            stop.set()
            watcher.join()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert killed, "the watcher never saw unit 0 running"
    assert proc.returncode == 0, err[-3000:]
    doc = json.loads(out)  # the whole of stdout, nothing before or after
    assert doc["counts"] == {"done": 3}
    assert len(sample_keys(target)) == len(set(sample_keys(target))) == 6
