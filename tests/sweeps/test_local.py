"""The local executor against the fake OpenAI server: a plan of 12 units finishes with the
oracle's scores, the provider's limit holds across the whole sweep, ``--index`` runs one unit,
``status`` tells the states apart, and a sweep killed mid-unit resumes on resubmission
without repeating a finished sample."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import json_doc, toolscore
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, run_demo_plan, sample_keys, write_plan

from toolscore.sweeps.local import run_local, run_one
from toolscore.sweeps.plan import load_plan
from toolscore.sweeps.status import sweep_status

KEY = {"OPENAI_API_KEY": "dummy"}


def test_a_plan_of_12_units_runs_within_the_provider_limit(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.02) as srv:
        manifest = load_plan(write_plan(tmp_path, srv.base_url, units=12, limit=6,
                                        max_concurrency=8))
        results = run_local(manifest, workers=4)
        served = srv.requests
        # submitted again: every unit is finished, nothing runs, no model call
        again = run_local(load_plan(manifest.source), workers=2)
        assert {r["run_now"] for r in again} == {0} and srv.requests == served
    assert sorted(r["index"] for r in results) == list(range(12))
    assert {r["state"] for r in results} == {"done"}, results
    # 4 workers, limit 6: 4 units at once share 6 connections (never 4 x 8)
    assert 1 < srv.max_in_flight <= 6
    assert served == 12 * oracle.calls
    for u in manifest.units:
        scores = json.loads(Path(u.run_dir, "scores.json").read_text())
        assert scores["easy"]["success_rate"] == 1.0 and scores["hard"]["success_rate"] == 1.0
    doc = sweep_status(manifest)
    assert doc["counts"] == {"done": 12, "partial": 0, "error": 0, "pending": 0}
    assert doc["samples"] == {"expected": 72, "ok": 72, "errors": 0}


def test_a_higher_limit_is_shared_not_multiplied(tmp_path: Path) -> None:
    results, srv = run_demo_plan(tmp_path, units=6, limit=4, workers=2)
    assert {r["state"] for r in results} == {"done"}
    assert 2 < srv.max_in_flight <= 4  # 2 units x 8 each would be 16: the limit holds


def test_index_runs_one_unit_and_status_sees_the_rest_pending(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=3)
        doc = json_doc(toolscore("sweep", "run", str(plan), "--index", "1", "--slots", "3",
                                 "--json", cwd=tmp_path, env=KEY))
        assert [u["index"] for u in doc["units"]] == [1] and doc["counts"] == {"done": 1}
        assert srv.requests == oracle.calls
        status = json_doc(toolscore("sweep", "status", str(plan), "--json", cwd=tmp_path))
        assert [u["state"] for u in status["units"]] == ["pending", "done", "pending"]
        unit = status["units"][1]
        assert {"run_dir", "model", "benchmark", "options", "epochs", "state", "ok",
                "expected"} <= set(unit)
        assert (unit["ok"], unit["expected"], unit["model"]) == (6, 6, "openai/fake")
        with pytest.raises(ValueError, match="--index 3: the plan has units 0 to 2"):
            run_one(load_plan(plan), 3)


def test_status_tells_partial_and_error_apart(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, fault_plan={0: "400"}) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=2)
        manifest = load_plan(plan)
        result = run_one(manifest, 0)  # every first attempt is a bad request: errors
    assert result["state"] == "error" and result["errors"] == 6
    unit = manifest.units[1]
    Path(unit.run_dir).mkdir(parents=True)
    first = Path(manifest.units[0].run_dir)
    (Path(unit.run_dir) / "run.json").write_text((first / "run.json").read_text())
    states = [u["state"] for u in sweep_status(manifest)["units"]]
    assert states == ["error", "partial"]
    done = toolscore("sweep", "status", str(plan), cwd=tmp_path)
    assert done.returncode == 0 and "error: 1" in done.stdout and "partial: 1" in done.stdout


def test_a_killed_sweep_resumes_on_resubmission_without_repeating_samples(
        tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.1) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=4, limit=2, max_concurrency=2)
        manifest = load_plan(plan)
        env = {**os.environ, "OPENAI_API_KEY": "dummy"}
        proc = subprocess.Popen([sys.executable, "-m", "toolscore.cli", "sweep", "run",
                                 str(plan), "--workers", "2"], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if sum(len(sample_keys(u.run_dir)) for u in manifest.units) >= 3:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the pool and its workers, mid-unit
        proc.wait()
        before = {u.run_dir: sample_keys(u.run_dir) for u in manifest.units}
        first = srv.requests
        assert 3 <= sum(map(len, before.values())) < 24, before
        assert sweep_status(manifest)["counts"]["partial"] >= 1
        done = toolscore("sweep", "run", str(plan), "--workers", "2", cwd=tmp_path, env=KEY)
        assert done.returncode == 0, done.stderr[-2000:]
    for u in manifest.units:
        keys = sample_keys(u.run_dir)
        assert keys[:len(before[u.run_dir])] == before[u.run_dir]  # finished ones kept
        assert len(keys) == len(set(keys)) == 6  # and none run twice
    finished = sum(map(len, before.values()))
    # the resubmission made only the calls of the samples not finished before the kill
    assert srv.requests - first <= 4 * oracle.calls - finished
    assert sweep_status(manifest)["counts"]["done"] == 4
