"""The local pool's workers end with their coordinator: after a SIGKILL or a SIGTERM of
``toolscore sweep run`` (not of its process group), every worker is gone within seconds and
nothing holds its stdout open; submitting the plan again finishes it with no finished sample
lost and none run twice. Workers forked from the coordinator and workers started by a fork
server are both covered."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.cli import toolscore
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, sample_keys, write_plan

from toolscore.sweeps.plan import load_plan
from toolscore.sweeps.status import sweep_status

KEY = {"OPENAI_API_KEY": "dummy"}
PROMPT = 5.0  # seconds within which the workers must be gone


def alive_in_group(group: int) -> list[int]:
    """Processes of ``group`` that are not zombies (a zombie has closed its files)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == group and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize(("sig", "start"), [
    (signal.SIGKILL, "fork"), (signal.SIGTERM, "fork"), (signal.SIGKILL, "forkserver")],
    ids=["SIGKILL", "SIGTERM", "SIGKILL-forkserver"])
def test_workers_end_with_their_coordinator_and_the_sweep_resumes(
        tmp_path: Path, sig: signal.Signals, start: str) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.3) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=4, max_concurrency=1)
        manifest = load_plan(plan)
        env = {**os.environ, **KEY, "TOOLSCORE_START_METHOD": start}  # how workers start
        proc = subprocess.Popen([sys.executable, "-m", "toolscore.cli", "sweep", "run",
                                 str(plan), "--workers", "2"], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if sum(len(sample_keys(u.run_dir)) for u in manifest.units) >= 2:
                    break
                time.sleep(0.05)
            assert proc.poll() is None, "the sweep ended before it could be stopped"
            workers = [p for p in alive_in_group(proc.pid) if p != proc.pid]
            assert workers, "no worker process found"
            os.kill(proc.pid, sig)  # the coordinator alone, not its process group
            proc.wait(30)
            closed = threading.Event()
            reader = threading.Thread(target=lambda: (proc.stdout.read(), closed.set()),
                                      daemon=True)
            reader.start()
            assert closed.wait(PROMPT), "a worker still holds the sweep's stdout"
            deadline = time.monotonic() + PROMPT
            while time.monotonic() < deadline and alive_in_group(proc.pid):
                time.sleep(0.05)
            assert not alive_in_group(proc.pid), "workers outlived their coordinator"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        before = {u.run_dir: sample_keys(u.run_dir) for u in manifest.units}
        first = srv.requests
        assert 2 <= sum(map(len, before.values())) < 24, before
        done = toolscore("sweep", "run", str(plan), "--workers", "2", cwd=tmp_path, env=KEY)
        assert done.returncode == 0, done.stderr[-2000:]
    for u in manifest.units:
        keys = sample_keys(u.run_dir)
        assert keys[:len(before[u.run_dir])] == before[u.run_dir]  # finished ones kept
        assert len(keys) == len(set(keys)) == 6  # and none run twice
    finished = sum(map(len, before.values()))
    assert srv.requests - first <= 4 * oracle.calls - finished
    assert sweep_status(manifest)["counts"]["done"] == 4
