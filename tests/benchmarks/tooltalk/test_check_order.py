"""Which answer a tool gives when several things are wrong, or before it reads its arguments.

ToolTalk's tools check in a fixed order: some return early (an empty list for a user with no
entry in the plugin's database) before they parse anything, its executor refuses a second
log-in before it binds the arguments, and several tools store one field before they check the
next. A model reads whichever answer comes first, so ours must come first too. Each case below
is a call where an earlier or a later check would give another result; the expected answers are
the reference's (the default simulator; test_simulator_reference covers the strict one).
"""

from __future__ import annotations

from typing import Any

import pytest
from support.data import dataset, needs
from support.tooltalk import toy_env

from toolscore.benchmarks.tooltalk.data import load_databases
from toolscore.benchmarks.tooltalk.plugins import PLUGINS
from toolscore.env.environment import Environment, Session

TIMESTAMP = "2018-09-13 14:57:56.13"  # a model's end_range: not a time of day


def world(user: str = "amy") -> Environment:
    """The toy world with ``user`` logged in: amy has an alarm and a reminder and nothing
    else; bo has no entry in any plugin's database."""
    if user == "amy":
        return toy_env()
    env = toy_env(logged_in=False)
    assert env.call("UserLogin", {"username": user, "password": f"pw-{user}"}).exception is None
    return env


def outcome(env: Environment, name: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
    record = env.call(name, arguments)
    return record.response, record.exception


# -- FindAlarms: a user without alarms gets an empty list before the range is parsed ------------
@needs("tooltalk")
def test_find_alarms_for_a_user_without_alarms_ignores_an_unparsable_range():
    """The case a real model hit: a full timestamp as end_range, for a user of the released
    databases who has no alarms. The reference answers an empty list; a user with alarms gets
    strptime's error for the same call."""
    databases = load_databases(dataset("tooltalk"))
    assert "justinkool" not in databases["Alarm"] and "mstein" in databases["Alarm"]
    for user, expected in (("justinkool", ({"alarms": []}, None)),
                           ("mstein", (None, f"time data '{TIMESTAMP}' does not match format "
                                             "'%H:%M:%S'"))):
        accounts = databases["Account"]
        env = Environment(PLUGINS)
        env.set_initial({**databases, "Account": {
            **accounts, user: {**accounts[user], "session_token": "tok"}}},
            Session(user, "tok"))
        assert outcome(env, "FindAlarms", {"end_range": TIMESTAMP}) == expected, user


def test_find_alarms_early_answer_depends_on_the_entry_not_on_the_alarms():
    env = world("bo")
    assert outcome(env, "FindAlarms", {"start_range": "8am", "end_range": "x"}) == (
        {"alarms": []}, None)
    # a failed delete looks the user up without creating an entry ...
    assert outcome(env, "DeleteAlarm", {"alarm_id": ["a"]}) == (None, "Alarm ['a'] not found.")
    assert outcome(env, "FindAlarms", {"end_range": TIMESTAMP}) == ({"alarms": []}, None)
    # ... AddAlarm creates it, and deleting every alarm keeps it: the range is parsed again
    alarm_id = env.call("AddAlarm", {"time": "06:00:00"}).response["alarm_id"]
    assert outcome(env, "DeleteAlarm", {"alarm_id": alarm_id}) == ({"status": "success"}, None)
    assert outcome(env, "FindAlarms", {"end_range": TIMESTAMP}) == (
        None, f"time data '{TIMESTAMP}' does not match format '%H:%M:%S'")
    assert outcome(env, "FindAlarms", {"start_range": "09:00:00", "end_range": "08:00:00"}) == (
        None, "Start range must be earlier than end range.")


# -- one call, several faults: the first the reference checks is the one reported ---------------
FIRST_FAULT = [
    # (user, tool, arguments, the reference's answer)
    ("amy", "ChangePassword", {"old_password": "wrong", "new_password": 7},
     (None, "The old password is incorrect.")),
    ("amy", "QueryUser", {"username": "bo", "email": "nobody@example.com"},
     ({"users": [{"username": "bo", "email": "bo@example.com", "phone": "555-000-2222",
                  "name": "Bo"}]}, None)),
    ("amy", "QueryUser", {"username": "zed", "email": "bo@example.com"}, ({"users": []}, None)),
    (None, "RegisterUser", {"username": "bo", "password": 1, "email": "x", "name": 2},
     (None, "The username already exists.")),
    (None, "RegisterUser", {"username": "cy", "password": 1, "email": "x", "phone": 5},
     (None, "The email format is invalid.")),
    (None, "RegisterUser", {"username": "cy", "password": 1, "email": "c@y.z", "phone": "5"},
     (None, "The phone number format is invalid.")),
    (None, "ResetPassword", {"username": "bo", "verification_code": "1", "new_password": 2},
     (None, "The verification code is incorrect.")),
    ("amy", "UpdateAccountInformation", {"password": "pw-amy", "new_name": "Amelia"},
     (None, "You need to provide at least one of new_email and new_phone_number.")),
    ("amy", "UpdateAccountInformation", {"password": "nope"}, (None, "The password is incorrect.")),
    ("amy", "CreateEvent", {"name": 1, "event_type": "party", "start_time": "x", "end_time": "y"},
     (None, "Event type party not supported.")),
    ("amy", "CreateEvent", {"name": 1, "event_type": "meeting", "start_time": "x",
                            "end_time": "y", "attendees": []},
     (None, "Meeting must have attendees.")),
    ("amy", "CreateEvent", {"name": "Run", "event_type": "event",
                            "start_time": "2023-04-01 08:00:00", "end_time": "2023-05-02"},
     (None, "time data '2023-05-02' does not match format '%Y-%m-%d %H:%M:%S'")),
    ("amy", "CreateEvent", {"name": "Run", "event_type": "event",
                            "start_time": "2023-04-01 08:00:00",
                            "end_time": "2023-03-01 08:00:00"},
     (None, "Start time must be before end time.")),
    ("amy", "CreateEvent", {"name": 1, "event_type": "event", "start_time": "2023-04-01 08:00:00",
                            "end_time": "2023-04-01 09:00:00"},
     (None, "Start time and end time must be in the future.")),
    ("amy", "QueryCalendar", {"start_time": "x", "end_time": "y"},
     (None, "User amy has no events.")),
    ("amy", "SearchInbox", {"match_type": "some", "start_date": "x"}, ({"emails": []}, None)),
    ("bo", "SearchMessages", {"match_type": "some", "start_date": "x"}, ({"messages": []}, None)),
    ("amy", "SendEmail", {"to": ["bo@example.com", "bo", 3], "subject": 1, "body": 2},
     (None, "bo is not a valid email address.")),
    ("amy", "SendEmail", {"to": [], "subject": "s", "body": "b"},
     ({"email_id": "5b-dd80-9f8a27ab"}, None)),
    ("amy", "SendMessage", {"receiver": 5, "message": ""}, (None, "Message cannot be empty.")),
    ("amy", "AddReminder", {"task": 5, "due_date": "tomorrow"},
     (None, "Invalid due_date: tomorrow")),
    ("bo", "CompleteReminder", {"reminder_id": "r-1"}, (None, "'bo'")),
    ("bo", "DeleteReminder", {"reminder_id": "r-1"}, (None, "'bo'")),
    ("bo", "GetReminders", {}, ({"reminders": []}, None)),
    ("amy", "CurrentWeather", {"location": " Springfield\n"},
     ({"weather": {"date": "2023-05-01", "high": 70, "low": 50, "conditions": "Sunny"}}, None)),
    ("amy", "HistoricWeather", {"location": " SPRINGFIELD ", "month": "Mayday"},
     (None, "Historic weather data for springfield missing for month mayday")),
]


@pytest.mark.parametrize("user, name, arguments, expected", FIRST_FAULT,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(FIRST_FAULT)])
def test_the_first_fault_the_reference_checks_is_reported(user, name, arguments, expected):
    env = toy_env(logged_in=False) if user is None else world(user)
    env.db("HistoricWeather")["springfield"] = {"may": {"min_temp": 50}}
    env.db("Message")["amy"] = {}
    env.db("Email")["amy"] = {}
    assert outcome(env, name, arguments) == expected


def test_searches_check_match_type_then_dates_then_their_order_then_the_texts():
    env = world()
    env.db("Message")["amy"] = {}  # an empty entry is searched (the inbox is not: see above)
    assert outcome(env, "SearchMessages", {"match_type": "some", "query": 1}) == (
        None, 'match_type must be either "any" or "all".')
    env.db("Email")["amy"] = {"m": {"email_id": "m", "date": "2023-04-01 10:00:00",
                                    "sender": "bo@example.com", "receivers": [],
                                    "subject": "s", "body": "b"}}
    for name in ("SearchInbox", "SearchMessages"):
        assert outcome(env, name, {"query": 1, "start_date": "2023-04-02 00:00:00",
                                   "end_date": "2023-04-01 00:00:00"}) == (
            None, "Start date must be earlier than end date."), name
        assert outcome(env, name, {"query": 1, "start_date": "2023-04-01"})[1] == (
            "time data '2023-04-01' does not match format '%Y-%m-%d %H:%M:%S'"), name


# -- the executor's refusal of a second log-in comes before the arguments are bound -------------
@pytest.mark.parametrize("name, arguments", [
    ("UserLogin", {}),
    ("UserLogin", {"username": "bo", "password": "pw-bo", "remember": True}),
    ("RegisterUser", {"username": "cy"}),
    ("RegisterUser", {"username": "cy", "password": "p", "email": "c@y.z", "env": 1}),
])
def test_a_second_login_is_refused_before_its_arguments_are_checked(name, arguments):
    assert outcome(toy_env(), name, arguments) == (
        None, "Only one user can be logged in at a time. Current user is amy.")


@pytest.mark.parametrize("name, arguments, exception", [
    ("UserLogin", {"username": "bo"},
     "UserLogin.call() missing 1 required positional argument: 'password'"),
    ("UserLogin", {"username": "bo", "password": "pw-bo", "env": 1},
     "UserLogin.call() got an unexpected keyword argument 'env'"),
    ("RegisterUser", {"username": "cy", "password": "p", "email": "c@y.z", "age": 3},
     "RegisterUser.call() got an unexpected keyword argument 'age'"),
])
def test_logged_out_the_arguments_are_still_checked_first(name, arguments, exception):
    env = toy_env(logged_in=False)
    before = env.state_hash()
    assert outcome(env, name, arguments) == (None, exception)
    assert env.state_hash() == before and env.session is None


def test_login_of_an_account_that_holds_a_token_is_refused_after_the_password():
    """Unreachable through the executor alone (it keeps the token and the session together),
    but the reference's UserLogin checks it, after the username and the password."""
    env = toy_env(logged_in=False)
    env.db("Account")["bo"]["session_token"] = "stale"
    assert outcome(env, "UserLogin", {"username": "bo", "password": "nope"}) == (
        None, "The password is incorrect.")
    assert outcome(env, "UserLogin", {"username": "bo", "password": "pw-bo"}) == (
        None, "The user is already logged in.")
    assert env.session is None


def test_add_alarm_parses_the_time_before_the_session_lookup():
    env = toy_env()
    env.session = Session("amy", "not-in-the-account-database")
    assert outcome(env, "AddAlarm", {"time": "7am"}) == (
        None, "time data '7am' does not match format '%H:%M:%S'")


# -- checks after writes: what the reference already stored stays stored ------------------------
def test_update_account_information_stores_the_email_before_checking_the_phone():
    env = world()
    account = env.db("Account")["amy"]
    assert outcome(env, "UpdateAccountInformation", {"password": "pw-amy",
                                                     "new_name": "Amelia"})[0] is None
    assert account["name"] == "Amy"  # a name alone is refused before anything is stored
    assert outcome(env, "UpdateAccountInformation", {
        "password": "pw-amy", "new_email": "amy@new.org", "new_phone_number": "555",
        "new_name": "Amelia"}) == (None, "The phone number is invalid.")
    assert (account["email"], account["phone"], account["name"]) == (
        "amy@new.org", "555-000-1111", "Amy")


def test_modify_event_checks_and_stores_field_by_field():
    env = world()
    event = {"name": "Run", "event_type": "event", "start_time": "2023-05-02 08:00:00",
             "end_time": "2023-05-02 09:00:00"}
    event_id = env.call("CreateEvent", event).response["event_id"]
    stored = env.db("Calendar")["amy"][event_id]
    assert outcome(env, "ModifyEvent", {"event_id": event_id, "new_name": "Walk",
                                        "new_start_time": "2023-05-03 08:00:00"}) == (
        None, "new_end_time must be provided if new_start_time is provided.")
    assert stored["name"] == "Walk" and stored["start_time"] == event["start_time"]
    assert outcome(env, "ModifyEvent", {"event_id": event_id,
                                        "new_end_time": "2023-05-03 09:00:00"}) == (
        None, "new_start_time must be provided if new_end_time is provided.")
    assert outcome(env, "ModifyEvent", {"event_id": event_id,
                                        "new_start_time": "2023-04-03 08:00:00",
                                        "new_end_time": "2023-04-02 09:00:00"}) == (
        None, "Start time must be before end time.")
    assert outcome(env, "ModifyEvent", {"event_id": event_id,
                                        "new_start_time": "2023-05-03 08:00:00",
                                        "new_end_time": "2023-05-03 09:00:00",
                                        "new_attendees": 4}) == (
        None, "argument of type 'int' is not iterable")
    assert (stored["start_time"], stored["end_time"]) == ("2023-05-03 08:00:00",
                                                          "2023-05-03 09:00:00")
    assert outcome(env, "QueryCalendar", {"start_time": "2023-05-04 00:00:00",
                                          "end_time": "2023-05-03 00:00:00"}) == (
        None, "Start time must be before end time.")


def test_lookups_by_id_create_no_entry_for_the_user():
    """Only CreateEvent and AddReminder create a user's entry (AddReminder even when it then
    refuses the due date): failed deletes and edits leave the early answers as they were."""
    env = world("bo")
    assert outcome(env, "DeleteEvent", {"event_id": ["e"]}) == (None, "Event ['e'] not found.")
    assert outcome(env, "ModifyEvent", {"event_id": "e", "new_name": "x"}) == (
        None, "Event e not found.")
    assert outcome(env, "QueryCalendar", {"start_time": "x", "end_time": "y"}) == (
        None, "User bo has no events.")
    assert outcome(env, "CompleteReminder", {"reminder_id": "r"}) == (None, "'bo'")
    assert outcome(env, "AddReminder", {"task": "t", "due_date": "soon"}) == (
        None, "Invalid due_date: soon")
    assert outcome(env, "CompleteReminder", {"reminder_id": "r"}) == (
        None, "Reminder r not found in database")
    assert "bo" not in env.db("Calendar")
