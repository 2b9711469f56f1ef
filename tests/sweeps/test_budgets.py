"""Rate budgets of a sweep (``limits: {openai: {concurrency: 16, rpm: 600, tpm: 200000}}``) and
of a single run (``--rpm``, ``--tpm``): read and checked with the plan, shared whole by the
local pool's workers, split in fixed shares where units share no machine; and a sweep against
a server enforcing 600 requests and 200,000 tokens a minute stays under both (not one 429,
no failed sample) in about the time the budget allows."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.testing.rate_server import RateLimitedServer
from sweeps.plans import demo_oracle, write_plan

from toolscore.sweeps.limits import shares, slots
from toolscore.sweeps.local import run_local, shared_settings
from toolscore.sweeps.manifest import Manifest
from toolscore.sweeps.plan import PlanError, expand, load_plan

BUDGET = {"concurrency": 16, "rpm": 600, "tpm": 200_000}


def _plan(tmp_path: Path, limits: dict[str, object], units: int = 2) -> Manifest:
    return load_plan(write_plan(tmp_path, "http://127.0.0.1:9/v1", units=units, limits=limits))


def test_a_limit_takes_a_budget_beside_its_plain_form(tmp_path: Path) -> None:
    manifest = _plan(tmp_path, {"openai": BUDGET, "anthropic": 4})
    assert manifest.limits == {"openai": 16, "anthropic": 4}
    assert manifest.budgets == {"openai": {"rpm": 600.0, "tpm": 200_000.0}}
    doc = manifest.to_dict()  # a manifest says it as the plan did, and reads back the same
    assert doc["limits"] == {"openai": {"concurrency": 16, "rpm": 600.0, "tpm": 200_000.0},
                             "anthropic": 4}
    again = Manifest.from_dict(json.loads(json.dumps(doc)), "m.json", tmp_path)
    assert (again.limits, again.budgets) == (manifest.limits, manifest.budgets)
    only = _plan(tmp_path, {"openai": {"rpm": 60}})  # no connection limit but the runs' own
    assert only.limits["openai"] >= 4096 and only.budgets == {"openai": {"rpm": 60.0}}


@pytest.mark.parametrize(("limit", "message"), [
    ({"rpm": 600, "rps": 10}, "limits.openai.rps': unknown (known: concurrency, rpm, tpm)"),
    ({"rpm": 0}, "limits.openai.rpm'"),
    ({"tpm": "lots"}, "limits.openai.tpm'"),
    ({"concurrency": 0}, "limits.openai.concurrency'"),
])
def test_a_bad_budget_is_one_line_naming_the_field(tmp_path: Path, limit: dict[str, object],
                                                    message: str) -> None:
    with pytest.raises(PlanError, match=message.replace(".", r"\.").replace("(", r"\(")
                       .replace(")", r"\)")):
        _plan(tmp_path, {"openai": limit})


def test_the_local_pool_shares_the_whole_budget_and_fixed_shares_split_it(
        tmp_path: Path) -> None:
    manifest = _plan(tmp_path, {"openai": BUDGET}, units=4)
    limits = shared_settings(manifest, tmp_path)["limits"]
    assert limits == {"openai": [str(tmp_path / "0.lock"), 16, 600.0, 200_000.0]}
    group_slots = slots(manifest, manifest.units, 4)
    assert shares(manifest, manifest.units[0], group_slots) == {
        "openai": [None, 4, 150.0, 50_000.0]}
    plain = expand({**json.loads((tmp_path / "sweep.json").read_text()),
                    "limits": {"openai": 16}}, "plan", tmp_path)
    assert shares(plain, plain.units[0], group_slots) == {"openai": [None, 4]}


def test_a_sweep_stays_within_the_servers_rpm_and_tpm_in_the_time_they_allow(
        tmp_path: Path) -> None:
    oracle = demo_oracle()
    units = 4  # 4 x 16 requests of ~316 tokens: ~64 requests and ~20,000 tokens
    with RateLimitedServer(oracle.responder, rpm=600, tpm=200_000, latency=0.05,
                           keep_requests=False) as srv:
        manifest = load_plan(write_plan(tmp_path, srv.base_url, units=units,
                                        limits={"openai": BUDGET}, max_concurrency=8))
        results = run_local(manifest, workers=2)
    assert [r["state"] for r in results] == ["done"] * units, results
    assert srv.throttled == 0 and len(srv.accepted) == units * oracle.calls
    tokens = sum(cost for _, cost in srv.accepted)
    ideal = max(len(srv.accepted) / (600 / 60), tokens / (200_000 / 60))
    # from the first request to the last, at the server: the budget's time, give or take
    # its first second (the server's bucket starts full, the sweep's nearly empty)
    assert ideal * 0.8 < srv.span() < ideal * 1.1, (srv.span(), ideal)


@pytest.mark.parametrize("workers", [
    [],
    # worker processes that do not inherit this one's memory take the budget from the
    # environment: a spawned worker shares it as a forked one does
    ["--workers", "2"]], ids=["one process", "spawned workers"])
def test_run_takes_rpm_and_tpm_for_its_models_provider(tmp_path: Path,
                                                      workers: list[str]) -> None:
    oracle = demo_oracle()
    with RateLimitedServer(oracle.responder, rpm=300, tpm=200_000, keep_requests=False) as srv:
        started = time.monotonic()
        doc = json_doc(toolscore("run", "demo", "--model", "openai/fake", "--base-url",
                                 srv.base_url, "--no-cache", "--embedder", "hashing",
                                 "--rpm", "300", "--tpm", "200000", "--out", "run", "--json",
                                 *workers, cwd=tmp_path,
                                 env={"OPENAI_API_KEY": "dummy",
                                      "TOOLSCORE_START_METHOD": "spawn"}))
        took = time.monotonic() - started
    assert doc["metrics"]["errors"] == 0 and srv.throttled == 0
    assert len(srv.accepted) == oracle.calls and took > (oracle.calls - 1) / 5


def test_a_bad_rpm_is_one_line(tmp_path: Path) -> None:
    assert_user_error(toolscore("run", "demo", "--model", "oracle", "--embedder", "hashing",
                                "--rpm", "fast", cwd=tmp_path), "--rpm 'fast'")
