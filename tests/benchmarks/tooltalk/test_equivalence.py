"""ToolTalk's equivalence rules on small hand-written calls.

Similarity is a toy here (a lookup table, exact strings = 1.0): the thresholds are what is
tested, not an embedder.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolscore.benchmarks.tooltalk import equivalence as eq
from toolscore.benchmarks.tooltalk.plugins import ALL_TOOLS
from toolscore.env.tool import CallRecord, MatchContext

TOKEN = "tok-1"


class TableSimilarity:
    """Exact strings score 1.0; listed pairs (either order) their score; anything else 0."""

    def __init__(self, scores: dict[tuple[str, str], float] | None = None) -> None:
        self.scores = scores or {}

    def __call__(self, a: Any, b: Any) -> float:
        if not isinstance(a, str) or not isinstance(b, str):
            return 0.0
        if a == b:
            return 1.0
        return self.scores.get((a, b), self.scores.get((b, a), 0.0))


def ctx(scores: dict[tuple[str, str], float] | None = None, strict: bool = False) -> MatchContext:
    return MatchContext(TableSimilarity(scores), strict=strict)


def call(tool_name: str, response: Any = None, exception: str | None = None, /,
         **arguments: Any) -> CallRecord:
    return CallRecord(tool_name, {"session_token": TOKEN, **arguments}, response, exception)


def same(pred: CallRecord, truth: CallRecord, context: MatchContext | None = None) -> bool:
    return ALL_TOOLS[truth.name].equivalent(pred, truth, context or ctx())


OK = {"status": "success"}


# -- default: everything exact --------------------------------------------------------------------
def test_exact_rule():
    truth = call("DeleteAlarm", OK, alarm_id="ab-12")
    assert same(call("DeleteAlarm", OK, alarm_id="ab-12"), truth)
    assert same(call("DeleteAlarm", OK, alarm_id="ab-12", note="extra"), truth)  # extra: ignored
    assert not same(call("DeleteAlarm", OK, alarm_id="AB-12"), truth)  # case-sensitive
    assert not same(call("DeleteAlarm", OK), truth)  # missing argument
    assert not same(call("DeleteAlarm", None, "Alarm ab-12 does not exist.", alarm_id="ab-12"),
                    truth)
    assert not same(call("DeleteAlarm", {"status": "done"}, alarm_id="ab-12"), truth)
    other_session = CallRecord("DeleteAlarm", {"session_token": "tok-2", "alarm_id": "ab-12"},
                               OK)
    assert not same(other_session, truth)
    assert not same(CallRecord("DeleteAlarm", None, None, "Failed to parse API call"), truth)
    assert not same(call("DeleteReminder", OK, alarm_id="ab-12"), truth)  # another tool


def test_exact_rule_on_a_failed_ground_truth():
    truth = CallRecord("UserLogin", {"username": "amy", "password": "old"}, None,
                       "The password is incorrect.")
    assert same(CallRecord("UserLogin", {"username": "amy", "password": "old"}, None,
                           "The password is incorrect."), truth)
    assert not same(CallRecord("UserLogin", {"username": "amy", "password": "new"},
                               {"session_token": "x"}), truth)


def test_add_alarm_ignores_the_response():
    truth = call("AddAlarm", {"alarm_id": "1111-2222"}, time="07:00:00")
    assert same(call("AddAlarm", {"alarm_id": "3333-4444"}, time="07:00:00"), truth)
    assert not same(call("AddAlarm", {"alarm_id": "1111-2222"}, time="07:00:01"), truth)
    assert not same(call("AddAlarm", None, "User is not logged in", time="07:00:00"), truth)


# -- searches: the ground truth's results must be found -------------------------------------------
@pytest.mark.parametrize("name, key, id_key", [
    ("FindAlarms", "alarms", "alarm_id"),
    ("QueryCalendar", "events", "event_id"),
    ("SearchInbox", "emails", "email_id"),
    ("SearchMessages", "messages", "message_id"),
])
def test_search_rules(name, key, id_key):
    def found(*ids: str) -> dict[str, Any]:
        return {key: [{id_key: i, "text": "whatever"} for i in ids]}

    truth = call(name, found("a", "b"), query="lunch")
    assert same(call(name, found("c", "b", "a"), query="something else"), truth)
    assert same(call(name, found("a", "b")), truth)  # no filter at all
    assert not same(call(name, found("a"), query="lunch"), truth)
    assert not same(call(name, None, "boom", query="lunch"), truth)
    assert not same(call(name, {key: "not a list"}, query="lunch"), truth)
    assert not same(CallRecord(name, {"session_token": "tok-2"}, found("a", "b")), truth)
    nothing = call(name, found(), query="nothing")
    assert same(call(name, found("z"), query="other"), nothing)


def test_get_reminders_needs_the_same_request_and_the_listed_reminders():
    def listing(*ids: str) -> dict[str, Any]:
        return {"reminders": [{"reminder_id": i} for i in ids]}

    truth = call("GetReminders", listing("r1", "r2"))
    assert same(call("GetReminders", listing("r2", "r3", "r1")), truth)
    assert not same(call("GetReminders", listing("r1")), truth)
    assert not same(CallRecord("GetReminders", {"session_token": "tok-2"}, listing("r1", "r2")),
                    truth)
    assert not same(call("GetReminders", listing("r1", "r2"), status="pending"), truth)


# -- calendar -------------------------------------------------------------------------------------
EVENT = {"name": "Team sync", "event_type": "meeting", "start_time": "2023-05-02 10:00:00",
         "end_time": "2023-05-02 11:00:00", "location": "Room 4", "attendees": ["bo", "cy"]}


def test_create_event():
    truth = call("CreateEvent", {"event_id": "e1"}, **EVENT)
    scores = {("Team sync", "Team meeting"): 0.92, ("Team sync", "Standup"): 0.85,
              ("Room 4", "room four"): 0.95}
    assert same(call("CreateEvent", {"event_id": "e2"}, **EVENT), truth)  # new id: fine
    assert same(call("CreateEvent", {"event_id": "e1"}, **{**EVENT, "name": "Team meeting",
                                                          "location": "room four"}),
                truth, ctx(scores))
    assert not same(call("CreateEvent", {"event_id": "e1"}, **{**EVENT, "name": "Standup"}),
                    truth, ctx(scores))
    assert same(call("CreateEvent", {"event_id": "e1"}, **EVENT, description="extra"), truth)
    assert not same(call("CreateEvent", {"event_id": "e1"}, **{**EVENT, "location": None}),
                    truth)
    assert not same(call("CreateEvent", {"event_id": "e1"}, **{**EVENT, "attendees": ["cy", "bo"]}),
                    truth)  # attendees are an ordered list
    assert not same(call("CreateEvent", {"event_id": "e1"}, **{**EVENT, "event_type": "event"}),
                    truth)
    assert not same(call("CreateEvent", None, "A meeting must have attendees.", **EVENT), truth)


def test_modify_event():
    truth = call("ModifyEvent", OK, event_id="e1", new_description="Bring slides",
                 new_attendees=["bo", "cy"])
    scores = {("Bring slides", "Please bring the slides"): 0.9,
              ("Bring slides", "Slides"): 0.89}
    assert same(call("ModifyEvent", OK, event_id="e1", new_description="Please bring the slides",
                     new_attendees=["bo", "cy"]), truth, ctx(scores))
    assert not same(call("ModifyEvent", OK, event_id="e1", new_description="Slides",
                         new_attendees=["bo", "cy"]), truth, ctx(scores))
    assert not same(call("ModifyEvent", OK, event_id="e1", new_description="Bring slides",
                         new_attendees=["cy", "bo"]), truth)
    assert not same(call("ModifyEvent", OK, event_id="e2", new_description="Bring slides",
                         new_attendees=["bo", "cy"]), truth)
    assert not same(call("ModifyEvent", None, "Event e1 does not exist.", event_id="e1",
                         new_description="Bring slides", new_attendees=["bo", "cy"]), truth)


# -- email and messages ---------------------------------------------------------------------------
def test_send_email():
    truth = call("SendEmail", {"email_id": "x"}, to=["a@x.org", "b@x.org"], subject="Lunch",
                 body="See you at noon.")
    scores = {("Lunch", "Lunch today"): 0.9, ("Lunch", "Lunch plans"): 0.85,
              ("See you at noon.", "Meet you at 12."): 0.85,
              ("See you at noon.", "Bye."): 0.79}
    c = ctx(scores)
    assert same(call("SendEmail", {"email_id": "y"}, to=["b@x.org", "a@x.org"],
                     subject="Lunch today", body="Meet you at 12."), truth, c)
    assert not same(call("SendEmail", {"email_id": "y"}, to=["a@x.org", "b@x.org"],
                         subject="Lunch plans", body="See you at noon."), truth, c)
    assert not same(call("SendEmail", {"email_id": "y"}, to=["a@x.org", "b@x.org"],
                         subject="Lunch", body="Bye."), truth, c)
    assert not same(call("SendEmail", {"email_id": "y"}, to=["a@x.org"], subject="Lunch",
                         body="See you at noon."), truth, c)
    assert not same(call("SendEmail", {"email_id": "y"}, to="a@x.org, b@x.org", subject="Lunch",
                         body="See you at noon."), truth, c)
    assert not same(call("SendEmail", {"email_id": "y"}, to=[["a@x.org"]], subject="Lunch",
                         body="See you at noon."), truth, c)  # unhashable: no crash
    assert not same(call("SendEmail", {"email_id": "y"}, to=["a@x.org", "b@x.org"],
                         subject="Lunch", body=None), truth, c)
    assert not same(CallRecord("SendEmail", {"session_token": "tok-2", "to": ["a@x.org",
                    "b@x.org"], "subject": "Lunch", "body": "See you at noon."}), truth, c)


def test_send_message_receiver_default_vs_strict():
    truth = call("SendMessage", {"message_id": "m1"}, receiver="bo", message="Running late")
    wrong_receiver = call("SendMessage", {"message_id": "m2"}, receiver="cy",
                          message="Running late")
    assert same(wrong_receiver, truth, ctx())  # the reference never compares the receiver
    assert not same(wrong_receiver, truth, ctx(strict=True))
    right = call("SendMessage", {"message_id": "m2"}, receiver="bo", message="I'm late")
    scores = {("Running late", "I'm late"): 0.8}
    assert same(right, truth, ctx(scores)) and same(right, truth, ctx(scores, strict=True))
    assert not same(right, truth, ctx({("Running late", "I'm late"): 0.79}))
    assert not same(call("SendMessage", None, "boom", receiver="bo", message="Running late"),
                    truth)
    assert not same(call("SendMessage", {"message_id": "m2"}, receiver="bo", message=None), truth)


# -- reminders ------------------------------------------------------------------------------------
@pytest.mark.parametrize("strict", [False, True])
def test_add_reminder(strict):
    c = ctx({("Call mom", "Call my mom"): 0.93, ("Call mom", "Call dad"): 0.7}, strict=strict)
    truth = call("AddReminder", {"reminder_id": "r1"}, task="Call mom",
                 due_date="2023-05-02 18:00:00")
    assert same(call("AddReminder", {"reminder_id": "r9"}, task="Call my mom",
                     due_date="2023-05-02 09:30:00"), truth, c)  # same day, other time
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call mom",
                         due_date="2023-05-03 18:00:00"), truth, c)
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call dad",
                         due_date="2023-05-02 18:00:00"), truth, c)
    # a null due date against a dated truth crashed the reference; here it is simply different
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call mom", due_date=None),
                    truth, c)
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call mom"), truth, c)
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call mom",
                         due_date="tomorrow"), truth, c)
    assert not same(call("AddReminder", {"reminder_id": "r1"}, task="Call mom", due_date=5),
                    truth, c)
    undated = call("AddReminder", {"reminder_id": "r1"}, task="Call mom")
    assert same(call("AddReminder", {"reminder_id": "r2"}, task="Call mom",
                     due_date="2023-05-02 18:00:00"), undated, c)  # only truth keys are read
    null_dated = call("AddReminder", {"reminder_id": "r1"}, task="Call mom", due_date=None)
    assert same(call("AddReminder", {"reminder_id": "r2"}, task="Call mom", due_date=None),
                null_dated, c)
    assert not same(call("AddReminder", {"reminder_id": "r2"}, task="Call mom",
                         due_date="2023-05-02 18:00:00"), null_dated, c)


# -- similarity guards and wiring -----------------------------------------------------------------
def test_similarity_guards():
    def nan(a: Any, b: Any) -> float:
        return float("nan")

    def broken(a: Any, b: Any) -> float:
        raise RuntimeError("embedder down")

    for fn in (nan, broken):
        assert not eq.similar(MatchContext(fn), "a", "b", 0.5)
        assert eq.similar(MatchContext(fn), "same", "same", 0.9)  # identical text needs no model
    assert not eq.similar(ctx(), None, "x", 0.0)
    assert not eq.similar(ctx(), "x", 3, 0.0)


def test_every_tool_carries_its_rule():
    assert ALL_TOOLS["SendMessage"].equivalence is eq.send_message
    assert ALL_TOOLS["AddReminder"].equivalence is eq.add_reminder
    assert ALL_TOOLS["CreateEvent"].equivalence is eq.create_event
    assert ALL_TOOLS["ModifyEvent"].equivalence is eq.modify_event
    assert ALL_TOOLS["SendEmail"].equivalence is eq.send_email
    assert ALL_TOOLS["GetReminders"].equivalence is eq.get_reminders
    assert ALL_TOOLS["AddAlarm"].equivalence is eq.exact_ignoring_response
    searches = {"FindAlarms", "QueryCalendar", "SearchInbox", "SearchMessages"}
    assert {n for n in ALL_TOOLS if ALL_TOOLS[n].equivalence is eq.RULES.get(n)} >= searches
    exact = {n for n, t in ALL_TOOLS.items() if t.equivalence is eq.exact}
    assert exact == set(ALL_TOOLS) - set(eq.RULES)
    # all AccountTools, DeleteAlarm, DeleteEvent, CompleteReminder, DeleteReminder and weather
    assert len(exact) == 10 + 4 + 3
    assert ALL_TOOLS["SendEmail"].extra["similarity_fields"] == ("subject", "body")
    assert ALL_TOOLS["ModifyEvent"].extra["similarity_fields"] == (
        "new_name", "new_description", "new_location")
    assert ALL_TOOLS["DeleteAlarm"].extra["similarity_fields"] == ()
