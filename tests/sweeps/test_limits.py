"""Provider limits across a sweep, counted by the fake servers: the local pool never exceeds
a limit yet lets any unit use all of it (no fixed share idling at a unit's tail); a simulated
user's provider is limited like the model under test's, in the local pool and with
``--index``; and which limited providers a unit may call (its model, a ``user_model``, the
model of a judge configuration) is read from the plan."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from support.autode import asking_assistant, responder
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, run_demo_plan, sample_keys, write_plan

from toolscore.sweeps.limits import groups_of, shares, slots
from toolscore.sweeps.local import run_local, run_one
from toolscore.sweeps.plan import expand, load_plan


def test_units_share_the_whole_limit_and_never_exceed_it(tmp_path: Path) -> None:
    results, srv = run_demo_plan(tmp_path, units=6, limit=5, workers=3)
    assert {r["state"] for r in results} == {"done"}
    assert srv.requests == 6 * demo_oracle().calls
    # fixed shares would have allowed 3 units x (5 // 3) = 3; shared, all 5 are used
    assert srv.max_in_flight == 5


def test_one_unit_alone_may_use_all_of_the_limit(tmp_path: Path) -> None:
    results, srv = run_demo_plan(tmp_path, units=1, limit=4, workers=2)
    assert {r["state"] for r in results} == {"done"}
    assert srv.max_in_flight == 4


def _autode_plan(folder: Path, assistant_url: str, user_url: str, units: int,
                 limits: dict[str, int]) -> Path:
    doc: dict[str, Any] = {
        "out": "runs", "models": [{"model": "openai/fake", "base_url": assistant_url}],
        "benchmarks": {"autode": {"mode": "dynamic", "strict": True, "user_model": "openai/user",
                                  "user_base_url": user_url}},
        "settings": {"seed": list(range(units))}, "limit": 2, "cache": "none",
        "timeout": 30, "max_concurrency": 8, "limits": limits,
        "data": {"autode": str(dataset("autode"))}}
    path = folder / "sweep.json"
    path.write_text(json.dumps(doc))
    return path


@needs("autode")
def test_the_simulated_users_provider_is_limited_across_the_sweep(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    with FakeOpenAIServer(responder(asking_assistant, calls)) as assistant, \
            FakeOpenAIServer(responder(asking_assistant), latency=0.2) as user:
        manifest = load_plan(_autode_plan(tmp_path, assistant.base_url, user.base_url, 4,
                                          {"openai/user": 2}))
        assert [groups_of(manifest, u) for u in manifest.units] == [{"openai/user"}] * 4
        results = run_local(manifest, workers=4)
    assert {r["state"] for r in results} == {"done"}, results
    # 4 units x 2 samples each ask the user agent once, 0.2 s per answer: 8 could overlap
    assert user.requests == 8 and user.max_in_flight == 2


@needs("autode")
def test_index_gives_each_unit_its_share_of_a_user_provider(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder(asking_assistant)) as assistant, \
            FakeOpenAIServer(responder(asking_assistant), latency=0.2) as user:
        manifest = load_plan(_autode_plan(tmp_path, assistant.base_url, user.base_url, 4,
                                          {"openai/user": 4}))
        share = slots(manifest, manifest.units, len(manifest.units))
        assert shares(manifest, manifest.units[0], share) == {"openai/user": [None, 1]}
        result = run_one(manifest, 0)  # 4 // 4 units: one user call at a time
    assert result["state"] == "done" and user.requests == 2 and user.max_in_flight == 1


def test_groups_of_reads_user_models_and_judge_configs(tmp_path: Path) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"name": "j", "kind": "tooleval-pass",
                                 "model": "anthropic/claude-x"}))
    manifest = expand({"models": ["openai/a", "oracle"], "benchmarks": {"demo": {}},
                       "limits": {"openai": 8, "anthropic": 4}}, base=tmp_path)
    unit = manifest.units[0]
    assert groups_of(manifest, unit) == {"openai"}
    assert groups_of(manifest, manifest.units[1]) == set()  # oracle: not limited
    unit.options = {**unit.options, "user_model": "anthropic/u"}
    assert groups_of(manifest, unit) == {"openai", "anthropic"}
    unit.options = {"judge_config": str(judge)}
    assert groups_of(manifest, unit) == {"openai", "anthropic"}
    # fixed shares (Ray, --index): the unit's own group at its concurrency, a judge's at
    # limit // units using it
    assert shares(manifest, unit, {"openai": 2, "anthropic": 3}) == {
        "anthropic": [None, 1], "openai": [None, 4]}


def _kill_a_worker(run_dir: Path, srv: FakeOpenAIServer, stop: threading.Event,
                   peaks: list[int]) -> None:
    """SIGKILL the worker running ``run_dir`` once it has finished a sample (its pid is in
    the run's lock file), while it holds provider permits. The requests it had sent are
    still served for up to the latency after its death (the kernel freed its permits at
    once, as a provider goes on with an abandoned request): the peak is counted again after."""
    while not stop.is_set():
        if len(sample_keys(run_dir)) >= 1:
            pid = (run_dir / ".lock").read_text().strip()
            if pid.isdigit():
                os.kill(int(pid), signal.SIGKILL)
                peaks.append(srv.max_in_flight)
                time.sleep(srv.latency + 0.05)
                srv.max_in_flight = srv.in_flight
                return
        time.sleep(0.01)


def test_a_killed_worker_frees_its_permits_and_its_unit_resumes(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.1) as srv:
        manifest = load_plan(write_plan(tmp_path, srv.base_url, units=4, limit=2,
                                        max_concurrency=2))
        target = Path(manifest.units[0].run_dir)
        stop, peaks = threading.Event(), []
        watcher = threading.Thread(target=_kill_a_worker, args=(target, srv, stop, peaks))
        watcher.start()
        try:
            results = run_local(manifest, workers=2)
        finally:
            stop.set()
            watcher.join()
    assert peaks, "the worker was not killed"
    # a permit the dead worker held and never gave back would have left 1 (or 0) of the 2
    # for the rest of the sweep: it finishes, with both used and never more
    assert sorted(r["index"] for r in results) == [0, 1, 2, 3]
    assert {r["state"] for r in results} == {"done"}, results
    assert peaks[0] <= 2 and srv.max_in_flight == 2
    for u in manifest.units:
        keys = sample_keys(u.run_dir)
        assert len(keys) == len(set(keys)) == 6  # resumed: no sample run twice
