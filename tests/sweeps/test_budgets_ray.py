"""A rate budget on Ray is the cluster's: one actor per budgeted provider holds its buckets
and every task is charged to it, so a plan of 4 units against a server enforcing 600 requests
and 200,000 tokens a minute gets not one 429 and takes about the budget's time, whichever
units run at once; the permits stay fixed shares (Ray resources)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.testing.rate_server import RateLimitedServer
from sweeps.plans import demo_oracle, write_plan

from toolscore.sweeps.limits import slots
from toolscore.sweeps.plan import load_plan
from toolscore.sweeps.ray_executor import cluster_settings, run_ray

ray = pytest.importorskip("ray")
BUDGET = {"concurrency": 16, "rpm": 600, "tpm": 200_000}


def test_a_task_takes_its_share_of_permits_and_the_whole_budget_at_its_keeper(
        tmp_path: Path) -> None:
    manifest = load_plan(write_plan(tmp_path, "http://127.0.0.1:9/v1", units=4,
                                    limits={"openai": BUDGET}))
    how = cluster_settings(manifest, manifest.units[0], slots(manifest, manifest.units, 4),
                           "r1")
    assert how["limits"] == {"openai": [None, 4, 600.0, 200_000.0,
                                        "toolscore-budget-r1-openai"]}


def test_a_ray_sweep_stays_within_the_servers_rpm_and_tpm(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    oracle = demo_oracle()
    with RateLimitedServer(oracle.responder, rpm=600, tpm=200_000, latency=0.05,
                           keep_requests=False) as srv:
        manifest = load_plan(write_plan(tmp_path, srv.base_url, units=4,
                                        limits={"openai": BUDGET}, max_concurrency=8))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 resources={"provider:openai": 16})
        try:
            results = run_ray(manifest)
        finally:
            ray.shutdown()
    assert [r["state"] for r in results] == ["done"] * 4, results
    assert srv.throttled == 0 and len(srv.accepted) == 4 * oracle.calls
    tokens = sum(cost for _, cost in srv.accepted)
    ideal = max(len(srv.accepted) / (600 / 60), tokens / (200_000 / 60))
    assert ideal * 0.8 < srv.span() < ideal * 1.1, (srv.span(), ideal)
