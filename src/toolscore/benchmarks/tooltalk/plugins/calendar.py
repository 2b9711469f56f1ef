"""ToolTalk's Calendar plugin: events and meetings of the logged-in user.

Events are stored per user as {event_id: {event_id, name, event_type, start_time, end_time,
location, description, attendees}}. "Now" comes from the Environment's clock: nothing can be
scheduled in the past, which is why the conversations' timestamps matter.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any, Literal

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.account import (
    current_user,
    find_item,
    parse_timestamp,
    random_id,
    require_text,
    require_text_list,
    success,
)
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import json_copy, tool

CALENDAR_DB = "Calendar"
NOT_FOUND = "Event {id} not found."
EVENT_TYPES = ("meeting", "event")


def _events(env: Environment, username: str) -> dict[str, Any]:
    return env.db(CALENDAR_DB).setdefault(username, {})


def _future(env: Environment, value: Any, name: str) -> datetime:
    when = parse_timestamp(value)
    if when < env.now:
        raise ValueError(f"{name} {value} is in the past.")
    return when


def _check_order(start: datetime, end: datetime) -> None:
    if end < start:
        raise ValueError("The end time is before the start time.")


@tool("CreateEvent", action=True, auth=True, equivalence=rule_for("CreateEvent"))
def create_event(env: Environment, session_token: str, name: str,
                 event_type: Literal["meeting", "event"], start_time: str, end_time: str,
                 location: str | None = None, description: str | None = None,
                 attendees: list[str] | None = None) -> dict[str, Any]:
    """Add an event or a meeting to the user's calendar; returns the id of the new event.

    A meeting needs attendees; the user is added to the attendees automatically.

    Args:
        name: The title of the event.
        event_type: "meeting" for something with other people, "event" for anything else.
        start_time: When it starts, %Y-%m-%d %H:%M:%S. Must not be in the past.
        end_time: When it ends, %Y-%m-%d %H:%M:%S.
        location: Where it takes place.
        description: Details about the event.
        attendees: Usernames of the people invited.
    """
    username = current_user(env, session_token)
    require_text(name, "name")
    if event_type not in EVENT_TYPES:
        raise ValueError(f"event_type must be one of {', '.join(EVENT_TYPES)}, "
                         f"got {event_type!r}.")
    _check_order(_future(env, start_time, "start_time"), parse_timestamp(end_time))
    require_text(location, "location", optional=True)
    require_text(description, "description", optional=True)
    attendees = require_text_list(attendees, "attendees", optional=True)
    if event_type == "meeting" and not attendees:
        raise ValueError("A meeting must have attendees.")
    if attendees is not None and username not in attendees:
        attendees.append(username)
    event_id = random_id(env, "CreateEvent", 8, 4)
    _events(env, username)[event_id] = {
        "event_id": event_id, "name": name, "event_type": event_type,
        "start_time": start_time, "end_time": end_time, "location": location,
        "description": description, "attendees": attendees,
    }
    return {"event_id": event_id}


def _event(env: Environment, username: str, event_id: Any) -> dict[str, Any]:
    return find_item(_events(env, username), event_id, NOT_FOUND)


@tool("DeleteEvent", action=True, auth=True, equivalence=rule_for("DeleteEvent"))
def delete_event(env: Environment, session_token: str, event_id: str) -> dict[str, Any]:
    """Remove an event from the user's calendar.

    Args:
        event_id: The id of the event, as returned by CreateEvent or QueryCalendar.
    """
    username = current_user(env, session_token)
    _event(env, username, event_id)
    del _events(env, username)[event_id]
    return success()


@tool("ModifyEvent", action=True, auth=True, equivalence=rule_for("ModifyEvent"))
def modify_event(env: Environment, session_token: str, event_id: str,
                 new_name: str | None = None, new_start_time: str | None = None,
                 new_end_time: str | None = None, new_location: str | None = None,
                 new_description: str | None = None,
                 new_attendees: list[str] | None = None) -> dict[str, Any]:
    """Change an existing event; only the fields given are changed.

    Args:
        event_id: The id of the event to change.
        new_name: The new title.
        new_start_time: The new start, %Y-%m-%d %H:%M:%S. Must not be in the past.
        new_end_time: The new end, %Y-%m-%d %H:%M:%S. Must not be in the past.
        new_location: The new location.
        new_description: The new description.
        new_attendees: The complete new list of attendee usernames.
    """
    event = _event(env, current_user(env, session_token), event_id)
    changes: dict[str, Any] = {}
    if new_name is not None:
        changes["name"] = require_text(new_name, "new_name")
    if new_location is not None:
        changes["location"] = require_text(new_location, "new_location")
    if new_description is not None:
        changes["description"] = require_text(new_description, "new_description")
    if new_attendees is not None:
        changes["attendees"] = require_text_list(new_attendees, "new_attendees")
    if new_start_time is not None:
        _future(env, new_start_time, "new_start_time")
        changes["start_time"] = new_start_time
    if new_end_time is not None:
        _future(env, new_end_time, "new_end_time")
        changes["end_time"] = new_end_time
    if "start_time" in changes or "end_time" in changes:
        start = changes.get("start_time", event.get("start_time"))
        end = changes.get("end_time", event.get("end_time"))
        if isinstance(start, str) and isinstance(end, str):
            _check_order(parse_timestamp(start), parse_timestamp(end))
    event.update(changes)
    return success()


@tool("QueryCalendar", auth=True, equivalence=rule_for("QueryCalendar"))
def query_calendar(env: Environment, session_token: str, start_time: str,
                   end_time: str) -> dict[str, Any]:
    """List the user's events that overlap a time range.

    Args:
        start_time: Start of the range, %Y-%m-%d %H:%M:%S.
        end_time: End of the range, %Y-%m-%d %H:%M:%S.
    """
    username = current_user(env, session_token)
    start = parse_timestamp(start_time)
    end = parse_timestamp(end_time)
    found = []
    for event in _events(env, username).values():
        try:
            begins = parse_timestamp(event.get("start_time"))
            ends = parse_timestamp(event.get("end_time"))
        except (TypeError, ValueError):
            continue  # a malformed stored event is invisible rather than fatal
        if begins <= end and ends >= start:
            found.append(json_copy(event))
    return {"events": found}


def _as_documented_by_the_reference(schema: dict[str, Any]) -> dict[str, Any]:
    """CreateEvent's parameters as the reference showed them: the event_type enum on ``name``.

    A known defect of the reference documentation. Our schema puts the enum where it belongs;
    this variant is kept in ``extra["reference_parameters"]`` for runs that want the model to
    see exactly what the paper's models saw.
    """
    reference = copy.deepcopy(schema)
    properties = reference["properties"]
    properties["name"]["enum"] = properties["event_type"].pop("enum")
    return reference


create_event.extra["reference_parameters"] = _as_documented_by_the_reference(
    create_event.parameters)

PLUGIN = Plugin(
    "Calendar",
    [create_event, delete_event, modify_event, query_calendar],
    databases=(CALENDAR_DB,),
    description="Events and meetings of the logged-in user.",
)
