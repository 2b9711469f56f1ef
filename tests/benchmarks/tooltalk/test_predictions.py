"""ToolTalk prediction files: reading, writing, round trips and comparison with reference
metrics."""

from __future__ import annotations

import json

import pytest
from support.data import dataset

from toolscore.benchmarks.tooltalk.predictions import (
    PredictionFormatError,
    compare_with_reference,
    prediction_paths,
    read_prediction_file,
    read_predictions,
    write_predictions,
)
from toolscore.benchmarks.tooltalk.scoring import TurnCalls, aggregate, score_conversation
from toolscore.embed.similarity import Similarity
from toolscore.env.tool import CallRecord, MatchContext, Tool


def _tool(name: str, action: bool) -> Tool:
    return Tool(name=name, description="", parameters={"type": "object"},
                fn=lambda env, **kw: None, action=action)


TOOLS = {"AddAlarm": _tool("AddAlarm", True), "FindAlarms": _tool("FindAlarms", False)}
CTX = MatchContext(similarity=lambda a, b: float(a == b))


def api(name: str, response=None, exception=None, **params) -> dict:
    return {"request": {"api_name": name, "parameters": params}, "response": response,
            "exception": exception}


def conversation() -> dict:
    return {
        "name": "Alarm-1", "conversation_id": "c1", "suites_used": ["Alarm"],
        "apis_used": ["AddAlarm"], "user": {"username": "u"},
        "metadata": {"location": "X", "timestamp": "2023-01-01 09:00:00"},
        "conversation": [
            {"index": 0, "role": "user", "text": "wake me at 7"},
            {"index": 1, "role": "assistant", "text": "done",
             "apis": [api("AddAlarm", {"alarm_id": "a"}, time="07:00:00")]},
            {"index": 2, "role": "user", "text": "and list them"},
            {"index": 3, "role": "assistant", "text": "here",
             "apis": [api("FindAlarms", {"alarms": []})]},
            {"index": 4, "role": "user", "text": "thanks"},
        ],
    }


def predicted_turns() -> list[TurnCalls]:
    return [
        TurnCalls(1, [CallRecord.from_dict(api("AddAlarm", {"alarm_id": "a"}, time="07:00:00"))],
                  [CallRecord("AddAlarm", {"time": "07:00:00"}, {"alarm_id": "a"}),
                   CallRecord("AddAlarm", {"time": "08:00:00"}, {"alarm_id": "b"})],
                  reply="Alarm set."),
        TurnCalls(3, [CallRecord.from_dict(api("FindAlarms", {"alarms": []}))], [],
                  reply="You have none."),
    ]


def test_write_then_read_round_trips(tmp_path):
    turns = predicted_turns()
    score = score_conversation(turns, TOOLS, CTX)
    (path,) = write_predictions(tmp_path, [(conversation(), turns, score)])
    assert path.name == "Alarm-1.json"
    data = json.loads(path.read_text())
    t1 = data["conversation"][1]
    assert [p.get("match") for p in t1["predictions"]] == [True, False, None]
    assert [p.get("bad_action") for p in t1["predictions"]] == [False, True, None]
    assert t1["predictions"][-1] == {"role": "assistant", "text": "Alarm set."}
    assert t1["apis"][0]["match"] is True and data["conversation"][3]["apis"][0]["match"] is False
    assert data["metrics"]["bad_action_rate"] == 0.5 and "incorrect_action_rate" not in \
        data["metrics"]
    assert data["user"] == {"username": "u"}  # everything else is kept

    (f,) = read_predictions(tmp_path)
    assert f.turns == turns
    rescored = score_conversation(f.turns, TOOLS, CTX)
    assert rescored.metrics() == score.metrics()
    assert compare_with_reference([f], [rescored]) == []
    # Writing what was read reproduces the file byte for byte.
    write_predictions(tmp_path / "again", [(f.conversation, f.turns, rescored)])
    assert (tmp_path / "again" / "Alarm-1.json").read_text() == path.read_text()


def test_compare_lists_metric_and_flag_differences(tmp_path):
    turns = predicted_turns()
    score = score_conversation(turns, TOOLS, CTX)
    (path,) = write_predictions(tmp_path, [(conversation(), turns, score)])
    data = json.loads(path.read_text())
    data["metrics"]["precision"] = 1.0
    data["metrics"]["success"] = True
    del data["metrics"]["valid_actions"]  # absent on the reference side: not compared
    data["conversation"][1]["predictions"][1]["bad_action"] = False
    path.write_text(json.dumps(data))
    f = read_prediction_file(path)
    diffs = compare_with_reference([f], [score])
    assert [(d.field, d.ours, d.reference) for d in diffs] == [
        ("precision", 0.5, 1.0), ("success", False, True),
        ("conversation[1].predictions[api 1].bad_action", True, False)]
    assert str(diffs[0]) == "Alarm-1: precision: ours=0.5 reference=1.0"


def test_tolerates_missing_optional_fields(tmp_path):
    data = conversation()
    del data["conversation"][1]["apis"][0]["exception"]
    data["conversation"][1]["predictions"] = [
        {"request": {"api_name": "AddAlarm", "parameters": {"time": "07:00:00"}}},
        {"role": "api", "request": {"api_name": "Bogus"}}]
    (tmp_path / "x.json").write_text(json.dumps(data))
    f = read_prediction_file(tmp_path / "x.json")
    assert f.reference is None
    assert [t.turn for t in f.turns] == [1, 3]
    assert f.turns[0].predictions == [CallRecord("AddAlarm", {"time": "07:00:00"}),
                                      CallRecord("Bogus", None)]
    assert f.turns[0].reply is None and f.turns[1].predictions == []
    s = score_conversation(f.turns, TOOLS, CTX)
    assert (s.matches, s.predictions, s.ground_truths) == (0, 2, 2)  # response {} != None
    assert compare_with_reference([f], [s]) == []


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d["conversation"][1]["apis"][0]["request"].pop("api_name"),
     "conversation[1].apis[0].request.api_name"),
    (lambda d: d["conversation"][3].__setitem__("predictions", [{"role": "tool"}]),
     "conversation[3].predictions[0].role"),
    (lambda d: d["conversation"][3].__setitem__("predictions", [{"role": "api", "request": 3}]),
     "conversation[3].predictions[0].request"),
    (lambda d: d["conversation"][1]["apis"][0].__setitem__("exception", 5),
     "conversation[1].apis[0].exception"),
    (lambda d: d.pop("conversation"), "conversation"),
    (lambda d: d.__setitem__("metrics", []), "metrics"),
])
def test_bad_input_names_file_record_and_field(tmp_path, mutate, where):
    data = conversation()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PredictionFormatError) as info:
        read_prediction_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}:") and "\n" not in message


def test_unreadable_json_and_missing_directory(tmp_path):
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(PredictionFormatError, match="broken.json: unreadable JSON"):
        read_predictions(tmp_path)
    with pytest.raises(PredictionFormatError, match="not a directory"):
        read_predictions(tmp_path / "missing")


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_a_folder_of_split_folders_is_read_whole(tmp_path):
    # ToolTalk's layout: one folder per split, summaries (error-type counts) beside them.
    hard, easy = conversation(), {**conversation(), "name": "AddAlarm-easy"}
    _write(tmp_path / "hard" / "Alarm-1.json", hard)
    _write(tmp_path / "easy" / "AddAlarm-easy.json", easy)
    _write(tmp_path / "hard_error_types.json", {"bad planning": 1})
    (tmp_path / "notes").mkdir()  # a folder without JSON is not a split
    assert [p.relative_to(tmp_path).as_posix() for p in prediction_paths(tmp_path)] == [
        "easy/AddAlarm-easy.json", "hard/Alarm-1.json"]
    assert [f.name for f in read_predictions(tmp_path)] == ["AddAlarm-easy", "Alarm-1"]
    # In a flat folder every JSON file is a conversation: a summary there is named as bad.
    _write(tmp_path / "flat" / "hard_error_types.json", {"bad planning": 1})
    with pytest.raises(PredictionFormatError, match="hard_error_types.json: conversation:"):
        read_predictions(tmp_path / "flat")


def test_conversation_names_must_be_unique(tmp_path):
    _write(tmp_path / "easy" / "a.json", conversation())
    _write(tmp_path / "hard" / "b.json", conversation())
    with pytest.raises(PredictionFormatError) as info:
        read_predictions(tmp_path)
    assert str(info.value) == (f"{tmp_path / 'hard' / 'b.json'}: name: conversation 'Alarm-1' "
                               f"is also in {tmp_path / 'easy' / 'a.json'}")


def test_a_conversation_without_a_name_is_named_by_its_file(tmp_path):
    data = conversation()
    del data["name"]
    _write(tmp_path / "Mine.json", data)
    (f,) = read_predictions(tmp_path)
    assert f.name == "Mine" and f.path == tmp_path / "Mine.json"


def test_turn_must_be_an_assistant_turn(tmp_path):
    with pytest.raises(ValueError, match="turn 2 is not an assistant turn"):
        write_predictions(tmp_path, [(conversation(), [TurnCalls(2, [], [])], None)])


# -- real data --------------------------------------------------------------------------------
def test_real_conversations_round_trip_with_perturbations(tmp_path):
    from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS

    ctx = MatchContext(similarity=Similarity("hashing"))
    files = read_predictions(dataset("tooltalk") / "tooltalk")
    items = []
    for n, f in enumerate(files):
        turns = [TurnCalls(t.turn, t.ground_truth, list(t.ground_truth), reply="ok")
                 for t in f.turns]
        if n % 2:  # perturb every other conversation: drop a call, add a wrong action
            evaluated = [t for t in turns if t.ground_truth]
            evaluated[0].predictions = evaluated[0].predictions[1:]
            evaluated[-1].predictions.append(
                CallRecord("DeleteAlarm", {"alarm_id": "0000-0000"}, {"status": "success"}))
        items.append((f.conversation, turns, score_conversation(turns, ALL_TOOLS, ctx)))
    write_predictions(tmp_path, items)
    again = read_predictions(tmp_path)
    rescored = [score_conversation(f.turns, ALL_TOOLS, ctx) for f in again]
    assert [s.metrics() for s in rescored] == [s.metrics() for _, _, s in items]
    assert compare_with_reference(again, rescored) == []
    agg = aggregate(rescored)
    assert agg["bad_actions"] == len(files) // 2
    assert agg["ground_truths"] - agg["matches"] == len(files) // 2
    assert agg["successes"] == len(files) - len(files) // 2
