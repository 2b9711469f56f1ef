"""Tokens per model role: the runner's per-sample ledger, the AutoDE user agent counted as
"user", price tables, and reports over old records that have no split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.autode import USER_HEAD, asking_assistant, responder
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer

from toolscore.cli import app
from toolscore.records import RunStore
from toolscore.report.overview import run_overview
from toolscore.report.usage import load_prices
from toolscore.runs.api import evaluate


def _autode_run(tmp_path: Path, requests: list[dict[str, Any]], **options: Any) -> Path:
    with FakeOpenAIServer(responder(asking_assistant, requests)) as srv:
        result = evaluate("autode", "openai/fake", data=dataset("autode"), limit=2,
                          max_concurrency=4, cache=None, base_url=srv.base_url,
                          out=tmp_path / "run", mode="dynamic", strict=True,
                          **options).to_dict()
    roles = result["summary"]["tokens_by_role"]
    assert set(roles) == {"assistant", "user"}
    assert sum(roles.values()) == result["summary"]["tokens"]
    return Path(result["run_dir"])


@needs("autode")
@pytest.mark.parametrize("separate_user", [False, True])
def test_autode_dynamic_splits_assistant_and_user_tokens(tmp_path: Path,
                                                         separate_user: bool) -> None:
    requests: list[dict[str, Any]] = []
    options = {"user_model": "openai/fake"} if separate_user else {}
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


def _write_run(path: Path, records: list[dict[str, Any]], **config: Any) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "autode", "model": "openai/gpt-x", "epochs": 1,
                        "benchmark_config": {"mode": "dynamic", "user_model": "openai/user-y"},
                        **config})
    for r in records:
        store.append(r)
    return path


def _usage(inp: int, out: int, calls: int = 1) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "calls": calls, "cached_calls": 0,
            "latency_s": 0.0}


NEW = {"id": "a", "epoch": 0, "status": "ok", "scores": {"f1": 1.0},
       "usage": _usage(3_000_000, 1_000_000, 3),
       "usage_by_role": {"assistant": _usage(2_000_000, 500_000, 2),
                         "user": _usage(1_000_000, 500_000, 1)}}
OLD = {"id": "b", "epoch": 0, "status": "ok", "scores": {"f1": 0.0},
       "usage": _usage(100, 10), "output": {"user_usage": _usage(40, 4)}}


def test_price_arithmetic_and_unpriced_models(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", [NEW])
    prices = {"openai/gpt-x": {"input_per_mtok": 2.5, "output_per_mtok": 10}}
    doc = run_overview(run, prices=prices)
    a = doc["cost"]["by_role"]["assistant"]
    assert a["input_cost"] == pytest.approx(5.0) and a["output_cost"] == pytest.approx(5.0)
    assert doc["cost"]["by_role"]["user"] == {"model": "openai/user-y", "priced": False,
                                              "cost": None}
    assert doc["cost"]["total"] == pytest.approx(10.0) and not doc["cost"]["complete"]
    assert doc["cost"]["unpriced"] == [{"role": "user", "model": "openai/user-y",
                                        "tokens": 1_500_000}]
    # a bare model name prices "provider/model"; now everything is priced
    prices["user-y"] = {"input_per_mtok": 1, "output_per_mtok": 2}
    doc = run_overview(run, prices=prices)
    assert doc["cost"]["by_role"]["user"]["cost"] == pytest.approx(1.0 + 1.0)
    assert doc["cost"]["total"] == pytest.approx(12.0) and doc["cost"]["complete"]
    assert doc["usage_by_role"]["user"]["tokens"] == 1_500_000
    assert doc["usage"]["tokens"] == 4_000_000


def test_price_file_json_yaml_and_errors(tmp_path: Path) -> None:
    table = {"m": {"input_per_mtok": 1, "output_per_mtok": 0.5}}
    (tmp_path / "p.json").write_text(json.dumps(table))
    (tmp_path / "p.yaml").write_text("m:\n  input_per_mtok: 1\n  output_per_mtok: 0.5\n")
    assert load_prices(tmp_path / "p.json") == load_prices(tmp_path / "p.yaml") == {
        "m": {"input_per_mtok": 1.0, "output_per_mtok": 0.5}}
    (tmp_path / "bad.json").write_text(json.dumps({"m": {"input_per_mtok": "cheap"}}))
    with pytest.raises(ValueError, match="input_per_mtok must be a number"):
        load_prices(tmp_path / "bad.json")


def test_old_records_without_split_still_report(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", [OLD, NEW])
    doc = run_overview(run)
    roles = doc["usage_by_role"]
    assert roles["assistant"]["input_tokens"] == 2_000_100
    assert roles["user"]["input_tokens"] == 1_000_040
    # no price table here and no --prices: every role is unpriced (never $0), and the
    # report says how to get the table
    assert {r: c["cost"] for r, c in doc["cost"]["by_role"].items()} == {
        "assistant": None, "user": None}
    assert doc["cost"]["total"] is None and not doc["cost"]["complete"]
    assert "toolscore data prices" in doc["cost"]["prices"]["missing"]
    assert doc["usage"]["tokens"] == sum(r["tokens"] for r in roles.values())


def test_report_cli_prices(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", [NEW])
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-x": {"input_per_mtok": 1, "output_per_mtok": 1}}))
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(run), "--prices", str(prices), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["cost"]["by_role"]["assistant"]["cost"] == pytest.approx(2.5)
    assert doc["cost"]["unpriced"][0]["role"] == "user"
    res = runner.invoke(app, ["report", str(run), "--prices", str(prices),
                              "--html", str(tmp_path / "r.html")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "unpriced: user model openai/user-y" in res.stdout
    assert "│ assistant │ openai/gpt-x" in res.stdout
    html = (tmp_path / "r.html").read_text()
    assert "per model role" in html and "unpriced" in html
    res = runner.invoke(app, ["report", str(run), "--prices", str(tmp_path / "none.json")])
    assert res.exit_code == 2
