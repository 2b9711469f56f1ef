"""The Ray executor on a local Ray instance started by the test (2 CPUs), against the fake
OpenAI server: a plan of 12 units finishes; a worker killed mid-unit is retried by Ray and
its unit resumes without repeating finished samples; the provider limit, declared as the Ray
custom resource ``provider:openai``, holds across all tasks; and every unit's scores.json is
byte for byte the local executor's."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, sample_keys, write_plan

from toolscore.sweeps.local import run_local
from toolscore.sweeps.plan import load_plan
from toolscore.sweeps.ray_executor import run_ray

ray = pytest.importorskip("ray")
LIMIT = 4


def _kill_when_started(run_dir: Path, stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the worker running ``run_dir`` once it has finished a sample (its pid is in
    the run's lock file)."""
    while not stop.is_set():
        if len(sample_keys(run_dir)) >= 2:
            pid = (run_dir / ".lock").read_text().strip()
            if pid.isdigit():
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
                return
        time.sleep(0.02)


def test_ray_runs_the_plan_retries_a_killed_worker_and_matches_the_local_executor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.05) as srv:
        local = load_plan(write_plan(tmp_path, srv.base_url, units=12, limit=LIMIT,
                                     out="local"))
        assert {r["state"] for r in run_local(local, workers=2)} == {"done"}
        (tmp_path / "ray").mkdir()
        manifest = load_plan(write_plan(tmp_path / "ray", srv.base_url, units=12,
                                        limit=LIMIT, out="runs"))
        target = Path(manifest.units[0].run_dir)
        srv.max_in_flight = 0
        served = srv.requests
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 resources={"provider:openai": LIMIT})
        stop, killed = threading.Event(), []
        watcher = threading.Thread(target=_kill_when_started, args=(target, stop, killed))
        watcher.start()
        try:
            results = run_ray(manifest)
        finally:
            stop.set()
            watcher.join()
            ray.shutdown()
        ray_requests = srv.requests - served
    assert killed, "the watcher never saw unit 0 running"
    assert sorted(r["index"] for r in results) == list(range(12))
    assert {r["state"] for r in results} == {"done"}, results
    first = next(r for r in results if r["index"] == 0)
    assert first["skipped"] >= 2  # the retry resumed the killed unit's run directory
    assert srv.max_in_flight <= LIMIT
    for u in manifest.units:
        keys = sample_keys(u.run_dir)
        assert len(keys) == len(set(keys)) == 6  # no finished sample run twice
    # only the samples in flight when the worker died were asked again
    assert ray_requests < 12 * oracle.calls + oracle.chain() * 2
    for ours, theirs in zip(local.units, manifest.units, strict=True):
        assert Path(ours.run_dir).name == Path(theirs.run_dir).name
        assert (Path(theirs.run_dir) / "scores.json").read_bytes() == (
            Path(ours.run_dir) / "scores.json").read_bytes()
