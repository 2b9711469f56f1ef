"""ToolTalk's Alarm plugin: daily alarms, stored per user as {alarm_id: {alarm_id, time}}."""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import (
    current_user,
    find_item,
    parse_timestamp,
    random_id,
    strict,
    success,
)
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import json_copy, tool

ALARM_DB = "Alarm"
TIME_FORMAT = "%H:%M:%S"


NOT_FOUND = "Alarm {id} not found."
BAD_RANGE = "Start range must be earlier than end range."


def _alarms(env: Environment, session_token: str) -> dict[str, Any] | None:
    """The user's alarms; None for a user the Alarm database has no entry for.

    Only AddAlarm creates that entry, as in the reference: until then FindAlarms answers an
    empty list without reading its arguments, which differs from a user whose alarms were all
    deleted.
    """
    return env.db(ALARM_DB).get(current_user(env, session_token))


def _clock(value: Any) -> str:
    """A time of day normalised to HH:MM:SS, so that stored times compare as strings."""
    return parse_timestamp(value, TIME_FORMAT).strftime(TIME_FORMAT)


@tool("AddAlarm", action=True, auth=True, equivalence=rule_for("AddAlarm"))
def add_alarm(env: Environment, session_token: str, time: str) -> dict[str, Any]:
    """Set a new alarm; returns the id of the alarm.

    Args:
        time: The time the alarm rings, in 24-hour format %H:%M:%S, e.g. 18:30:00.
    """
    when = _clock(time)  # before the session lookup, as in the reference
    alarms = env.db(ALARM_DB).setdefault(current_user(env, session_token), {})
    alarm_id = random_id(env, "AddAlarm", 4, 4)
    # the reference stores the time as given ("8:5:0"); the strict simulator as HH:MM:SS
    alarms[alarm_id] = {"alarm_id": alarm_id, "time": when if strict(env) else time}
    return {"alarm_id": alarm_id}


@tool("DeleteAlarm", action=True, auth=True, equivalence=rule_for("DeleteAlarm"))
def delete_alarm(env: Environment, session_token: str, alarm_id: str) -> dict[str, Any]:
    """Delete one of the user's alarms.

    Args:
        alarm_id: The id of the alarm, as returned by AddAlarm or FindAlarms.
    """
    alarms = _alarms(env, session_token)
    if alarms is None:  # not found, whatever the id (even one that is no valid key)
        raise LookupError(NOT_FOUND.format(id=alarm_id))
    find_item(alarms, alarm_id, NOT_FOUND)
    del alarms[alarm_id]
    return success()


@tool("FindAlarms", auth=True, equivalence=rule_for("FindAlarms"))
def find_alarms(env: Environment, session_token: str, start_range: str | None = None,
                end_range: str | None = None) -> dict[str, Any]:
    """List the user's alarms, optionally only those within a time range.

    Args:
        start_range: Earliest alarm time to include, %H:%M:%S (default 00:00:00).
        end_range: Latest alarm time to include, %H:%M:%S (default 23:59:59).
    """
    alarms = _alarms(env, session_token)
    if alarms is None:
        return {"alarms": []}  # the range is not even parsed
    if not strict(env):
        return {"alarms": _found(alarms, start_range, end_range)}
    start = _clock(start_range) if start_range is not None else "00:00:00"
    end = _clock(end_range) if end_range is not None else "23:59:59"
    if start > end:
        raise ValueError(BAD_RANGE)
    found = [dict(a) for a in alarms.values()
             if isinstance(a.get("time"), str) and start <= a["time"] <= end]
    return {"alarms": found}


def _found(alarms: dict[str, Any], start_range: Any, end_range: Any) -> list[dict[str, Any]]:
    """The reference's listing: times are compared as parsed times, each bound only if given,
    and a stored time that does not parse fails the call with strptime's text."""
    start = parse_timestamp(start_range, TIME_FORMAT) if start_range is not None else None
    end = parse_timestamp(end_range, TIME_FORMAT) if end_range is not None else None
    if start is not None and end is not None and start > end:
        raise ValueError(BAD_RANGE)
    found = []
    for alarm in alarms.values():
        when = parse_timestamp(alarm["time"], TIME_FORMAT)
        if (start is None or when >= start) and (end is None or when <= end):
            found.append(json_copy(alarm))
    return found


PLUGIN = Plugin(
    "Alarm",
    [add_alarm, delete_alarm, find_alarms],
    databases=(ALARM_DB,),
    description="Daily alarms of the logged-in user.",
)
