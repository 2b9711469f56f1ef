"""Bounded copies of what a tool call leaves in a run record.

A model controls the size of everything it sends: a 1 MiB tool name repeated 30 times once made
a 172 MB record (the name is stored as the call, in the "not found" exception, in the raw
arguments and twice in the transcript). A record must stay small enough to load, diff and
report, so every stored value is bounded: a value whose JSON text fits the limit is kept as it
is (every call of the released datasets is under 1.3 KB, so nothing real is touched), a longer
string keeps its head and says how long it was, and a container keeps the items that fit plus
one marker saying how many were dropped. Bounding is deterministic and never raises, and the
scorer reads the bounded record both during a run and on a rescore, so the two always agree.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.types import clean_text

# Per stored value (one call's name, arguments, response or exception; one message's text).
VALUE_LIMIT = 16_384
NAME_LIMIT = 1_024
_DEPTH_LIMIT = 64


def truncated_marker(length: int) -> str:
    return f"…[truncated: {length} chars in all]"


def bounded_text(text: Any, limit: int = VALUE_LIMIT) -> Any:
    """``text`` cut to ``limit`` characters plus a marker giving its full length, with lone
    surrogates replaced (a stored record must encode as UTF-8); non-strings are unchanged."""
    if not isinstance(text, str):
        return text
    if len(text) > limit:
        text = text[:limit] + truncated_marker(len(text))
    return clean_text(text)


def bounded(value: Any, limit: int = VALUE_LIMIT) -> Any:
    """A JSON value whose JSON text is at most about ``limit`` characters (markers included)
    and encodes as UTF-8; ``value`` itself when it already does. Dicts stay dicts and lists
    stay lists."""
    try:
        if len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")) <= limit:
            return value
    except (ValueError, TypeError, RecursionError):  # too deep, or broken Unicode to replace
        pass
    return _walk(value, [limit], 0)


def _walk(value: Any, budget: list[int], depth: int) -> Any:
    """Copy ``value`` while ``budget[0]`` (characters left, shared by the whole walk) lasts."""
    if isinstance(value, str):
        room = max(budget[0], 0)
        budget[0] -= min(len(value), room) + 2
        return bounded_text(value, room)
    if isinstance(value, (dict, list, tuple)):
        if depth >= _DEPTH_LIMIT:
            budget[0] -= 40
            return f"…[truncated: nested deeper than {_DEPTH_LIMIT}]"
        items = list(value.items()) if isinstance(value, dict) else list(value)
        kept: list[Any] = []
        for item in items:
            if budget[0] <= 0:
                break
            if isinstance(value, dict):
                key = bounded_text(str(item[0]), NAME_LIMIT)
                budget[0] -= len(key) + 4
                kept.append((key, _walk(item[1], budget, depth + 1)))
            else:
                budget[0] -= 1
                kept.append(_walk(item, budget, depth + 1))
        dropped = len(items) - len(kept)
        if isinstance(value, dict):
            out = dict(kept)
            if dropped:
                out["…"] = f"[truncated: {dropped} more keys]"
            return out
        if dropped:
            kept.append(f"…[truncated: {dropped} more items]")
        return kept
    if value is None or isinstance(value, (bool, int, float)):
        try:
            budget[0] -= len(json.dumps(value))
            return value
        except ValueError:  # an integer of more digits than Python will print
            budget[0] -= 60
            return "…[truncated: an integer too long to print]"
    return _walk(str(value), budget, depth)


def bounded_message(message: dict[str, Any], limit: int = VALUE_LIMIT) -> dict[str, Any]:
    """A transcript message (``Message.to_dict()`` shape) with its text, call names and call
    arguments bounded."""
    out = dict(message)
    if "content" in out:
        out["content"] = bounded_text(out["content"], limit)
    if "name" in out:
        out["name"] = bounded_text(out["name"], NAME_LIMIT)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [_bounded_call(c, limit) for c in calls]
    return out


def _bounded_call(call: Any, limit: int) -> Any:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return bounded(call, limit)
    fn = dict(call["function"])
    fn["name"] = bounded_text(fn.get("name"), NAME_LIMIT)
    fn["arguments"] = bounded_text(fn.get("arguments"), limit)
    return {**call, "function": fn}
