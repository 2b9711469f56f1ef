"""ToolTalk's Email plugin: search the user's inbox and send emails.

Inboxes are stored per user as {email_id: {email_id, date, sender, receivers, subject, body}}.
Emails dated after "now" have not arrived yet and are invisible. Sending is simulated: the new
email gets an id but is stored nowhere (as in the reference). The keyword search defined here is
shared with the Messages plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.account import EMAIL_PATTERN
from toolscore.benchmarks.tooltalk.plugins.common import (
    current_user,
    parse_timestamp,
    random_id,
    require_text,
    require_text_list,
    strict,
)
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import json_copy, tool

EMAIL_DB = "Email"
MAX_RESULTS = 5
MATCH_TYPES = ("any", "all")
BAD_DATES = "Start date must be earlier than end date."
BAD_ADDRESS = "{address} is not a valid email address."
# the reference's wording where the strict simulator's differs
NO_FILTER = "At least one of query, sender, start_date, end_date must be provided."
REFERENCE_BAD_MATCH_TYPE = 'match_type must be either "any" or "all".'


def search_items(
    env: Environment,
    items: Iterable[dict[str, Any]],
    *,
    date_key: str,
    text_keys: tuple[str, ...],
    query: Any,
    match_type: Any,
    sender: Any,
    start_date: Any,
    end_date: Any,
) -> list[dict[str, Any]]:
    """The 5 most recent items matching every given filter, newest first.

    ``query`` is split into keywords, each a case-insensitive substring of one of ``text_keys``;
    ``match_type`` says whether any or all keywords must occur. Items dated after ``env.now``
    are skipped. When more than 5 match, the most recent 5 are kept. The arguments are checked
    in the reference's order: the match type, the dates, their order, then the texts.

    That is the strict simulator's search; the default one is :func:`reference_search`.
    """
    if not strict(env):
        return reference_search(env, items, date_key=date_key, text_keys=text_keys,
                                query=query, match_type=match_type, sender=sender,
                                start_date=start_date, end_date=end_date)
    if match_type not in MATCH_TYPES:
        raise ValueError(f"match_type must be one of {', '.join(MATCH_TYPES)}, "
                         f"got {match_type!r}.")
    start = parse_timestamp(start_date) if start_date is not None else None
    end = parse_timestamp(end_date) if end_date is not None else None
    if start is not None and end is not None and start > end:
        raise ValueError(BAD_DATES)
    require_text(query, "query", optional=True)
    require_text(sender, "sender", optional=True)
    keywords = query.lower().split() if query else []
    combine = all if match_type == "all" else any
    found: list[tuple[Any, int, dict[str, Any]]] = []
    for position, item in enumerate(items):
        try:
            when = parse_timestamp(item.get(date_key))
        except (TypeError, ValueError):
            continue  # undated items cannot be placed relative to "now"
        if when > env.now or (start and when < start) or (end and when > end):
            continue
        if sender is not None and str(item.get("sender", "")).lower() != sender.lower():
            continue
        text = " ".join(str(item.get(k) or "") for k in text_keys).lower()
        if keywords and not combine(k in text for k in keywords):
            continue
        found.append((when, position, item))
    latest = sorted(found, key=lambda f: f[0], reverse=True)[:MAX_RESULTS]
    return [json_copy(item) for _, _, item in latest]


def reference_search(
    env: Environment,
    items: Iterable[dict[str, Any]],
    *,
    date_key: str,
    text_keys: tuple[str, ...],
    query: Any,
    match_type: Any,
    sender: Any,
    start_date: Any,
    end_date: Any,
) -> list[dict[str, Any]]:
    """ToolTalk's own search, as its code behaves.

    At least one filter must be given (``match_type`` is none); a query that is not text fails
    on ``.lower()`` unless it is empty-like (0, [], "": no keyword filter then), and a blank
    one has no keywords, so "any" of them matches nothing while "all" matches everything. The
    sender must be equal, letter case included.
    """
    if query is None and sender is None and start_date is None and end_date is None:
        raise ValueError(NO_FILTER)
    if match_type not in ["any", "all"]:
        raise ValueError(REFERENCE_BAD_MATCH_TYPE)
    start = parse_timestamp(start_date) if start_date is not None else None
    end = parse_timestamp(end_date) if end_date is not None else None
    if start is not None and end is not None and start > end:
        raise ValueError(BAD_DATES)
    keywords = query.lower().split() if query else None
    found: list[tuple[Any, dict[str, Any]]] = []
    for item in items:
        when = parse_timestamp(item[date_key])
        if when > env.now or (sender is not None and sender != item["sender"]):
            continue
        if (start is not None and start > when) or (end is not None and end < when):
            continue
        if keywords is not None:
            texts = [item[k].lower() for k in text_keys]
            hits = [any(k in text for text in texts) for k in keywords]
            if not (any(hits) if match_type == "any" else all(hits)):
                continue
        found.append((when, item))
    latest = sorted(found, key=lambda f: f[0], reverse=True)[:MAX_RESULTS]
    return [json_copy(item) for _, item in latest]


@tool("SearchInbox", auth=True, equivalence=rule_for("SearchInbox"))
def search_inbox(env: Environment, session_token: str, query: str | None = None,
                 match_type: Literal["any", "all"] = "any", sender: str | None = None,
                 start_date: str | None = None,
                 end_date: str | None = None) -> dict[str, Any]:
    """Search the user's inbox; returns at most the 5 most recent matching emails.

    Args:
        query: Keywords to look for in the subject and body (case-insensitive).
        match_type: Whether an email must contain "any" (default) or "all" of the keywords.
        sender: Only emails from this email address.
        start_date: Only emails received at or after this time, %Y-%m-%d %H:%M:%S.
        end_date: Only emails received at or before this time, %Y-%m-%d %H:%M:%S.
    """
    inbox = env.db(EMAIL_DB).get(current_user(env, session_token))
    if not inbox:  # no inbox or an empty one: nothing is checked, as in the reference
        return {"emails": []}
    emails = search_items(env, inbox.values(), date_key="date", text_keys=("subject", "body"),
                          query=query, match_type=match_type, sender=sender,
                          start_date=start_date, end_date=end_date)
    return {"emails": emails}


@tool("SendEmail", action=True, auth=True, equivalence=rule_for("SendEmail"))
def send_email(env: Environment, session_token: str, to: list[str], subject: str,
               body: str) -> dict[str, Any]:
    """Send an email from the user's address; returns the id of the sent email.

    Args:
        to: Email addresses of the recipients.
        subject: The subject line.
        body: The text of the email.
    """
    current_user(env, session_token)
    # Each recipient is checked in turn, as the reference does, so the first bad one is named;
    # an empty list is sent to nobody, without an error. The reference iterates whatever it
    # is given (the letters of a text, "'int' object is not iterable") and checks nothing else.
    if not strict(env):
        for address in to:
            if not EMAIL_PATTERN.match(address):
                raise ValueError(BAD_ADDRESS.format(address=address))
        return {"email_id": random_id(env, "SendEmail", 2, 4, 8)}
    if not isinstance(to, list):
        require_text_list(to, "to")  # raises the usual type error
    for address in to:
        if not isinstance(address, str):
            require_text_list(to, "to")  # raises the usual type error
        if not EMAIL_PATTERN.match(address):
            raise ValueError(BAD_ADDRESS.format(address=address))
    require_text(subject, "subject")
    require_text(body, "body")
    return {"email_id": random_id(env, "SendEmail", 2, 4, 8)}


PLUGIN = Plugin(
    "Email",
    [search_inbox, send_email],
    databases=(EMAIL_DB,),
    description="The logged-in user's email inbox.",
)
