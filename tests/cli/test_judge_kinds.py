"""``toolscore judge RUN --judge KIND`` with kinds other than ToolEval's: an ACS run's rows
judged again by acs-llm (against a fake OpenAI endpoint) and by acs-verify, each a run in
``RUN/judgements/<name>/``; a kind that cannot judge a run says why in one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.testing.openai_server import FakeOpenAIServer, text_responder

import toolscore
from toolscore.benchmarks.acs.data import COLUMNS
from toolscore.cli import app

ROWS = [("r1", "Plan 3 meals", "Breakfast 500 kcal, lunch 700 kcal, dinner 800 kcal.",
         "total calories at least 1900", "1", "meal-planning"),
        ("r2", "Plan 3 meals", "Breakfast 500 kcal, lunch 700 kcal, dinner 800 kcal.",
         "total calories at most 1500", "0", "meal-planning"),
        ("r3", "Plan my week", "Monday: 30 min run. Tuesday: 45 min run.",
         "total running time at least 60 minutes", "1", "workout-routine_cardio")]


@pytest.fixture(scope="module")
def acs_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("acs")
    rows = root / "rows.csv"
    with rows.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        w.writerows(ROWS)
    out = root / "run"
    toolscore.evaluate("acs", None, csv=rows, resamples=0, cache=None, out=out)
    return out


def judge(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["judge", *args])
    return res.exit_code, res.stdout, res.stderr


def test_acs_llm_judges_the_rows_of_an_acs_run(acs_run: Path) -> None:
    with FakeOpenAIServer(text_responder('{"satisfied": true}')) as srv:
        code, out, err = judge(str(acs_run), "--judge", "acs-llm", "--model", "openai/fake",
                               "--base-url", srv.base_url, "--no-cache", "--json")
        asked = len(srv.received)
    assert code == 0, err
    doc = json.loads(out)
    where = acs_run / "judgements" / "acs-llm"
    assert Path(doc["run_dir"]) == where and (where / "run.json").is_file()
    assert doc["config"]["benchmark"] == "acs" and doc["config"]["model"] == "openai/fake"
    assert doc["config"]["options"]["judge"] == "llm"
    assert doc["config"]["options"]["resamples"] == 0  # read as the judged run read them
    judged = toolscore.load_run(where)
    assert asked == len(ROWS)
    assert {r["id"] for r in judged.records} == {r["id"] for r in toolscore.load_run(
        acs_run).records}
    assert all(r["output"]["label"] is True for r in judged.records)
    assert {r["id"]: r["scores"]["correct"] for r in judged.records} == {
        "r1": True, "r2": False, "r3": True}
    # the judged run is untouched
    assert all(r["output"]["judge"] == "acs-verify" for r in toolscore.load_run(
        acs_run).records)


def test_acs_verify_needs_no_model_and_kind_options_pass_through(acs_run: Path) -> None:
    code, out, err = judge(str(acs_run), "--judge", "acs-verify", "--name", "verified",
                           "-T", "group=none", "--no-cache", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["config"]["options"]["judge"] == "acs-verify"
    assert doc["config"]["options"]["group"] == "none"
    assert Path(doc["run_dir"]) == acs_run / "judgements" / "verified"


def test_a_kind_that_cannot_judge_the_run_says_why_in_one_line(acs_run: Path,
                                                               tmp_path: Path) -> None:
    code, _, err = judge(str(acs_run), "--judge", "tooleval-pref", "--model", "openai/fake")
    assert code == 2 and "compares two runs" in err and len(err.strip().splitlines()) == 1
    code, _, err = judge(str(acs_run), "--judge", "acs-llm", "-T", "shots")
    assert code == 2 and "KEY=VALUE" in err
    code, _, err = judge(str(acs_run), "--judge", "acs-llm", "-T", "no_such=1",
                         "--model", "openai/fake")
    assert code == 2 and "no_such" in err and len(err.strip().splitlines()) == 1


def test_a_judge_config_of_kind_acs_llm_names_the_judgements(acs_run: Path,
                                                             tmp_path: Path) -> None:
    with FakeOpenAIServer(text_responder('{"satisfied": false}')) as srv:
        config = tmp_path / "judge.json"
        config.write_text(json.dumps({"name": "strict-acs", "kind": "acs-llm",
                                      "model": "openai/fake", "base_url": srv.base_url}))
        code, out, err = judge(str(acs_run), "--judge", "acs-llm", "--judge-config",
                               str(config), "--no-cache", "--json")
        asked = len(srv.received)
    assert code == 0, err
    doc = json.loads(out)
    assert Path(doc["run_dir"]) == acs_run / "judgements" / "strict-acs"
    assert asked == len(ROWS)
    records = toolscore.load_run(doc["run_dir"]).records
    assert all(r["output"]["label"] is False for r in records)
    assert all(r["output"]["judge_config"]["name"] == "strict-acs" for r in records)
    code, _, err = judge(str(acs_run), "--judge", "acs-verify", "--judge-config", str(config))
    assert code == 2 and "'acs-llm' cannot be used here" in err
