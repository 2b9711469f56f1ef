"""Our simulator against ToolTalk's own, call by call, on runs made with ToolTalk's runner.

``tooltalk-reference`` holds what ToolTalk's simulator returned for every call of an oracle (the
ground truth) and of a real small model (malformed calls, wrong ids, bad timestamps, extra
calls). Every one of those responses and exceptions is what a model read next, so ours must be
identical. The same folder also tells which recorded ground-truth results ToolTalk's simulator
itself does not return (``support.tooltalk.ANNOTATION_ERRORS``). A small world of our own checks
the replay's protocol (reset, earlier ground truth, the turn's calls in order), the command, and
one by one the reference's texts and orders that the real model's calls brought to light.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.data import dataset, needs
from support.tooltalk import ANNOTATION_ERRORS, toy_env

from toolscore.benchmarks.tooltalk.predictions import PredictionFormatError
from toolscore.benchmarks.tooltalk.replay import replay_directory


# -- the reference runs ---------------------------------------------------------------------------
@needs("tooltalk", "tooltalk-reference")
@pytest.mark.parametrize("folder, calls", [("oracle", 266), ("smollm2-exact", 381)])
def test_every_call_of_a_reference_run_replays_identically(folder, calls):
    report = replay_directory(dataset("tooltalk-reference") / folder, dataset("tooltalk"))
    assert report.files == 78
    assert [d.to_dict() for d in report.differences[:3]] == []
    assert report.calls == report.identical == calls


@needs("tooltalk-reference")
def test_known_recorded_data_differences_are_tooltalks_own():
    """Where ToolTalk's simulator, given the ground-truth calls, does not return the recorded
    result: exactly the calls listed in ANNOTATION_ERRORS (37)."""
    differing = set()
    for path in sorted((dataset("tooltalk-reference") / "oracle").glob("*/*.json")):
        data = json.loads(path.read_text())
        for t, turn in enumerate(data["conversation"]):
            calls = [p for p in turn.get("predictions", []) if p.get("role") == "api"]
            truths = turn.get("apis", [])
            assert [c["request"] for c in calls] == [c["request"] for c in truths], (path, t)
            for i, (call, truth) in enumerate(zip(calls, truths, strict=True)):
                if (call["response"], call["exception"]) != (truth["response"],
                                                             truth["exception"]):
                    differing.add((path.name, t, i))
    assert differing == set(ANNOTATION_ERRORS)
    assert len(differing) == 37


@needs("tooltalk", "tooltalk-reference")
def test_replay_command_json_end_to_end(tmp_path):
    doc = json_doc(toolscore("tooltalk", "replay", str(dataset("tooltalk-reference") /
                                                        "smollm2-exact"), "--json", cwd=tmp_path))
    assert (doc["calls"], doc["identical"], doc["differences"]) == (381, 381, [])
    assert doc["skipped"] == ["easy_error_types.json", "hard_error_types.json"]


@needs("tooltalk", "tooltalk-reference")
def test_replay_command_lists_a_doctored_call(tmp_path):
    source = dataset("tooltalk-reference") / "smollm2-exact" / "easy" / "DeleteAlarm-easy.json"
    folder = tmp_path / "run"
    folder.mkdir()
    data = json.loads(source.read_text())
    turn = data["conversation"][1]
    call = next(p for p in turn["predictions"] if p.get("exception"))
    recorded = call["exception"]
    call["exception"] = "doctored"
    (folder / "DeleteAlarm-easy.json").write_text(json.dumps(data))
    doc = json_doc(toolscore("tooltalk", "replay", "run", "--data",
                             str(dataset("tooltalk")), "--json", cwd=tmp_path))
    assert doc["identical"] == doc["calls"] - 1
    (diff,) = doc["differences"]
    assert diff["file"] == "DeleteAlarm-easy.json" and diff["turn"] == 1
    assert diff["api"] == "DeleteAlarm" and diff["request"] == call["request"]["parameters"]
    assert diff["expected"] == {"response": None, "exception": "doctored"}
    assert diff["got"] == {"response": None, "exception": recorded}
    table = toolscore("tooltalk", "replay", "run", cwd=tmp_path, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "1 different" in table.stdout and "doctored" in table.stdout


def test_replay_command_rejects_a_folder_without_predictions(tmp_path):
    (tmp_path / "empty").mkdir()
    world = _world(tmp_path)
    assert_user_error(toolscore("tooltalk", "replay", "empty", "--data", str(world),
                                cwd=tmp_path), "no ToolTalk prediction files")
    assert_user_error(toolscore("tooltalk", "replay", "missing", "--data", str(world),
                                cwd=tmp_path), "missing: not a directory")


# -- the protocol, on a world of our own ----------------------------------------------------------
def _world(tmp_path: Path) -> Path:
    """A dataset folder with one user (logged in by the conversation) and one alarm."""
    root = tmp_path / "tooltalk"
    (root / "databases").mkdir(parents=True)
    databases = {
        "Account": {"amy": {"username": "amy", "email": "a@x.org", "phone": "555-000-1111",
                            "name": "Amy", "password": "pw", "session_token": None}},
        "Alarm": {"amy": {"a-1": {"alarm_id": "a-1", "time": "09:00:00"}}},
    }
    for name, db in databases.items():
        (root / "databases" / f"{name}.json").write_text(json.dumps(db))
    return root


def _api(name: str, parameters: dict[str, Any] | None, response: Any = None,
         exception: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"request": {"api_name": name, "parameters": parameters}, "response": response,
            "exception": exception, **extra}


def _prediction_file(folder: Path, turns: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": "toy", "conversation_id": "1", "suites_used": ["Alarm"],
            "apis_used": ["AddAlarm"], "user": {"username": "amy", "session_token": "tok"},
            "metadata": {"timestamp": "2023-05-01 08:00:00"}, "conversation": turns,
            "metrics": {}}
    path = folder / "toy.json"
    path.write_text(json.dumps(data))
    return path


def test_each_turn_starts_from_the_ground_truth_and_predictions_run_in_order(tmp_path):
    """Turn 3 sees the ground-truth alarm of turn 1 (not turn 1's predictions), and its own
    predictions see each other: the second delete of the same alarm fails."""
    new = {"alarm_id": "5bff-dd80", "time": "07:00:00"}
    turns = [
        {"role": "user", "text": "wake me at 7"},
        {"role": "assistant", "text": "done", "apis": [_api("AddAlarm", {"time": "07:00:00"},
                                                            {"alarm_id": "5bff-dd80"})],
         "predictions": [
             _api("AddAlarm", {"time": "06:00:00", "session_token": "tok"},
                  {"alarm_id": "5bff-dd80"}, role="api"),
             _api("AddAlarm", {"time": "6am", "session_token": "tok"}, None,
                  "time data '6am' does not match format '%H:%M:%S'", role="api"),
             {"role": "assistant", "text": "done"}]},
        {"role": "user", "text": "list them, then delete the new one"},
        {"role": "assistant", "text": "done", "predictions": [
            _api("FindAlarms", {"session_token": "tok"},
                 {"alarms": [{"alarm_id": "a-1", "time": "09:00:00"}, new]}, role="api"),
            _api("DeleteAlarm", {"alarm_id": "5bff-dd80", "session_token": "tok"},
                 {"status": "success"}, role="api"),
            _api("DeleteAlarm", {"alarm_id": "5bff-dd80", "session_token": "tok"},
                 {"status": "success"}, role="api"),  # recorded wrongly on purpose
            _api("DeleteAlarm", {"session_token": "tok"}, None,
                 "DeleteAlarm.call() missing 1 required positional argument: 'alarm_id'",
                 role="api"),
            {"role": "assistant", "text": "done"}]},
    ]
    _prediction_file(tmp_path / "run" / "easy", turns)
    report = replay_directory(tmp_path / "run", _world(tmp_path))
    assert (report.files, report.calls, report.identical) == (1, 6, 5)
    (diff,) = report.differences
    assert (diff.file, diff.turn, diff.index, diff.api) == ("easy/toy.json", 3, 2, "DeleteAlarm")
    assert diff.got == {"response": None, "exception": "Alarm 5bff-dd80 not found."}
    assert diff.to_dict()["expected"] == {"response": {"status": "success"}, "exception": None}


def test_non_conversation_files_are_skipped_and_bad_ones_named(tmp_path):
    world = _world(tmp_path)
    folder = tmp_path / "run"
    _prediction_file(folder, [{"role": "user", "text": "hi"}])
    (folder / "summary.json").write_text(json.dumps({"over-trigger": 0}))
    report = replay_directory(folder, world)
    assert (report.files, report.calls, report.skipped) == (1, 0, ["summary.json"])
    shutil.copy(folder / "toy.json", folder / "bad.json")
    data = json.loads((folder / "bad.json").read_text())
    data["conversation"].append({"role": "assistant", "text": "", "predictions": [
        {"role": "api", "request": {"api_name": 3}}]})
    (folder / "bad.json").write_text(json.dumps(data))
    with pytest.raises(PredictionFormatError, match=r"bad.json: conversation\[1\]"
                                                    r".predictions\[0\].request.api_name"):
        replay_directory(folder, world)


# -- the reference simulator's texts and orders (what a model under test reads next) -------------
@pytest.mark.parametrize("name, arguments, exception", [
    ("AddReminder", {}, "AddReminder.call() missing 1 required positional argument: 'task'"),
    ("SendEmail", {"body": "b"},
     "SendEmail.call() missing 2 required positional arguments: 'to' and 'subject'"),
    ("CreateEvent", {"location": "x"},
     "CreateEvent.call() missing 4 required positional arguments: 'name', 'event_type', "
     "'start_time', and 'end_time'"),
    ("AddAlarm", {"time": "08:00:00", "snooze": True, "tone": "beep"},
     "AddAlarm.call() got an unexpected keyword argument 'snooze'"),
    ("AddAlarm", {"snooze": True}, "AddAlarm.call() got an unexpected keyword argument 'snooze'"),
    ("CurrentWeather", {"location": "Springfield", "env": 1},
     "CurrentWeather.call() got an unexpected keyword argument 'env'"),
    ("CurrentWeather", {"location": "Springfield", "session_token": "t"},
     "CurrentWeather.call() got an unexpected keyword argument 'session_token'"),
])
def test_argument_errors_name_the_reference_callable(name, arguments, exception):
    env = toy_env()
    before = env.state_hash()
    assert env.call(name, arguments).exception == exception
    assert env.state_hash() == before


@pytest.mark.parametrize("name, arguments, exception", [
    ("AddAlarm", {"time": "8:30"}, "time data '8:30' does not match format '%H:%M:%S'"),
    ("FindAlarms", {"start_range": "2023-05-01 08:00:00"},
     "time data '2023-05-01 08:00:00' does not match format '%H:%M:%S'"),
    ("QueryCalendar", {"start_time": "2023-05-01 08:00:00.88", "end_time": "2023-05-02"},
     "unconverted data remains: .88"),
    ("SearchInbox", {"start_date": "2023-05-01T08:00:00Z"},
     "time data '2023-05-01T08:00:00Z' does not match format '%Y-%m-%d %H:%M:%S'"),
    ("AddReminder", {"task": "t", "due_date": "2023-05-02"}, "Invalid due_date: 2023-05-02"),
    ("DeleteAlarm", {"alarm_id": "a-9"}, "Alarm a-9 not found."),
    ("DeleteEvent", {"event_id": "e-9"}, "Event e-9 not found."),
    ("ModifyEvent", {"event_id": "e-9", "new_name": "x"}, "Event e-9 not found."),
    ("DeleteReminder", {"reminder_id": "r-9"}, "Reminder r-9 not found in database"),
    ("CompleteReminder", {"reminder_id": "r-9"}, "Reminder r-9 not found in database"),
    ("CurrentWeather", {"location": "New York, London"},
     "Location new york, london not found in database"),
    ("HistoricWeather", {"location": "Gotham", "month": "May 2023"},
     "Location gotham not found in database"),
    ("HistoricWeather", {"location": "Springfield", "month": "December 2023"},
     "Historic weather data for springfield missing for month december 2023"),
])
def test_reference_exception_texts(name, arguments, exception):
    env = toy_env()
    env.db("HistoricWeather")["springfield"] = {"may": {"min_temp": 50}}
    # without an entry (an inbox: a non-empty one), these answer before parsing anything
    env.db("Calendar")["amy"] = {}
    env.db("Email")["amy"] = {"m": {"email_id": "m", "date": "2023-04-01 10:00:00",
                                    "sender": "bo@example.com", "receivers": [],
                                    "subject": "s", "body": "b"}}
    assert env.call(name, arguments).exception == exception


def test_completing_a_completed_reminder_fails():
    env = toy_env()
    assert env.call("CompleteReminder", {"reminder_id": "r-1"}).response == {"status": "success"}
    again = env.call("CompleteReminder", {"reminder_id": "r-1"})
    assert (again.response, again.exception) == (None, "Reminder r-1 already completed")
    env.db("HistoricWeather")["springfield"] = {"may": {"min_temp": 50}}
    assert env.call("HistoricWeather", {"location": "SPRINGFIELD", "month": "MAY"}
                    ).response == {"weather": {"min_temp": 50}}


def test_result_orders():
    """Searches list the 5 most recent matches newest first; FindAlarms keeps stored order."""
    env = toy_env()
    inbox = {f"m{i}": {"email_id": f"m{i}", "date": f"2023-04-{day:02d} 10:00:00",
                       "sender": "bo@example.com", "receivers": ["amy@example.com"],
                       "subject": "news", "body": "x"}
             for i, day in enumerate([3, 9, 1, 7, 5, 2, 30])}
    inbox["future"] = dict(inbox["m0"], email_id="future", date="2023-06-01 10:00:00")
    env.db("Email")["amy"] = inbox
    found = env.call("SearchInbox", {"query": "NEWS"}).response["emails"]
    assert [e["email_id"] for e in found] == ["m6", "m1", "m3", "m4", "m0"]
    env.db("Message")["amy"] = {
        "a": {"message_id": "a", "timestamp": "2023-04-01 10:00:00", "sender": "bo",
              "message": "hello there"},
        "b": {"message_id": "b", "timestamp": "2023-04-02 10:00:00", "sender": "bo",
              "message": "hello again"}}
    found = env.call("SearchMessages", {"query": "hello"}).response["messages"]
    assert [m["message_id"] for m in found] == ["b", "a"]
    env.call("AddAlarm", {"time": "06:00:00"})
    alarms = env.call("FindAlarms", {}).response["alarms"]
    assert [a["time"] for a in alarms] == ["07:00:00", "06:00:00"]
