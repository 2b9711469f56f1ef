"""The 7 simulated plugins (28 tools) of the ToolTalk benchmark.

Each module implements one plugin over its JSON database, reproducing the behaviour of the
reference simulator (responses, exception texts, session rules and seeded ids), so that replaying
a conversation's ground-truth calls gives back the recorded results and any other call gets the
answer ToolTalk's code gives it. A world whose ``Environment.strict`` is set runs a checked
variant instead (see :mod:`.common`).
"""

from __future__ import annotations

from toolscore.benchmarks.tooltalk.equivalence import SIMILARITY_FIELDS
from toolscore.benchmarks.tooltalk.plugins import (
    account,
    alarm,
    calendar,
    email,
    message,
    reminder,
    weather,
)
from toolscore.env.plugin import Plugin
from toolscore.env.tool import Tool

PLUGINS: list[Plugin] = [account.PLUGIN, alarm.PLUGIN, calendar.PLUGIN, email.PLUGIN,
                         message.PLUGIN, reminder.PLUGIN, weather.PLUGIN]
ALL_TOOLS: dict[str, Tool] = {t.name: t for p in PLUGINS for t in p.tools}

for _name, _tool in ALL_TOOLS.items():
    # tells the scorer which texts to embed up front
    _tool.extra["similarity_fields"] = SIMILARITY_FIELDS.get(_name, ())
    # argument errors name the reference's callable: "AddAlarm.call() missing 1 required ..."
    _tool.call_label = f"{_name}.call"
del _name, _tool

__all__ = ["ALL_TOOLS", "PLUGINS"]
