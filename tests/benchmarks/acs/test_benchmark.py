"""ACS as a benchmark: ``toolscore run acs`` writes a run directory whose scores.json is the
agreement document of ``judge-agreement``; an LLM judge under test through the run's model,
with scripted replies (right, wrong, re-asked, unreadable, infrastructure failure); rescoring
and resuming reproduce the scores."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer, text_responder

from toolscore.benchmarks.acs.benchmark import ACSBenchmark
from toolscore.benchmarks.acs.data import COLUMNS, DEV_FILE
from toolscore.benchmarks.acs.prompt import RETRY_PROMPT
from toolscore.benchmarks.base import OptionError
from toolscore.benchmarks.registry import make_benchmark
from toolscore.entrypoints import JUDGES
from toolscore.judges.registry import LLM, JudgeKind
from toolscore.runs.api import evaluate, load_run, resume, score

SRC = Path(__file__).resolve().parents[3] / "src"


def toolscore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@needs("acs")
def test_run_acs_verify_from_the_cli_is_judge_agreement(tmp_path: Path) -> None:
    """No --model: acs-verify needs none. 322/322 rows decided and right (on the rows its rules
    were written from), and scores.json is exactly judge-agreement's document."""
    done = toolscore("run", "acs", "--out", "run", "--resamples", "200", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["config"]["model"] == "none" and doc["run_dir"] == "run"
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores == doc["metrics"]
    overall = scores["report"]["overall"]
    assert (scores["rows"], scores["requests"], scores["errors"], scores["abstentions"]) == (
        322, 80, 0, 0)
    assert (overall["n"], overall["decided"]) == (322, 322)
    assert overall["metrics"]["coverage"]["value"] == overall["metrics"]["accuracy"]["value"] == 1
    assert scores["baseline_always_satisfied"] == pytest.approx(189 / 322)
    alias = toolscore("judge-agreement", "--resamples", "200", "--json", cwd=tmp_path)
    assert alias.returncode == 0, alias.stderr[-2000:]
    assert json.loads(alias.stdout) == scores
    records = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text()
               .splitlines()]
    assert len(records) == 322 and all(r["scores"]["correct"] for r in records)
    assert {r["meta"]["split"] for r in records} == set(scores["report"]["groups"])
    # rescoring under another grouping is a what-if: the run's own scores stay as they are
    kind = toolscore("score", "run", "-T", "group=kind", "--json", cwd=tmp_path)
    assert kind.returncode == 0, kind.stderr[-2000:]
    assert "tonnage" in json.loads(kind.stdout)["metrics"]["report"]["groups"]
    assert json.loads((tmp_path / "run" / "scores.json").read_text()) == scores


@needs("acs")
def test_summary_says_how_the_judge_ran_and_the_dev_set_caveat(tmp_path: Path) -> None:
    bench = make_benchmark("acs", dataset("acs"), resamples=0)
    run = evaluate(bench, None, out=tmp_path / "run", limit=12, cache=None)
    lines = ACSBenchmark.summary_lines(run.metrics or {})
    assert lines[0].startswith("judge acs-verify (deterministic) on 12 rows")
    assert any(line.startswith("caveat: acs-verify's rules were written while reading "
                               "acs_dev.csv") for line in lines)
    rows = ACSBenchmark.headline_rows(run.metrics or {})
    assert rows["overall"]["n"] == 12 and rows["overall"]["accuracy"] == 1.0
    view = bench.record_view(run.records[0])
    assert view["summary"].endswith("(right)") and view["messages"][0]["role"] == "user"
    assert "## Constraint" in view["messages"][0]["content"]


# -- an LLM judge under test, scripted -------------------------------------------------------
ROWS = [  # (row_id, request, constraint, human label)
    ("1", "req A", "C-right: the plan must span 3 days.", "1"),
    ("2", "req A", "C-wrong: the plan must have 3 meals a day.", "1"),
    ("3", "req B", "C-reask: each session must last 30 minutes.", "0"),
    ("4", "req B", "C-unreadable: each session must burn 300 calories.", "0"),
    ("5", "req C", "C-down: the schedule must include 8 hours of sleep.", "1"),
]


def write_acs(folder: Path, rows: list[tuple[str, str, str, str]] = ROWS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / DEV_FILE).open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        w.writeheader()
        for rid, request, constraint, label in rows:
            w.writerow({"row_id": rid, "user_request": request,
                        "agent_response": f"response to {request}", "constraint": constraint,
                        "is_constraint_satisfied": label, "domain": "schedule"})
    return folder


def judged(request: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(request["messages"])
                if m["role"] == "user" and m["content"].startswith("## User"))


def scripted(request: dict[str, Any]) -> dict[str, Any]:
    row = judged(request)
    reasked = request["messages"][-1]["content"].startswith(RETRY_PROMPT.split("(")[0])
    if "C-right" in row:
        text = '3 days listed.\n{"reasoning": "3 = 3", "satisfied": true}'
    elif "C-wrong" in row:
        text = '{"reasoning": "I count 2 meals", "satisfied": false}'
    elif "C-reask" in row:
        text = '{"satisfied": false}' if reasked else "Looks fine overall."
    elif "C-down" in row:  # once the endpoint is back
        text = '{"satisfied": true}'
    else:  # C-unreadable
        text = "Hard to say."
    return text_responder(text)(request)


class DownFor(FakeOpenAIServer):
    """Answers 400 (not retried) to requests about constraints containing ``marker``."""

    def __init__(self, responder: Any, marker: str | None, port: int = 0) -> None:
        super().__init__(responder, port=port)
        self.marker = marker

    async def handle_chat(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.marker is not None and self.marker in judged(request):
            return 400, {"error": {"message": "bad request (injected)", "code": "bad"}}
        return await super().handle_chat(request)


def test_llm_judge_run_scores_right_wrong_reask_abstention_and_error(tmp_path: Path) -> None:
    data = write_acs(tmp_path / "acs")
    out = tmp_path / "run"
    with DownFor(scripted, "C-down") as srv:
        run = evaluate("acs", "openai/fake", data=data, out=out, base_url=srv.base_url,
                       cache=None, judge="llm", resamples=100, group="none")
        port = int(srv.base_url.split(":")[-1].split("/")[0])
    m = run.metrics or {}
    assert (m["judge"], m["rows"], m["requests"], m["errors"], m["abstentions"]) == (
        "openai/fake", 5, 3, 1, 1)
    overall = m["report"]["overall"]
    assert (overall["n"], overall["decided"], overall["positives"]) == (4, 3, 2)
    values = {k: v["value"] for k, v in overall["metrics"].items()}
    assert values["coverage"] == pytest.approx(3 / 4)
    assert values["accuracy"] == pytest.approx(2 / 3)  # right, wrong, re-asked then right
    assert values["accuracy_all"] == pytest.approx(2 / 4)  # the abstention counts as wrong
    assert values["accuracy_pos"] == pytest.approx(1 / 2) and values["accuracy_neg"] == 1.0
    assert m["baseline_always_satisfied"] == pytest.approx(2 / 4)  # the error is left out

    by = {r["id"]: r for r in run.records}
    assert by["1"]["output"]["label"] is True and by["1"]["output"]["reason"] == "3 = 3"
    assert by["2"]["scores"] == {"human": True, "label": False, "correct": False,
                                 "abstained": False, "decided": True}
    reask = by["3"]["output"]["votes"][0]
    assert by["3"]["scores"]["correct"] and reask["raw"] == ["Looks fine overall.",
                                                              '{"satisfied": false}']
    four = by["4"]
    assert four["status"] == "ok" and four["scores"]["abstained"]
    assert four["output"]["votes"][0]["raw"] == ["Hard to say."] * 3
    assert "unparseable verdict after 3 attempt(s)" in four["output"]["votes"][0]["error"]
    assert by["5"]["status"] == "error" and by["5"]["error"].startswith("infrastructure")
    assert all(set(r["usage_by_role"]) == {"judge"} for r in run.records if r["id"] != "5")
    assert run.config.model == "openai/fake" and run.config.options["judge"] == "llm"

    # rescoring from the stored outputs (no model) gives the same scores.json, byte for byte
    before = (out / "scores.json").read_bytes()
    again = score(out)
    assert (out / "scores.json").read_bytes() == before and again.metrics == m

    # the infrastructure error is retried on resume (run.json names the endpoint, so the
    # server comes back on the same port); the other rows are kept as they were
    with DownFor(scripted, None, port=port) as srv:
        resumed = resume(out)
        served = srv.requests
    assert served == 1 and resumed.summary is not None and resumed.summary["skipped"] == 4
    assert by_id(resumed)["5"]["scores"]["correct"] and by_id(resumed)["1"] == by["1"]
    assert (resumed.metrics or {})["errors"] == 0 and (resumed.metrics or {})["rows"] == 5
    assert load_run(out).metrics == resumed.metrics


def by_id(run: Any) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in run.records}


def test_votes_and_few_shots_through_the_run(tmp_path: Path) -> None:
    """Three votes per row (the majority decides, the seed varies per vote) and two examples
    from the other half of the requests, never the judged row's own."""
    rows = [(f"{q}{c}", f"request {q}", f"constraint {c} of {q}", str((q + c) % 2))
            for q in range(4) for c in range(3)]
    data = write_acs(tmp_path / "acs", rows)
    seen: list[dict[str, Any]] = []

    def vote(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return text_responder('{"satisfied": %s}' % (
            "true" if request.get("seed", 0) % 2 == 0 else "false"))(request)

    with FakeOpenAIServer(vote) as srv:
        run = evaluate("acs", "openai/fake", data=data, out=tmp_path / "run", cache=None,
                       base_url=srv.base_url, judge="llm", votes=3, shots=2, seed=4,
                       temperature=0.5, resamples=0)
    assert len(seen) == 12 * 3 and {r["seed"] for r in seen} == {4, 5, 6}
    assert {r["temperature"] for r in seen} == {0.5}
    texts = {r["id"]: r for r in run.records}
    for rid, request, _, _ in rows:
        out = texts[rid]["output"]
        assert [v["label"] for v in out["votes"]] == [True, False, True]  # seeds 4, 5, 6
        assert out["label"] is True and out["reason"].startswith("2/3 votes")
        assert len(out["shots"]) == 2
        assert all(next(r for r in rows if r[0] == s)[1] != request for s in out["shots"])
    assert all([m["role"] for m in r["messages"]] == ["system", "user", "assistant", "user",
                                                      "assistant", "user"] for r in seen)
    assert (run.metrics or {})["votes"] == 3 and (run.metrics or {})["shots"] == 2


def test_options_that_do_not_fit_are_one_line_errors(tmp_path: Path) -> None:
    data = write_acs(tmp_path / "acs")
    with pytest.raises(OptionError, match="apply to LLM judges, not acs-verify"):
        make_benchmark("acs", data, shots=2)
    with pytest.raises(OptionError, match="'group': 'colour' is not one of"):
        make_benchmark("acs", data, group="colour")
    with pytest.raises(ValueError, match="too few rows for 5 few-shot examples"):
        make_benchmark("acs", data, judge="llm", shots=5).check()
    JUDGES.register("other-llm", JudgeKind("other-llm", LLM, "yes / no", "another method's"))
    try:
        (tmp_path / "p.yaml").write_text("name: p\nkind: other-llm\nmodel: openai/m\n")
        with pytest.raises(ValueError, match="'kind': 'other-llm' cannot be used here"):
            make_benchmark("acs", data, judge_config=tmp_path / "p.yaml").check()
    finally:
        JUDGES.unregister("other-llm")
    assert not make_benchmark("acs", data).uses_model()
    assert make_benchmark("acs", data, judge="llm").uses_model()


@needs("acs")
def test_run_acs_with_the_runs_model_as_llm_judge_from_the_cli(tmp_path: Path) -> None:
    with FakeOpenAIServer(text_responder('{"satisfied": false}')) as srv:
        done = toolscore("run", "acs", "--judge", "llm", "--model", "openai/fake", "--base-url",
                         srv.base_url, "--shots", "3", "--limit", "6", "--no-cache",
                         "--resamples", "0", "--out", "run", "--json", cwd=tmp_path)
        received = list(srv.received)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout)["metrics"]
    assert (metrics["judge"], metrics["shots"], metrics["rows"], metrics["errors"]) == (
        "openai/fake", 3, 6, 0)
    assert metrics["report"]["overall"]["metrics"]["predicted_pos_rate"]["value"] == 0
    assert len(received) == 6 and all(len(r["messages"]) == 1 + 2 * 3 + 1 for r in received)
    config = json.loads((tmp_path / "run" / "run.json").read_text())
    assert config["benchmark_config"]["mode"] == "3-shot"
    assert config["benchmark_config"]["prompt_sha256"]
