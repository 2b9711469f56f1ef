"""The built-in ``demo`` benchmark: six short conversations over our own Notes, Shopping and
Calculator tools, written for toolscore (no third-party text or data).

It exists so that anyone can run the whole pipeline offline in a couple of minutes, even with a
135M-parameter local model: it uses exactly the ToolTalk conversation format, protocol and
scorer, only with smaller, easier data and tools that need no login.

The data folder mirrors a ToolTalk release, so ToolTalk's loader reads it unchanged::

    data/easy/demo-*.json       one ground-truth call each
    data/tooltalk/demo-*.json   two calls over two assistant turns (ToolTalk's "hard" split)
    data/databases/<Name>.json  initial state of each plugin's database

The helpers below read that folder without depending on the ToolTalk benchmark package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import option
from toolscore.benchmarks.demo.plugins import ALL_TOOLS, PLUGINS
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark, ToolTalkOptions
from toolscore.env.environment import Environment

# split name -> folder, as in a ToolTalk release ("hard" conversations live in tooltalk/)
SPLITS: dict[str, str] = {"easy": "easy", "hard": "tooltalk"}
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
# Every demo turn needs at most two calls; a small model that loops is cut off early so the
# demo stays a couple of minutes long on one CPU thread.
MAX_CALLS_PER_TURN = 4

__all__ = ["ALL_TOOLS", "PLUGINS", "DemoBenchmark", "DemoOptions", "SPLITS", "data_dir", "ground_truth", "load",
           "load_databases", "make_demo", "make_environment"]


def data_dir() -> Path:
    """Root of the demo data, laid out like a ToolTalk release (easy/, tooltalk/, databases/)."""
    return Path(__file__).resolve().parent / "data"


def load(split: str | None = None) -> list[dict[str, Any]]:
    """The demo conversations as ToolTalk-format dicts, sorted by file name.

    ``split`` is "easy", "hard" (alias "tooltalk") or None for both.
    """
    if split is None:
        names = list(SPLITS)
    elif split in SPLITS or split in SPLITS.values():
        names = [split]
    else:
        raise ValueError(f"Unknown demo split {split!r}; known: {', '.join(SPLITS)}")
    conversations: list[dict[str, Any]] = []
    for name in names:
        folder = data_dir() / SPLITS.get(name, name)
        for path in sorted(folder.glob("*.json")):
            conversations.append(json.loads(path.read_text(encoding="utf-8")))
    return conversations


def load_databases() -> dict[str, Any]:
    """Initial databases, one per file in data/databases/ (file stem -> JSON object)."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((data_dir() / "databases").glob("*.json"))}


def make_environment(conversation: dict[str, Any],
                     databases: dict[str, Any] | None = None) -> Environment:
    """An Environment for one conversation: demo plugins, fresh databases, the clock at its
    ``metadata.timestamp``. No session is needed: no demo tool requires a login."""
    now = datetime.strptime(conversation["metadata"]["timestamp"], TIMESTAMP_FORMAT)
    return Environment(PLUGINS, load_databases() if databases is None else databases, now=now)


def ground_truth(conversation: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The ground-truth ``apis`` of each assistant turn, in order (empty list for none)."""
    return [list(turn.get("apis") or []) for turn in conversation["conversation"]
            if turn["role"] == "assistant"]


@dataclass
class DemoOptions(ToolTalkOptions):
    max_calls_per_turn: int | None = option(
        MAX_CALLS_PER_TURN, "Stop a turn after this many tool calls.")


class DemoBenchmark(ToolTalkBenchmark):
    """ToolTalk's protocol and scorer over the demo data and plugins (ships with the package)."""

    name = "demo"
    description = ("built-in: a few conversations over our own small tools (ships with the "
                   "package)")
    Options = DemoOptions
    dataset = None

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> DemoBenchmark:
        plugins = PLUGINS
        if options.plugins:
            from toolscore.env.registry import load_plugins

            plugins = [p for name in options.plugins for p in load_plugins(name)]
        return cls(data_dir or globals()["data_dir"](), split=options.split,
                   tools_mode=options.tools, strict=options.strict, embedder=options.embedder,
                   max_calls_per_turn=options.max_calls_per_turn,
                   max_tokens=options.max_tokens, seed=options.seed, plugins=plugins)


def make_demo(**options: Any) -> DemoBenchmark:
    """The demo as a runnable benchmark (``options`` as ``toolscore run demo`` takes them)."""
    from toolscore.benchmarks.base import parse_options

    return DemoBenchmark.create(None, parse_options(DemoOptions, options, "benchmark 'demo'"))
