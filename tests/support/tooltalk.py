"""Recorded ground-truth results in the released ToolTalk data that ToolTalk's own simulator does
not return, by (file name, turn index, call index).

Derived from ``tooltalk-reference/oracle`` (every ground-truth call executed by ToolTalk's own
simulator, in protocol order): 229 of 266 calls come back as recorded; these 37 do not, because
the recorded result was edited by hand, predates later additions to the databases, or lists the
results in another order than the simulator returns them. Our simulator returns what ToolTalk's
returns (``test_replay`` checks it call by call), so it differs from the recording in exactly
these calls. Scoring is unaffected (every replayed call still matches its ground truth under its
tool's rule), but anyone checking replay exactness needs this list. It is knowledge about the
released data that only the tests use (replay exactness in test_tools, test_oracle and
test_replay), so it lives with them, beside ``toy_env``, the small world of our own that the
tool tests share.
"""

from __future__ import annotations

from datetime import datetime

from toolscore.benchmarks.tooltalk.plugins import PLUGINS
from toolscore.env.environment import Environment, Session

STALE = "listing lacks items of the released database"
EDITED = "recorded field values differ from the released database"
NOT_DRAWN = "id not drawn by the tool's generator"
ORDER = "the same results listed in another order (searches: newest first; alarms: as stored)"
ANNOTATION_ERRORS = {
    ("AccountTools-Alarm-Messages-FindAlarm-0.json", 5, 0): ORDER,
    ("Alarm-Calendar-Email-DeleteAlarm-1.json", 3, 0): STALE,
    ("Alarm-Messages-Reminder-GetReminder-2.json", 1, 0): STALE,
    ("Alarm-Messages-Reminder-GetReminder-2.json", 5, 0): NOT_DRAWN,  # 'dd80-5bff'
    ("Alarm-Reminder-Weather-AddReminder-1.json", 1, 0): NOT_DRAWN,  # {'alarm_id': ...}
    ("Alarm-Reminder-Weather-AddReminder-1.json", 1, 1): NOT_DRAWN,  # the same id again
    ("Alarm-Reminder-Weather-DeleteAlarm-2.json", 5, 0): NOT_DRAWN,  # '5b-d80'
    ("Alarm-Reminder-Weather-FindAlarm-2.json", 3, 1): NOT_DRAWN,  # first id repeated
    ("Calendar-Email-Reminder-GetReminder-1.json", 1, 0): ORDER,
    ("Calendar-Messages-Reminder-ModifyEvent-0.json", 1, 0): EDITED,
    ("Calendar-Messages-Reminder-QueryCalendar-2.json", 1, 0): STALE,
    ("Calendar-Messages-Weather-DeleteEvent-0.json", 1, 0): STALE,
    ("Calendar-Messages-Weather-SendMessage-1.json", 3, 1): NOT_DRAWN,  # ids restart at
    ("Calendar-Messages-Weather-SendMessage-1.json", 3, 2): NOT_DRAWN,  # the first draw
    ("Calendar-Messages-Weather-SendMessage-1.json", 3, 3): NOT_DRAWN,  # in a later turn
    ("Calendar-Reminder-Weather-CompleteReminder-1.json", 1, 0): STALE,
    ("Calendar-Reminder-Weather-CreateEvent-1.json", 5, 0): STALE,
    ("Calendar-Reminder-Weather-DeleteEvent-0.json", 1, 0): STALE,
    ("Calendar-Reminder-Weather-DeleteEvent-0.json", 1, 4): STALE,
    ("Calendar-Reminder-Weather-DeleteReminder-1.json", 3, 0): STALE,
    ("Email-Messages-Reminder-DeleteReminder-1.json", 1, 0): STALE,
    ("Email-Messages-Reminder-SearchMessage-1.json", 1, 0): ORDER,
    ("Email-Messages-Reminder-SendEmail-2.json", 1, 0): STALE,
    ("Email-Messages-Reminder-SendMessage-2.json", 1, 0): EDITED,
    ("Email-Messages-Weather-SendMessage-2.json", 5, 0): ORDER,
    ("Email-Reminder-Weather-CompleteReminder-2.json", 1, 0): STALE,
    ("Email-Reminder-Weather-DeleteReminder-0.json", 1, 0): ORDER,
    ("Email-Reminder-Weather-DeleteReminder-0.json", 3, 0): STALE,
    ("Email-Reminder-Weather-GetReminder-0.json", 3, 1): EDITED,
    ("Email-Reminder-Weather-SearchInbox-1.json", 3, 0): ORDER,
    ("Email-Reminder-Weather-SendEmail-2.json", 1, 0): STALE,
    ("Messages-Reminder-Weather-AddReminder-1.json", 3, 0): STALE,
    ("Messages-Reminder-Weather-CompleteReminder-1.json", 3, 0): STALE,
    ("Messages-Reminder-Weather-ForecastWeather-1.json", 5, 1): STALE,
    ("Messages-Reminder-Weather-GetReminder-0.json", 1, 0): STALE,
    ("golden_conversation_1.json", 3, 1): STALE,
    ("golden_conversation_2.json", 1, 0): STALE,
}


def toy_env(logged_in: bool = True) -> Environment:
    """A small world of our own: two users, one alarm, one reminder, one city."""
    accounts = {
        "amy": {"username": "amy", "email": "amy@example.com", "phone": "555-000-1111",
                "name": "Amy", "password": "pw-amy", "session_token": None},
        "bo": {"username": "bo", "email": "bo@example.com", "phone": "555-000-2222",
               "name": "Bo", "password": "pw-bo", "session_token": None},
    }
    databases = {"Account": accounts, "Alarm": {"amy": {"a-1": {"alarm_id": "a-1",
                                                                 "time": "07:00:00"}}},
                 "Reminder": {"amy": {"r-1": {"reminder_id": "r-1", "task": "Water plants",
                                              "due_date": None, "status": "pending"}}},
                 "Weather": {"springfield": {"2023-05-01": {"date": "2023-05-01", "high": 70,
                                                            "low": 50, "conditions": "Sunny"}}},
                 "HistoricWeather": {}}
    session = None
    if logged_in:
        accounts["amy"]["session_token"] = "tok-amy"
        session = Session("amy", "tok-amy")
    env = Environment(PLUGINS, now=datetime(2023, 5, 1, 9))
    env.set_initial(databases, session)
    return env
