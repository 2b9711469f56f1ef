"""``toolscore run tooleval`` end to end (subprocesses against a scripted judge server): the run
directory it writes is reported, rescored strictly, compared and exported like any other; the
``tooleval passrate`` alias writes the same run; win rate reuses tooleval runs' pass labels."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion
from support.tooleval_release import write_release

from toolscore.types import Message

pytestmark = needs("tooleval")


def toolscore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_CACHE_HOME"] = str(cwd / "xdg-cache")
    # ToolBench's evaluator files where a download puts them (generated from the recorded values)
    write_release(cwd / "xdg-cache" / "toolscore" / "data" / "tooleval")
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def judge(seen: list[dict[str, Any]]) -> Any:
    """Solved when the answer has a digit, else Unsolved; tasks with "weather" unsolvable;
    preference: the attempt whose answer is longer."""
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        user = request["messages"][1]["content"]
        if '"preference"' in user:
            a = user.split("Final answer A:\n")[1].split("=== Attempt B")[0]
            b = user.split("Final answer B:\n")[1]
            text = f'{{"reason": "r", "preference": "{"A" if len(a) >= len(b) else "B"}"}}'
        elif '"task_status"' in user:
            label = "Unsolvable" if "weather" in user.lower() else "Solvable"
            text = f'{{"reason": "r", "task_status": "{label}"}}'
        else:
            answer = user.split("Final answer given to the user:\n")[1]
            label = "Solved" if any(ch.isdigit() for ch in answer.split("\n\n")[0]) else \
                "Unsolved"
            text = f'{{"reason": "r", "answer_status": "{label}"}}'
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=4)
    return responder


def test_run_tooleval_report_score_compare_export(tmp_path: Path) -> None:
    answers = dataset("tooleval") / "converted" / "gpt-3.5-turbo_CoT"
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge(seen)) as srv:
        common = ("--model", "openai/fake", "--base-url", srv.base_url, "--answers",
                  str(answers), "--subset", "G1_tool", "--subset", "G3_instruction",
                  "--per-subset", "6", "--votes", "2", "--mode", "stable", "--json")
        done = toolscore("run", "tooleval", *common, "--out", "a", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        alias = toolscore("tooleval", "passrate", str(answers), "--judge", "openai/fake",
                          "--base-url", srv.base_url, "--subset", "G1_tool", "--subset",
                          "G3_instruction", "--limit", "6", "--votes", "2", "--mode", "stable",
                          "--json", "--out",
                          "b", cwd=tmp_path)
        assert alias.returncode == 0, alias.stderr[-2000:]
    doc = json.loads(done.stdout)
    metrics = doc["metrics"]
    assert doc["config"]["benchmark"] == "tooleval" and doc["config"]["model"] == "openai/fake"
    assert doc["config"]["benchmark_config"]["mode"] == "stable"
    assert set(metrics["subsets"]) == {"G1_tool", "G3_instruction"}
    assert metrics["overall"]["queries"] == 12 and metrics["overall"]["errors"] == 0
    assert doc["summary"]["tokens_by_role"].keys() == {"judge"}
    # the alias wrote the same run: same numbers (its second run was served from cache)
    adoc = json.loads(alias.stdout)
    assert adoc["overall"] == metrics["overall"] and adoc["subsets"] == metrics["subsets"]
    assert adoc["usage"]["cached_calls"] == adoc["usage"]["calls"] + adoc["usage"][
        "cached_calls"] == metrics["usage"]["calls"]

    report = toolscore("report", "a", "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-2000:]
    assert json.loads(report.stdout)["metrics"] == metrics
    shown = toolscore("report", "a", cwd=tmp_path)
    assert shown.returncode == 0 and "pass rate" in shown.stdout and "G1_tool" in shown.stdout

    strict = toolscore("score", "a", "-T", "strict=true", "--json", cwd=tmp_path)
    assert strict.returncode == 0, strict.stderr[-2000:]
    smetrics = json.loads(strict.stdout)["metrics"]
    assert smetrics["mode"] == "stable, strict"
    assert smetrics["overall"]["passed"] <= metrics["overall"]["passed"]
    assert json.loads((tmp_path / "a" / "scores.json").read_text()) == metrics  # untouched

    compare = toolscore("compare", "a", "b", "--json", cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr[-2000:]
    cdoc = json.loads(compare.stdout)
    assert cdoc["shared"] == 12
    assert cdoc["headline"] and cdoc["per_sample"]
    assert all(m["diff"] in (0, 0.0, None) for m in cdoc["headline"] + cdoc["per_sample"])

    export = toolscore("export", "a", "-f", "csv", "-o", "a.csv", cwd=tmp_path)
    assert export.returncode == 0, export.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "a.csv").open()))
    assert len(rows) == 12 and {r["split"] for r in rows} == {"G1_tool", "G3_instruction"}


def test_winrate_reuses_the_pass_labels_of_tooleval_runs(tmp_path: Path) -> None:
    answers = dataset("tooleval") / "converted" / "gpt-3.5-turbo_CoT"
    doc = json.loads((answers / "G1_tool.json").read_text())
    for rec in doc.values():  # the reference model gave up everywhere
        rec["answer"]["final_answer"] = '{"return_type": "give_up_and_restart"}'
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "G1_tool.json").write_text(json.dumps(doc))
    seen: list[dict[str, Any]] = []
    with FakeOpenAIServer(judge(seen)) as srv:
        common = ("--judge", "openai/fake", "--base-url", srv.base_url, "--subset", "G1_tool",
                  "--limit", "10", "--votes", "1", "--mode", "stable", "--no-cache", "--json")
        direct = toolscore("tooleval", "winrate", str(answers), "ref", *common, "--out", "w1",
                           cwd=tmp_path)
        assert direct.returncode == 0, direct.stderr[-2000:]
        for side, path in (("cand", str(answers)), ("refrun", "ref")):
            done = toolscore("tooleval", "passrate", path, *common, "--out", side,
                             cwd=tmp_path)
            assert done.returncode == 0, done.stderr[-2000:]
        before = len(seen)
        reused = toolscore("tooleval", "winrate", "cand", "refrun", *common, "--out", "w2",
                           cwd=tmp_path)
        assert reused.returncode == 0, reused.stderr[-2000:]
        asked = [r["messages"][1]["content"] for r in seen[before:]]
    one, two = json.loads(direct.stdout), json.loads(reused.stdout)
    assert one["overall"] == two["overall"] and one["pass_rate"] == two["pass_rate"]
    assert one["overall"]["queries"] == 10 and one["overall"]["errors"] == 0
    assert one["overall"]["wins"] > 0
    # with both labels stored, no pass-rate judgement was asked again (the task question is
    # only ever asked by the pass-rate judge)
    assert not any('"task_status"' in text for text in asked)
    records = [json.loads(x) for x in (tmp_path / "w2" / "samples.jsonl").read_text()
               .splitlines()]
    assert {r["output"]["candidate"]["source"] for r in records} == {"run"}
    assert json.loads((tmp_path / "w2" / "run.json").read_text())["benchmark"] == \
        "tooleval-winrate"
