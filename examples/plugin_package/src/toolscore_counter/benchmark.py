"""A benchmark of our own, registered through the ``toolscore.benchmarks`` entry point: two
conversations over the Counter plugin, in ToolTalk's format, scored by ToolTalk's protocol and
call matcher. ``toolscore run counter --model ...`` runs it; nothing in toolscore is edited."""

from __future__ import annotations

from pathlib import Path

from toolscore.benchmarks.demo import DemoOptions
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore_counter import PLUGINS

DATA = Path(__file__).resolve().parent / "data"


#: Counting things: one easy and one two-turn conversation over named counters. ToolTalk's
#: class over this package's data and plugin, so it takes every option ToolTalk's does
#: (``--protocol``, ``--plugins`` and ``--mcp-server`` with ``--data``, ``--call-api``...).
CounterBenchmark = ToolTalkBenchmark.variant(
    "counter", "example package: two conversations over named counters (Counter plugin)",
    options=DemoOptions,  # ToolTalk's options, at most 4 calls per turn
    data=DATA, plugins=PLUGINS)
