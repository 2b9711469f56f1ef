"""What the serve tests share: ToolTalk's served world, conversations to replay, the calls a
conversation's ground truth makes, deliberately wrong calls, and how an in-process simulator
result reads over MCP."""

from __future__ import annotations

import json
from typing import Any

EASY = ["AddAlarm-easy", "CreateEvent-easy", "ChangePassword-easy", "SendEmail-easy",
        "DeleteAlarm-easy", "QueryCalendar-easy"]
# a few hard conversations, chosen for variety: login flows, ids drawn by tools, deletions
HARD_COUNT = 6


def conversation_ids(world: Any) -> list[str]:
    hard = sorted(s.id for s in world.benchmark.samples() if s.meta["split"] == "hard")
    step = max(1, len(hard) // HARD_COUNT)
    return EASY + hard[::step][:HARD_COUNT]


def ground_truth_calls(conversation: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments or {})) for t in conversation.turns for c in t.apis]


def wrong_calls(conversation: Any, tools: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """An unknown argument, a missing argument and (where the tool takes one) a bad date, on
    the conversation's first ground-truth call."""
    name, args = ground_truth_calls(conversation)[0]
    visible = {k: v for k, v in args.items() if k not in tools[name].hidden}
    out = [(name, {**visible, "bogus_argument": 1})]
    required = tools[name].parameters.get("required", [])
    if required:
        out.append((name, {k: v for k, v in visible.items() if k != required[0]}))
    for key in visible:
        if "time" in key or "date" in key:
            out.append((name, {**visible, key: "the 31st of Smarch"}))
    return out


def visible_arguments(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """What an MCP client sends: hidden parameters stay server side."""
    return {k: v for k, v in arguments.items() if k not in tool.hidden}


def over_mcp(record: Any) -> tuple[bool, str]:
    """How the in-process result ``record`` must read as an MCP tool result."""
    if record.exception is not None:
        return True, record.exception
    return False, json.dumps(record.response)


def as_read(result: Any) -> tuple[bool, str]:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return bool(result.is_error), result.content[0].text
