"""ToolTalk's Calendar plugin: events and meetings of the logged-in user.

Events are stored per user as {event_id: {event_id, name, event_type, start_time, end_time,
location, description, attendees}}. "Now" comes from the Environment's clock: nothing can be
scheduled in the past, which is why the conversations' timestamps matter.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import (
    check_text,
    current_user,
    find_item,
    parse_timestamp,
    random_id,
    require_text,
    require_text_list,
    strict,
    success,
)
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import json_copy, tool

CALENDAR_DB = "Calendar"
NOT_FOUND = "Event {id} not found."
NO_EVENTS = "User {username} has no events."
BAD_RANGE = "Start time must be before end time."
END_NEEDED = "new_end_time must be provided if new_start_time is provided."
START_NEEDED = "new_start_time must be provided if new_end_time is provided."
EVENT_TYPES = ("meeting", "event")
# the reference's wording where the strict simulator's differs
REFERENCE_BAD_TYPE = "Event type {event_type} not supported."
REFERENCE_NO_ATTENDEES = "Meeting must have attendees."
REFERENCE_BAD_ORDER = "Start time must be before end time."
REFERENCE_PAST = "Start time and end time must be in the future."


def _events(env: Environment, username: str) -> dict[str, Any] | None:
    """The user's events; None for a user the Calendar database has no entry for.

    Only CreateEvent creates that entry, as in the reference: until then QueryCalendar fails
    without reading its arguments, and a lookup by id finds nothing.
    """
    return env.db(CALENDAR_DB).get(username)


def _check_times(env: Environment, start_text: Any, end_text: Any, name: str) -> None:
    """Both times parsed, then their order, then "not in the past", as the reference checks
    them (the end cannot be past if the start is not and the end comes later)."""
    start = parse_timestamp(start_text)
    end = parse_timestamp(end_text)
    if end < start:
        raise ValueError("The end time is before the start time."
                         if strict(env) else REFERENCE_BAD_ORDER)
    if start < env.now:
        raise ValueError(f"{name} {start_text} is in the past." if strict(env)
                         else REFERENCE_PAST)


def _with_user(attendees: Any, username: Any) -> Any:
    """The reference's attendee list: the user added unless ``in`` it already, by ``+``; text
    is searched as text and cannot be added to ("can only concatenate str (not "list") to
    str"), a number cannot be searched ("argument of type 'int' is not iterable")."""
    return attendees if username in attendees else attendees + [username]


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
    # the reference checks the type (and a meeting's attendees) before the session and the times
    if event_type not in EVENT_TYPES:
        raise ValueError(f"event_type must be one of {', '.join(EVENT_TYPES)}, "
                         f"got {event_type!r}." if strict(env)
                         else REFERENCE_BAD_TYPE.format(event_type=event_type))
    if event_type == "meeting" and not attendees:
        raise ValueError("A meeting must have attendees." if strict(env)
                         else REFERENCE_NO_ATTENDEES)
    username = current_user(env, session_token)
    _check_times(env, start_time, end_time, "start_time")
    if strict(env):
        require_text(name, "name")
        require_text(location, "location", optional=True)
        require_text(description, "description", optional=True)
        attendees = require_text_list(attendees, "attendees", optional=True)
    if attendees is not None:
        attendees = _with_user(attendees, username)
    event_id = random_id(env, "CreateEvent", 8, 4)
    env.db(CALENDAR_DB).setdefault(username, {})[event_id] = {  # the reference's key order
        "event_id": event_id, "name": name, "event_type": event_type,
        "description": description, "start_time": start_time, "end_time": end_time,
        "location": location, "attendees": attendees,
    }
    return {"event_id": event_id}


def _event(env: Environment, username: str, event_id: Any) -> dict[str, Any]:
    events = _events(env, username)
    if events is None:  # not found, whatever the id (even one that is no valid key)
        raise LookupError(NOT_FOUND.format(id=event_id))
    return find_item(events, event_id, NOT_FOUND)


@tool("DeleteEvent", action=True, auth=True, equivalence=rule_for("DeleteEvent"))
def delete_event(env: Environment, session_token: str, event_id: str) -> dict[str, Any]:
    """Remove an event from the user's calendar.

    Args:
        event_id: The id of the event, as returned by CreateEvent or QueryCalendar.
    """
    username = current_user(env, session_token)
    _event(env, username, event_id)
    del env.db(CALENDAR_DB)[username][event_id]
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
    username = current_user(env, session_token)
    event = _event(env, username, event_id)
    # Each field is checked and written in turn, in the reference's order: a later check that
    # fails leaves the earlier fields changed (a new name stays when the times are refused).
    # The start and the end are only changed together.
    if new_name is not None:
        event["name"] = check_text(env, new_name, "new_name")
    if new_start_time is not None:
        if new_end_time is None:
            raise ValueError(END_NEEDED)
        _check_times(env, new_start_time, new_end_time, "new_start_time")
        event["start_time"] = new_start_time
    if new_end_time is not None:
        if new_start_time is None:
            raise ValueError(START_NEEDED)
        event["end_time"] = new_end_time
    if new_description is not None:
        event["description"] = check_text(env, new_description, "new_description")
    if new_location is not None:
        event["location"] = check_text(env, new_location, "new_location")
    if new_attendees is not None:  # the reference adds the user; the strict simulator does not
        event["attendees"] = (require_text_list(new_attendees, "new_attendees") if strict(env)
                              else _with_user(new_attendees, username))
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
    events = _events(env, username)
    if events is None:  # before the range is parsed
        raise LookupError(NO_EVENTS.format(username=username))
    start = parse_timestamp(start_time)
    end = parse_timestamp(end_time)
    if start > end:
        raise ValueError(BAD_RANGE)
    found = []
    for event in events.values():
        try:
            begins = parse_timestamp(event.get("start_time"))
            ends = parse_timestamp(event.get("end_time"))
        except (TypeError, ValueError):
            if strict(env):
                continue  # a malformed stored event is invisible rather than fatal
            raise
        # the reference's test: either end within the range, or the event spans it
        if (start <= begins <= end or start <= ends <= end
                or (begins <= start and ends >= end)):
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
