"""What every ToolTalk plugin shares: the session lookup, argument checks, timestamps and ids.

Two simulators live in these plugins. The default one is ToolTalk's as its code behaves: it
checks almost nothing, so a value of the wrong type fails where the reference's code trips over
it, with Python's own text ("'int' object has no attribute 'lower'", "strptime() argument 1
must be str, not list"), or goes through and is stored. Those texts are what the model reads
next and what the scorer compares, so they are part of the simulated world. The strict one
(``Environment.strict``, set by ``--strict``) checks types first and words a few errors more
clearly. Helpers here that only the strict simulator uses do nothing in the default one.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from toolscore.env.environment import Environment

ACCOUNT_DB = "Account"
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"

INVALID_SESSION = "The session token is invalid."
REFERENCE_INVALID_SESSION = "Invalid session_token."


def strict(env: Environment) -> bool:
    """Whether ``env`` runs the strict simulator (a world built elsewhere runs the default)."""
    return bool(getattr(env, "strict", False))


def current_user(env: Environment, session_token: Any) -> Any:
    """The username owning ``session_token`` in the Account database."""
    if isinstance(session_token, str):
        for username, account in env.peek(ACCOUNT_DB).items():  # a lookup: changes nothing
            if isinstance(account, dict) and account.get("session_token") == session_token:
                return username
    raise PermissionError(INVALID_SESSION if strict(env) else REFERENCE_INVALID_SESSION)


def require_text(value: Any, name: str, *, optional: bool = False) -> Any:
    """Check a string argument; model mistakes become a readable exception, not a crash."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {_type_name(value)}.")
    return value


def require_text_list(value: Any, name: str, *, optional: bool = False) -> Any:
    """Check a list-of-strings argument (a copy is returned, never the caller's list)."""
    if value is None and optional:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of strings, got {_type_name(value)}.")
    return list(value)


def check_text(env: Environment, value: Any, name: str, *, optional: bool = False) -> Any:
    """:func:`require_text` in the strict simulator; the value as it is in the default one."""
    return require_text(value, name, optional=optional) if strict(env) else value


def parse_timestamp(value: Any, fmt: str = DATETIME_FORMAT) -> datetime:
    """Parse a timestamp argument in ``fmt``.

    A bad value raises ``datetime.strptime``'s own error ("time data '8:30' does not match
    format '%H:%M:%S'", "strptime() argument 1 must be str, not int"): the reference simulator
    lets that text through to the model.
    """
    if isinstance(value, str):  # the same few timestamps are parsed on every replayed turn
        return _parse(value, fmt)
    return datetime.strptime(value, fmt)  # its TypeError text, not the cache's


@functools.lru_cache(maxsize=4096)
def _parse(value: str, fmt: str) -> datetime:
    return datetime.strptime(value, fmt)  # a datetime is immutable: sharing it is safe


def random_id(env: Environment, tool_name: str, *digits: int) -> str:
    """A generated id: dash-separated random hex groups of the given widths.

    Draws come from the tool's own seeded generator, one ``randint`` per group, in order; the
    recorded conversations refer to these exact ids (e.g. 8, 4, 4 -> 'e149636f-d9ca-0792').
    """
    rng = env.rng(tool_name)
    return "-".join(f"{rng.randint(0, 16**d - 1):0{d}x}" for d in digits)


def find_item(items: dict[str, Any], item_id: Any, missing: str) -> dict[str, Any]:
    """The user's item with this id (an alarm, event or reminder), or the simulator's error.

    ``missing`` is the error text with ``{id}`` for the id; each plugin words it its own way,
    as the reference does ("Alarm X not found.", "Reminder X not found in database"). An id
    that cannot be a key fails as the reference's lookup does ("unhashable type: 'list'").
    """
    if item_id not in items:
        raise LookupError(missing.format(id=item_id))
    return items[item_id]


def success() -> dict[str, str]:
    return {"status": "success"}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__
