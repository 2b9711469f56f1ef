"""``sweep run --index I --slots N``: a job array's task takes its fair share of each provider
limit, ``limit // min(N, limit, units using it)`` permits (at least 1), and plays
``min(max_concurrency, share)`` samples at once; the arithmetic, then the command against the
fake server counting what is in flight."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.testing.openai_server import FakeOpenAIServer
from sweeps.plans import demo_oracle, write_plan

from toolscore.sweeps.limits import concurrency, shares, slots
from toolscore.sweeps.local import settings
from toolscore.sweeps.plan import Manifest, expand

KEY = {"OPENAI_API_KEY": "dummy"}


def _plan(tmp_path: Path, units: int, limits: dict[str, int], max_concurrency: int = 8,
          **benchmark: str) -> Manifest:
    return expand({"models": ["openai/a"], "benchmarks": {"demo": dict(benchmark)},
                   "settings": {"seed": list(range(units))}, "limits": limits,
                   "max_concurrency": max_concurrency}, base=tmp_path)


@pytest.mark.parametrize(("tasks", "permits", "in_flight"), [
    (8, 2, 2),     # --array=0-399%8: 8 x 2 = the 16 permits, 2 samples each
    (2, 8, 8),     # 16 // 2 = 8, and max_concurrency 8 allows all of it
    (1, 16, 8),    # one task at a time: all 16 permits, cut to its own max_concurrency 8
    (3, 5, 5),     # floor(16 / 3); 3 x 5 = 15 <= 16
    (16, 1, 1),
    (32, 1, 1),    # more tasks than permits: still 1 each (S = min(N, limit) = 16)
    (400, 1, 1),   # every unit at once: what --index gave before --slots
])
def test_share_of_a_limit_for_n_tasks_at_once(tmp_path: Path, tasks: int, permits: int,
                                              in_flight: int) -> None:
    manifest = _plan(tmp_path, 400, {"openai": 16})
    unit = manifest.units[123]
    at_once = slots(manifest, manifest.units, tasks)
    assert at_once == {"openai": min(tasks, 16)}
    assert shares(manifest, unit, at_once) == {"openai": [None, in_flight]}
    assert concurrency(manifest, unit, at_once) == in_flight
    assert settings(manifest, unit, at_once)["max_concurrency"] == in_flight
    assert max(1, 16 // at_once["openai"]) == permits


def test_a_provider_few_units_use_is_divided_among_those_only(tmp_path: Path) -> None:
    # 10 units; the judge's provider is limited to 6; only the 2 units naming it use it
    manifest = expand({"models": ["openai/a"], "benchmarks": {"demo": {}},
                       "settings": {"seed": list(range(10))},
                       "limits": {"openai": 20, "anthropic": 6},
                       "max_concurrency": 4}, base=tmp_path)
    for u in manifest.units[:2]:
        u.options = {**u.options, "user_model": "anthropic/u"}
    at_once = slots(manifest, manifest.units, 5)
    assert at_once == {"openai": 5, "anthropic": 2}
    # openai: 20 // 5 = 4 permits, its own concurrency min(4, 4); anthropic: 6 // 2 = 3
    assert shares(manifest, manifest.units[0], at_once) == {"anthropic": [None, 3],
                                                            "openai": [None, 4]}
    assert shares(manifest, manifest.units[5], at_once) == {"openai": [None, 4]}


def test_an_unlimited_model_keeps_its_own_concurrency(tmp_path: Path) -> None:
    manifest = _plan(tmp_path, 40, {"anthropic": 4}, max_concurrency=6)
    at_once = slots(manifest, manifest.units, 8)
    assert at_once == {}
    assert settings(manifest, manifest.units[0], at_once) == {
        "max_concurrency": 6, "cache": manifest.cache, "timeout": manifest.timeout,
        "limits": {}}


def test_index_with_slots_uses_its_share_through_the_command(tmp_path: Path) -> None:
    oracle = demo_oracle()
    with FakeOpenAIServer(oracle.responder, latency=0.1) as srv:
        plan = write_plan(tmp_path, srv.base_url, units=4, limit=4, max_concurrency=8)
        # 2 tasks at once: 4 // 2 = 2 permits and 2 samples in flight (not 1: 4 units)
        done = toolscore("sweep", "run", str(plan), "--index", "0", "--slots", "2", "--json",
                         cwd=tmp_path, env=KEY)
        doc = json_doc(done)
        unit = doc["units"][0]
        assert (unit["state"], unit["max_concurrency"], unit["permits"]) == (
            "done", 2, {"openai": 2})
        assert srv.max_in_flight == 2 and srv.requests == oracle.calls
        srv.max_in_flight = 0
        # one task at a time: all 4 permits
        done = toolscore("sweep", "run", str(plan), "--index", "1", "--slots", "1",
                         cwd=tmp_path, env=KEY)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "concurrency 4, openai permits 4" in done.stderr
        assert srv.max_in_flight == 4


def test_index_and_slots_go_together(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, "http://127.0.0.1:9/v1", units=2, limit=4)
    assert_user_error(toolscore("sweep", "run", str(plan), "--index", "0", cwd=tmp_path,
                                env=KEY), "--index I and --slots N go together")
    assert_user_error(toolscore("sweep", "run", str(plan), "--slots", "2", cwd=tmp_path,
                                env=KEY), "--slots applies to --index")
    assert_user_error(toolscore("sweep", "run", str(plan), "--index", "0", "--slots", "0",
                                cwd=tmp_path, env=KEY), "--slots 0: at least one task")
