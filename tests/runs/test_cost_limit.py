"""``--cost-limit``: a run stops once its calls cost that much, keeps what finished, says how to
resume, and the resume finishes it; a model without a price is refused before anything runs.
The price table is the fixture's (tests/fixtures/prices: made-up numbers), put where the pinned
one would be downloaded to, so nothing here reaches the network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.testing.openai_server import FakeOpenAIServer, default_responder

from toolscore.cli import app
from toolscore.data import cache_root
from toolscore.models.prices import SOURCE, TABLE_FILE
from toolscore.records import RunStore
from toolscore.runs.api import evaluate, resume
from toolscore.runs.costlimit import CostGuard, parse_cost_limit
from toolscore.runs.stopped import RunStopped

FIXTURE = Path(__file__).parents[1] / "fixtures" / "prices" / TABLE_FILE
SAMPLES = 6  # the demo benchmark's


@pytest.fixture
def table() -> Path:
    """The fixture table in the (private) user cache, where ``toolscore data prices`` puts
    the pinned one."""
    folder = cache_root() / "data" / SOURCE.name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE, folder / TABLE_FILE)
    yield folder
    shutil.rmtree(folder)


def test_a_run_that_reaches_the_limit_stops_and_its_resume_finishes(table: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(default_responder) as srv:
        with pytest.raises(RunStopped) as stopped:
            evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None, out=out,
                     embedder="hashing", max_concurrency=1, cost_limit=0.05)
        facts = stopped.value.facts
        message = str(stopped.value)
        assert message.startswith("cost limit $0.05 reached (spent $0.")
        assert "LiteLLM" in message and "resume with: toolscore run demo --resume" in message
        kept = RunStore(out).finished()
        assert 0 < facts.kept == len(kept) < facts.total == SAMPLES
        assert not (out / "scores.json").exists()  # not scored until it is complete
        records = list(RunStore(out).latest().values())
        assert all(r["status"] == "ok" for r in records)
        assert {r["usage_by_role"]["assistant"]["model"] for r in records} == {"openai/fake"}
        # one sample at a time: it stopped at the first sample that took the spend past $0.05
        spent = sum(0.0001 * r["usage"]["input_tokens"] + 0.0004 * r["usage"]["output_tokens"]
                    for r in records)
        last = records[-1]["usage"]
        assert spent >= 0.05 > spent - (0.0001 * last["input_tokens"]
                                        + 0.0004 * last["output_tokens"])

        run = resume(out)  # no limit this time: the rest runs, what was kept is not rerun
    assert run.summary is not None and run.summary["run_now"] == SAMPLES - facts.kept
    assert len(RunStore(out).finished()) == SAMPLES and (out / "scores.json").exists()


def test_cli_stops_with_one_line_and_exit_3_then_resumes(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    runner = CliRunner()
    with FakeOpenAIServer(default_responder) as srv:
        res = runner.invoke(app, ["run", "demo", "--model", "openai/fake", "--base-url",
                                  srv.base_url, "--no-cache", "--embedder", "hashing",
                                  "--max-concurrency", "2", "--out", str(out),
                                  "--cost-limit", "0.05"])
        assert res.exit_code == 3, res.output
        (line,) = [x for x in res.stderr.splitlines() if x.strip()]
        assert line.startswith("stopped: cost limit $0.05 reached")
        assert line.endswith(f"resume with: toolscore run demo --resume {out}")
        # resumed with a limit already spent by the earlier calls: this command's own calls
        # count, so a small new limit still lets it finish a sample or more
        res = runner.invoke(app, ["run", "demo", "--resume", str(out), "--cost-limit", "5",
                                  "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)["summary"]
    assert summary["samples"] == SAMPLES and 0 < summary["spent_usd"] < 5
    res = runner.invoke(app, ["run", "demo", "--resume", str(out), "--cost-limit", "5"])
    assert res.exit_code == 0 and "spent $0.0000 on this command's model calls" in res.stdout
    res = runner.invoke(app, ["report", str(out), "--json"])
    cost = json.loads(res.stdout)["cost"]
    assert cost["complete"] and cost["total"] > 0.05
    assert cost["prices"]["date"] and cost["prices"]["source"].startswith("LiteLLM")


def test_an_unpriced_model_is_refused_before_anything_runs(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "demo", "--model", "openai/unknown-model",
                                   "--base-url", "http://127.0.0.1:9/v1", "--no-cache",
                                   "--embedder", "hashing", "--out", str(out),
                                   "--cost-limit", "1"])
    assert res.exit_code == 2, res.output
    (line,) = [x for x in res.stderr.splitlines() if x.strip()]
    assert line.startswith("error: --cost-limit: the assistant model openai/unknown-model has "
                           "no price")
    assert not out.exists()
    # a price file gives it one (here the limit is never reached: the run is not started, as
    # nothing listens at the address; the check came first)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"unknown-model": {"input_per_mtok": 1,
                                                    "output_per_mtok": 2}}))
    res = CliRunner().invoke(app, ["run", "demo", "--model", "openai/unknown-model",
                                   "--base-url", "http://127.0.0.1:9/v1", "--no-cache",
                                   "--embedder", "hashing", "--out", str(out),
                                   "--cost-limit", "1", "--prices", str(prices)])
    assert "--cost-limit" not in res.output


def test_without_the_table_a_cost_limit_says_how_to_get_it(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import toolscore.data

    def offline(source: object, timeout: float = 60.0) -> Path:
        raise OSError("offline")

    monkeypatch.setattr(toolscore.data, "fetch", offline)
    res = CliRunner().invoke(app, ["run", "demo", "--model", "openai/gpt-4o", "--base-url",
                                   "http://127.0.0.1:9/v1", "--no-cache", "--embedder",
                                   "hashing", "--out", str(tmp_path / "run"),
                                   "--cost-limit", "1"])
    assert res.exit_code == 2, res.output
    assert "toolscore data prices" in res.stderr and not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["0", "-1", "lots", "inf", "nan"])
def test_a_bad_limit_is_one_line(value: str) -> None:
    with pytest.raises(ValueError, match="--cost-limit"):
        parse_cost_limit(value)
    assert parse_cost_limit("$2.50") == 2.5


def test_cached_replies_cost_nothing_now_and_an_unpriced_call_stops(table: Path) -> None:
    from toolscore.models.prices import price_table
    from toolscore.types import Usage

    guard = CostGuard(limit=1.0, table=price_table())
    guard("assistant", "openai/fake", Usage(input_tokens=1000, output_tokens=0, calls=1))
    assert guard.spent == pytest.approx(0.1) and not guard.reached
    guard("assistant", "openai/fake", Usage(input_tokens=10**6, cached_calls=1))
    assert guard.spent == pytest.approx(0.1)
    guard("judge", "openai/other", Usage(input_tokens=1, calls=1))
    assert guard.reached and "judge model openai/other is not in the price table" \
        in guard.reason()


def test_workers_keep_to_shares_of_the_limit(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(default_responder) as srv:
        with pytest.raises(RunStopped, match=r"cost limit \$0\.05 reached \(2 workers each "
                           r"keeping to \$0\.025, one spent") as stopped:
            evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None, out=out,
                     embedder="hashing", max_concurrency=2, workers=2, cost_limit=0.05)
        assert 0 < stopped.value.facts.kept < SAMPLES
        resume(out, workers=2)
    assert len(RunStore(out).finished()) == SAMPLES


def test_the_models_checked_before_a_run() -> None:
    from toolscore.runs.costlimit import run_models

    assert run_models("openai/a", {}) == {"assistant": "openai/a"}
    assert run_models("openai/a", {"user_model": "same as assistant"}) == {
        "assistant": "openai/a", "user": "openai/a"}
    # a judge is checked by its model, never by the name of its kind or configuration
    assert run_models("openai/a", {"judge_id": "pass-v1"}) == {"assistant": "openai/a"}
    assert run_models("none", {"judge_id": "pass-v1", "judge_config": {
        "model": "openai/judge"}}) == {"judge": "openai/judge"}
