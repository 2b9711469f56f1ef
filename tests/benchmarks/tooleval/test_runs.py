"""ToolEval on toolscore's own runs: a demo oracle run directory as solution paths, its pass rate
with a configured judge served over HTTP, and AutoDE / unfinished / failed records."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion
from support.tooleval import judge_server
from support.tooleval_release import write_release

from toolscore.benchmarks.tooleval.from_runs import is_run_dir, load_run, load_run_report
from toolscore.benchmarks.tooleval.passrate import judge_once, pass_rate
from toolscore.judges.registry import load_judge_config, make_llm_judge
from toolscore.types import Message


def toolscore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    # ToolBench's evaluator files where a download puts them (generated from the recorded values)
    write_release(cwd / "xdg-cache" / "toolscore" / "data" / "tooleval")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("demo")
    done = toolscore("run", "demo", "--model", "oracle", "--embedder", "hashing", "--out",
                     str(cwd / "run"), cwd=cwd)
    assert done.returncode == 0, done.stderr[-2000:]
    return cwd / "run"




def test_demo_run_as_solution_paths(demo_run: Path) -> None:
    assert is_run_dir(demo_run) and not is_run_dir(demo_run / "samples.jsonl")
    samples, notes = load_run_report(demo_run)
    assert notes["benchmark"] == "demo" and notes["model"] == "oracle"
    assert notes["skipped_errors"] == [] and len(samples) == notes["samples"] == 6
    by = {s.query_id: s for s in samples}
    two = by["demo-shopping-list"]  # two user turns, one call each
    assert two.query == "Add a dozen eggs to my shopping list.\nWhat is on my list now?"
    assert two.subset == "demo" and two.answer is not None and two.answer.method == "oracle"
    roles = [(st.role, st.name) for st in two.answer.path]
    assert roles == [("user", None), ("tool", "AddItem"), ("assistant", None), ("user", None),
                     ("tool", "ListItems"), ("assistant", None), ("tool", "Finish")]
    add = two.answer.path[1]
    assert json.loads(add.arguments or "")["quantity"] == 12
    assert json.loads(add.content)["response"]["item_id"]  # the tool's result, matched by id
    assert two.answer.finished and not two.answer.gave_up
    assert two.answer.text == two.answer.path[5].content
    names = {t["function"]["name"] for t in two.available_tools}
    assert {"AddItem", "ListItems", "CreateNote"} <= names
    assert all(t["function"]["description"] for t in two.available_tools)


def test_pass_rate_over_demo_run_with_configured_judge(demo_run: Path, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge_server(seen)) as srv:
        cfg_path = tmp_path / "judge.json"
        cfg_path.write_text(json.dumps({"name": "pass", "kind": "tooleval-pass",
                                        "model": "openai/fake", "base_url": srv.base_url,
                                        "votes": 1, "template": "Grade strictly."}))
        cfg = load_judge_config(cfg_path)
        judge = make_llm_judge(cfg)
        result = asyncio.run(pass_rate(judge, load_run(demo_run), votes=cfg.votes or 1,
                                       mode="stable"))
    passed = {r.query_id: r.passed for r in result.results}
    assert passed.pop("demo-delete-note") is False  # "Deleted ..." is unsolved, task solvable
    assert all(passed.values()) and len(passed) == 5
    assert result.judge == cfg.id
    verdicts = [v for r in result.results for j in r.judgements for v in j.verdicts]
    assert verdicts and {v.judge for v in verdicts} == {cfg.id}
    assert {r["messages"][0]["content"] for r in seen} == {"Grade strictly."}


def test_cli_passrate_on_run_dir_with_judge_config(demo_run: Path, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge_server(seen)) as srv:
        (tmp_path / "judge.yaml").write_text(
            f"name: demo-pass\nkind: tooleval-pass\nmodel: openai/fake\nbase_url: "
            f"{srv.base_url}\nvotes: 3\ntemperature: 0.2\n")
        done = toolscore("tooleval", "passrate", str(demo_run), "--judge-config", "judge.yaml",
                         "--mode", "stable", "--json", "--out", "judged", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    ident = load_judge_config(tmp_path / "judge.yaml").identity()
    assert doc["judge"] == ident["id"] == "demo-pass (tooleval-pass, openai/fake, built-in " \
                                          "template)"
    assert doc["judge_config"]["votes"] == 3 and doc["votes"] == 3
    assert doc["overall"]["queries"] == 6 and doc["overall"]["passed"] == 5
    assert doc["overall"]["pass_rate"] == pytest.approx(5 / 6)
    assert {r.get("temperature") for r in seen} == {0.2}
    assert (tmp_path / doc["run_dir"]).resolve() == (tmp_path / "judged").resolve()
    rows = [json.loads(x)["output"] for x in
            (tmp_path / "judged" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and {r["judge"] for r in rows} == {ident["id"]}
    assert {v["judge"] for r in rows for j in r["judgements"] for v in j["verdicts"]} == {
        ident["id"]}


def test_cli_judge_config_of_the_wrong_kind_and_no_judge(demo_run: Path, tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text("name: v\nkind: acs-verify\n")
    done = toolscore("tooleval", "passrate", str(demo_run), "--judge-config", "v.yaml",
                     cwd=tmp_path)
    assert done.returncode == 2 and "field 'kind'" in done.stderr
    assert "tooleval-pass" in done.stderr
    done = toolscore("tooleval", "passrate", str(demo_run), cwd=tmp_path)
    assert done.returncode == 2 and "--judge-config" in done.stderr


def _write_run(path: Path, benchmark: str, records: list[dict[str, Any]]) -> Path:
    path.mkdir()
    (path / "run.json").write_text(json.dumps({
        "benchmark": benchmark, "model": "openai/m",
        "request": {"benchmark": benchmark, "data": str(path / "no-data"), "options": {}}}))
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_autode_records_errors_and_unfinished_turns(tmp_path: Path, demo_run: Path) -> None:
    autode = _write_run(tmp_path / "autode", "autode", [
        {"id": "u1", "epoch": 0, "status": "ok", "output": {
            "mode": "dynamic", "api": "BookTable",
            "content": [{"role": "User", "message": "Book a table for two."},
                        {"role": "Assistant", "message": "At what time?"},
                        {"role": "User", "message": "At 7pm."}],
            "state": "success", "called_api": "BookTable",
            "arguments": '{"people": 2, "time": "19:00"}'}},
        {"id": "u2", "epoch": 0, "status": "error", "error": "infrastructure: 503"},
    ])
    samples, notes = load_run_report(autode)
    assert notes["skipped_errors"] == ["u2"] and len(samples) == 1
    s = samples[0]
    assert s.query == "Book a table for two.\nAt 7pm." and s.subset == "autode"
    assert s.answer is not None and s.answer.finished
    assert [(st.role, st.name) for st in s.answer.path] == [
        ("user", None), ("assistant", None), ("user", None), ("tool", "BookTable"),
        ("tool", "Finish")]
    assert s.answer.text == 'BookTable({"people": 2, "time": "19:00"})'
    assert s.available_tools[0]["function"]["name"] == "BookTable"

    # a demo record whose last turn hit the call limit has no Finish: fails without a judge
    records = [json.loads(x) for x in (demo_run / "samples.jsonl").read_text().splitlines()]
    rec = next(r for r in records if r["id"] == "demo-add-item")
    rec["output"]["turns"][-1]["stop"] = "max_calls"
    rec["output"]["turns"][-1]["transcript"] = rec["output"]["turns"][-1]["transcript"][:2]
    run = tmp_path / "cut"
    run.mkdir()
    (run / "run.json").write_text((demo_run / "run.json").read_text())
    (run / "samples.jsonl").write_text(json.dumps(rec) + "\n")
    [cut] = load_run(run)
    assert cut.answer is not None and not cut.answer.finished
    judgement = asyncio.run(judge_once(None, cut))  # type: ignore[arg-type]  # no judge call
    assert (judgement.outcome, judgement.why) == ("fail", "no Finish call")


def test_cli_winrate_between_two_runs_with_a_preference_judge(demo_run: Path,
                                                              tmp_path: Path) -> None:
    """The same run against itself: every query ties (both pass, both orders pick "A")."""
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        user = request["messages"][1]["content"]
        text = ('{"reason": "r", "preference": "A"}' if '"preference"' in user else
                '{"reason": "r", "answer_status": "Solved"}')
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=3)

    with FakeOpenAIServer(responder) as srv:
        (tmp_path / "pref.yaml").write_text(f"name: pref\nkind: tooleval-pref\nmodel: "
                                            f"openai/fake\nbase_url: {srv.base_url}\nvotes: 1\n")
        done = toolscore("tooleval", "winrate", str(demo_run), str(demo_run), "--judge-config",
                         "pref.yaml", "--mode", "stable", "--json", "--out", "w", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["judge"].startswith("pref (tooleval-pref, openai/fake")
    assert doc["judge_config"]["name"] == "pref"
    assert doc["overall"]["queries"] == 6 and doc["overall"]["ties"] == 6
    assert doc["overall"]["position_bias"]["first_shown_pick_rate"] == 1.0
    rows = [json.loads(x)["output"] for x in
            (tmp_path / "w" / "samples.jsonl").read_text().splitlines()]
    assert {r["judge"] for r in rows} == {doc["judge"]}
