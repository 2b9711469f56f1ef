"""A model's reply as BFCL stores it and decodes it (its OpenAI function-calling handler).

Stored ("result" in BFCL's result files): the tool calls as a list of
``{name: arguments JSON text}``, or the reply's text when it made no call. Decoded: each call's
arguments parsed, ``[{name: {argument: value}}]``. Decoding a text fails, with the message
Python gives for treating a character as a call (the reference iterates over whatever was
stored); an empty text is an empty iteration and so decodes, to no call at all. Both quirks
are the reference's and decide its verdicts (an empty reply is "no call" for irrelevance and
a wrong format elsewhere), so they are kept.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.types import Reply


def raw_result(reply: Reply) -> Any:
    """What BFCL's handler keeps of a reply: its calls, or else its text (None when the reply
    has none: the reference stores that null, and decoding it fails)."""
    if reply.tool_calls:
        return [{c.name: c.arguments} for c in reply.tool_calls]
    return reply.text


def decode(raw: Any) -> list[dict[str, Any]]:
    """The calls of a stored result, as the reference decodes them; raises what it raises."""
    calls = []
    for call in raw:
        name = list(call.keys())[0]
        calls.append({name: json.loads(call[name])})
    return calls


def try_decode(raw: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(decoded calls, None), or (None, the decoding error's text)."""
    try:
        return decode(raw), None
    except Exception as e:  # any failure of the model's output is a decoding failure
        return None, str(e)
