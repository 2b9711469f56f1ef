"""The hybrid ACS judge: acs-verify, and where it cannot read a response an LLM's extraction
(scripted here by a fake OpenAI endpoint: a correct one, a malformed one, one with wrong
types) checked by acs-verify's own arithmetic."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer, text_responder

from toolscore.benchmarks.acs import hybrid
from toolscore.benchmarks.acs.data import COLUMNS, DEV_FILE
from toolscore.benchmarks.acs.verify import verify
from toolscore.benchmarks.acs.verify.constraints import parse_constraint
from toolscore.runs.api import evaluate, score

# Prose the parser cannot cut into sessions (no headers, lists or tables).
PROSE = ("On Mondays I would start with squats, five sets of five reps at one hundred kg, then "
         "finish with bench presses. Thursdays are for deadlifts and rows.")
GOOD = {"sessions": [
    {"title": "Monday", "exercises": [
        {"name": "Squat", "sets": 5, "reps": 5, "weight": 100, "weight_unit": "kg"},
        {"name": "Bench Press", "sets": 3, "reps": 8, "weight": 60}]},
    {"title": "Thursday", "exercises": [
        {"name": "Deadlift", "sets": 3, "reps": 5, "weight": 308.6, "weight_unit": "lb"},
        {"name": "Row", "sets": 3, "reps": 10, "weight": 50}]}]}
WRONG_TYPES = {"sessions": [{"title": "Monday", "exercises": [
    {"name": "Squat", "sets": "five", "reps": 5, "weight": 100}]}]}


def _request(req: dict[str, Any]) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def responder(req: dict[str, Any]) -> dict[str, Any]:
    """Replies by the response under extraction: GOOD (in a code fence), garbage, wrong types."""
    user = _request(req)
    if "Mondays" in user:
        text = "```json\n" + json.dumps(GOOD) + "\n```"
    elif "Tuesdays" in user:
        text = '{"sessions": [{"title": "Tue", "exercises": [],}]}'
    else:
        text = json.dumps(WRONG_TYPES)
    return text_responder(text)(req)


def test_parse_extraction_accepts_the_schema_and_names_what_is_wrong() -> None:
    ok = hybrid.parse_extraction("Here:\n" + json.dumps(GOOD), "sessions")
    assert isinstance(ok, hybrid.Extraction) and len(ok.sessions) == 2
    assert hybrid.parse_extraction('{"sessions": [', "sessions") == "no JSON object"
    assert hybrid.parse_extraction('{"sessions": [1,]}', "sessions").startswith("invalid JSON")
    wrong = hybrid.parse_extraction(json.dumps(WRONG_TYPES), "sessions")
    assert isinstance(wrong, str) and "sessions.0.exercises.0.sets" in wrong
    assert hybrid.parse_extraction('{"days": []}', "sessions") == "no 'sessions' list"
    assert hybrid.parse_extraction('{"entries": [{"start": "9am", "activity": "work"}]}',
                                   "entries").startswith("entries.0.start")


def test_code_does_the_arithmetic_on_the_extraction() -> None:
    ex = hybrid.parse_extraction(json.dumps(GOOD), "sessions")
    assert isinstance(ex, hybrid.Extraction)
    c = parse_constraint("Total lifting tonnage per session must be at least 3000 kg", "",
                         "workout-routine_strength")
    v = hybrid.decide(c, ex)
    # 5*5*100 + 3*8*60 = 3940; 3*5*308.6 lb (= 2099.8... kg) + 3*10*50 = 3599.8...
    assert v.label is True and v.values["values"][0] == 3940
    assert v.values["values"][1] == pytest.approx(3 * 5 * 308.6 * 0.45359237 + 1500)
    c2 = parse_constraint("Each workout session must include 3 exercises.", "",
                          "workout-routine_strength")
    assert hybrid.decide(c2, ex).label is False
    c3 = parse_constraint("Each workout session must last 60 minutes.", "",
                          "workout-routine_strength")
    assert hybrid.decide(c3, ex).label is None  # no minutes extracted: abstain, not guess
    meals = hybrid.parse_extraction(json.dumps({"days": [{"title": "Day 1", "meals": [
        {"name": "Lunch", "items": [{"name": "rice", "calories": 600, "protein_g": 12},
                                    {"name": "tofu", "calories": 300, "protein_g": 25.5}]}]}]}),
        "days")
    assert isinstance(meals, hybrid.Extraction)
    c4 = parse_constraint("The daily protein intake must be at least 37.5 grams.", "",
                          "meal-planning")
    assert hybrid.decide(c4, meals).label is True
    sched = hybrid.parse_extraction(json.dumps({"entries": [
        {"start": "09:00", "end": "17:00", "activity": "Work"},
        {"start": "23:00", "activity": "Sleep"}]}), "entries")
    assert isinstance(sched, hybrid.Extraction)
    c5 = parse_constraint("The schedule must include 8 hours of sleep.", "", "schedule")
    assert hybrid.decide(c5, sched).values["minutes"] == 600  # 23:00 until 09:00


def _write(folder: Path) -> Path:
    rows = [
        ("1", PROSE, "Number of workout sessions must be equal to 2", "1"),
        ("2", PROSE, "Total lifting tonnage per session must be at least 3000 kg", "1"),
        ("3", PROSE.replace("Mondays", "Tuesdays"), "Number of sessions must be equal to 2", "1"),
        ("4", PROSE.replace("Mondays", "Fridays"), "Number of sessions must be equal to 2", "1"),
        ("5", "**Session 1:**\n- Squat: 3 sets x 5 reps @ 100 kg",
         "Number of sessions must be equal to 1", "1"),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / DEV_FILE).open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        w.writeheader()
        for rid, response, constraint, label in rows:
            w.writerow({"row_id": rid, "user_request": "A strength plan, please.",
                        "agent_response": response, "constraint": constraint,
                        "is_constraint_satisfied": label,
                        "domain": "workout-routine_strength"})
    return folder


def test_hybrid_run_extracts_only_what_the_parser_cannot_read(tmp_path: Path) -> None:
    data = _write(tmp_path / "acs")
    assert verify("", PROSE, "Number of sessions must be equal to 2",
                  "workout-routine_strength").label is None  # the premise of this test
    with FakeOpenAIServer(responder) as srv:
        run = evaluate("acs", "openai/fake", data=data, out=tmp_path / "run",
                       base_url=srv.base_url, cache=None, judge="hybrid", resamples=0,
                       group="none")
        received = list(srv.received)
    by = {r["id"]: r["output"] for r in run.records}
    assert by["1"]["label"] is True and by["1"]["extracted_by"] == "llm"
    assert by["2"]["label"] is True and "from the LLM's extraction" in by["2"]["reason"]
    # malformed JSON, re-asked twice, stays malformed: an abstention with its reason
    assert by["3"]["label"] is None and len(by["3"]["raw"]) == 3
    assert by["3"]["reason"].startswith("unusable extraction after 3 attempt(s): invalid JSON")
    # wrong types: validated away, an abstention naming the field
    assert by["4"]["label"] is None and "sets" in by["4"]["reason"]
    assert by["5"] == {"judge": "hybrid(openai/fake)", "label": True,
                       "reason": by["5"]["reason"], "extracted_by": "parser"}
    # one extraction per response (rows 1 and 2 share one), none for the parsed row 5
    assert len(received) == 1 + 3 + 3
    m = run.metrics or {}
    assert m["how"].startswith("hybrid") and m["extracted_by_llm"] == 4
    assert m["abstentions"] == 2 and m["errors"] == 0
    assert run.config.options["judge"] == "hybrid"
    assert run.config.benchmark_config["mode"].startswith("hybrid")
    again = score(tmp_path / "run")  # rescoring from stored outputs: no model, same figures
    assert again.metrics == run.metrics
