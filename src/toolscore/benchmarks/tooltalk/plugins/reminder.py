"""ToolTalk's Reminder plugin: a to-do list per user.

Reminders are stored as {reminder_id: {reminder_id, task, due_date (or null), status}} with
status "pending" or "complete".
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import (
    check_text,
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

REMINDER_DB = "Reminder"
NOT_FOUND = "Reminder {id} not found in database"


def _reminders(env: Environment, session_token: str) -> dict[str, Any]:
    """The user's reminders, for a user the Reminder database may have no entry for yet.

    Only AddReminder creates that entry (even when it then refuses the due date), as in the
    reference; a lookup by id for a user without one fails as the reference's does, with the
    text of its KeyError: the quoted username.
    """
    username = current_user(env, session_token)
    reminders = env.db(REMINDER_DB).get(username)
    if reminders is None:
        raise LookupError(repr(username))
    return reminders


def _reminder(env: Environment, session_token: str, reminder_id: Any) -> dict[str, Any]:
    return find_item(_reminders(env, session_token), reminder_id, NOT_FOUND)


@tool("AddReminder", action=True, auth=True, equivalence=rule_for("AddReminder"))
def add_reminder(env: Environment, session_token: str, task: str,
                 due_date: str | None = None) -> dict[str, Any]:
    """Add a task to the user's reminders; returns the id of the new reminder.

    Args:
        task: What the user wants to be reminded of.
        due_date: When it is due, %Y-%m-%d %H:%M:%S.
    """
    reminders = env.db(REMINDER_DB).setdefault(current_user(env, session_token), {})
    if due_date is not None:
        # the reference rewords a date that does not parse; a value that is no text fails
        # with strptime's own TypeError text, which the strict simulator rewords too
        try:
            parse_timestamp(due_date)
        except (TypeError, ValueError) as e:
            if isinstance(e, TypeError) and not strict(env):
                raise
            raise ValueError(f"Invalid due_date: {due_date}") from None
    check_text(env, task, "task")
    reminder_id = random_id(env, "AddReminder", 2, 4)
    reminders[reminder_id] = {"reminder_id": reminder_id, "task": task, "due_date": due_date,
                              "status": "pending"}
    return {"reminder_id": reminder_id}


@tool("CompleteReminder", action=True, auth=True, equivalence=rule_for("CompleteReminder"))
def complete_reminder(env: Environment, session_token: str, reminder_id: str) -> dict[str, Any]:
    """Mark one of the user's reminders as done.

    Args:
        reminder_id: The id of the reminder, as returned by AddReminder or GetReminders.
    """
    reminder = _reminder(env, session_token, reminder_id)
    if reminder.get("status") == "complete":
        raise ValueError(f"Reminder {reminder_id} already completed")
    reminder["status"] = "complete"
    return success()


@tool("DeleteReminder", action=True, auth=True, equivalence=rule_for("DeleteReminder"))
def delete_reminder(env: Environment, session_token: str, reminder_id: str) -> dict[str, Any]:
    """Remove one of the user's reminders.

    Args:
        reminder_id: The id of the reminder, as returned by AddReminder or GetReminders.
    """
    _reminder(env, session_token, reminder_id)
    del _reminders(env, session_token)[reminder_id]
    return success()


@tool("GetReminders", auth=True, equivalence=rule_for("GetReminders"))
def get_reminders(env: Environment, session_token: str) -> dict[str, Any]:
    """List all of the user's reminders, pending and complete."""
    reminders = env.db(REMINDER_DB).get(current_user(env, session_token)) or {}
    return {"reminders": [json_copy(r) for r in reminders.values()]}


PLUGIN = Plugin(
    "Reminder",
    [add_reminder, complete_reminder, delete_reminder, get_reminders],
    databases=(REMINDER_DB,),
    description="To-do reminders of the logged-in user.",
)
