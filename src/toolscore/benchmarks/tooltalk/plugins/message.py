"""ToolTalk's Messages plugin: search the user's chat messages and send new ones.

Messages are stored per user as {message_id: {message_id, timestamp, sender, message}}; the
search is the Email plugin's one (messages after "now" are invisible). Sending is simulated: the
new message gets an id but is stored nowhere, and the receiver is not checked (conversations send
to people who have no account), both as in the reference.
"""

from __future__ import annotations

from typing import Any, Literal

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import (
    check_text,
    current_user,
    random_id,
)
from toolscore.benchmarks.tooltalk.plugins.email import search_items
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import tool

MESSAGE_DB = "Message"
EMPTY_MESSAGE = "Message cannot be empty."


@tool("SearchMessages", auth=True, equivalence=rule_for("SearchMessages"))
def search_messages(env: Environment, session_token: str, query: str | None = None,
                    match_type: Literal["any", "all"] = "any", sender: str | None = None,
                    start_date: str | None = None,
                    end_date: str | None = None) -> dict[str, Any]:
    """Search the messages the user received; returns at most the 5 most recent matches.

    Args:
        query: Keywords to look for in the message text (case-insensitive).
        match_type: Whether a message must contain "any" (default) or "all" of the keywords.
        sender: Only messages from this username.
        start_date: Only messages received at or after this time, %Y-%m-%d %H:%M:%S.
        end_date: Only messages received at or before this time, %Y-%m-%d %H:%M:%S.
    """
    received = env.db(MESSAGE_DB).get(current_user(env, session_token))
    if received is None:  # nothing is checked, as in the reference (an empty entry is searched)
        return {"messages": []}
    messages = search_items(env, received.values(), date_key="timestamp",
                            text_keys=("message",), query=query, match_type=match_type,
                            sender=sender, start_date=start_date, end_date=end_date)
    return {"messages": messages}


@tool("SendMessage", action=True, auth=True, equivalence=rule_for("SendMessage"))
def send_message(env: Environment, session_token: str, receiver: str,
                 message: str) -> dict[str, Any]:
    """Send a chat message to another user; returns the id of the sent message.

    Args:
        receiver: The username of the person to message.
        message: The text to send.
    """
    current_user(env, session_token)
    if message == "":
        raise ValueError(EMPTY_MESSAGE)
    check_text(env, receiver, "receiver")
    check_text(env, message, "message")
    return {"message_id": random_id(env, "SendMessage", 8, 8)}


PLUGIN = Plugin(
    "Messages",
    [search_messages, send_message],
    databases=(MESSAGE_DB,),
    description="Chat messages of the logged-in user.",
)
