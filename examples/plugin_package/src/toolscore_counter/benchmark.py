"""A benchmark of our own, registered through the ``toolscore.benchmarks`` entry point: two
conversations over the Counter plugin, in ToolTalk's format, scored by ToolTalk's protocol and
call matcher. ``toolscore run counter --model ...`` runs it; nothing in toolscore is edited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.benchmarks.demo import DemoOptions
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore_counter import PLUGINS

DATA = Path(__file__).resolve().parent / "data"


class CounterBenchmark(ToolTalkBenchmark):
    """Counting things: one easy and one two-turn conversation over named counters."""

    name = "counter"
    description = "example package: two conversations over named counters (Counter plugin)"
    Options = DemoOptions  # ToolTalk's options, at most 4 calls per turn
    dataset = None  # the data ships with the package

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> CounterBenchmark:
        return cls(data_dir or DATA, split=options.split, tools_mode=options.tools,
                   strict=options.strict, embedder=options.embedder,
                   max_calls_per_turn=options.max_calls_per_turn,
                   max_tokens=options.max_tokens, seed=options.seed, plugins=PLUGINS)
