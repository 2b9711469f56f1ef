"""Tokens per model role: the runner's per-sample ledger, the AutoDE user agent counted as
"user", price tables, and reports over old records that have no split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_autode_run import DATA, USER_HEAD, asking_assistant, responder

from toolscore.runs.session import RunRequest, start_run
from toolscore.runs.store import RunStore
from toolscore.testing.openai_server import FakeOpenAIServer

needs_autode = pytest.mark.skipif(not (DATA / "data_v1_2.jsonl").is_file(),
                                  reason="AutoDE data not found")


def _autode_run(tmp_path: Path, requests: list[dict[str, Any]], **options: Any) -> Path:
    with FakeOpenAIServer(responder(asking_assistant, requests)) as srv:
        request = RunRequest(benchmark="autode", model="openai/fake", data=DATA, limit=2,
                             max_concurrency=4, cache=None, base_url=srv.base_url,
                             options={"mode": "dynamic", **options})
        return Path(start_run(request, tmp_path / "run")["run_dir"])


@needs_autode
@pytest.mark.parametrize("separate_user", [False, True])
def test_autode_dynamic_splits_assistant_and_user_tokens(tmp_path: Path,
                                                         separate_user: bool) -> None:
    requests: list[dict[str, Any]] = []
    options = {"user_model": "openai/fake", "user_cache": None} if separate_user else {}
    if separate_user:  # the user agent's own client reaches the same fake server
        with FakeOpenAIServer(responder(asking_assistant, requests)) as srv:
            options["user_base_url"] = srv.base_url
            run_dir = _autode_run(tmp_path, requests, **options)
    else:
        run_dir = _autode_run(tmp_path, requests)
    records = list(RunStore(run_dir).latest().values())
    assert len(records) == 2
    for r in records:
        roles = r["usage_by_role"]
        assert set(roles) == {"assistant", "user"}
        assert roles["assistant"]["calls"] == 2 and roles["user"]["calls"] == 1
        assert roles["user"]["input_tokens"] > 0 and roles["assistant"]["input_tokens"] > 0
        # the user's tokens are the ones the protocol saw its user agent spend
        assert roles["user"]["input_tokens"] == r["output"]["user_usage"]["input_tokens"]
        assert roles["user"]["output_tokens"] == r["output"]["user_usage"]["output_tokens"]
        for key in ("input_tokens", "output_tokens", "calls"):
            assert r["usage"][key] == roles["assistant"][key] + roles["user"][key]
    user_requests = [q for q in requests if q["messages"][0]["content"].startswith(USER_HEAD)]
    assert len(user_requests) == 2 and len(requests) == 6
