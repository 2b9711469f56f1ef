"""The built-in ``demo`` benchmark: six short conversations over our own Notes, Shopping and
Calculator tools, written for toolscore (no third-party text or data).

It exists so that anyone can run the whole pipeline offline in a couple of minutes, even with a
135M-parameter local model: it uses exactly the ToolTalk conversation format, protocol and
scorer, only with smaller, easier data and tools that need no login.

The data folder mirrors a ToolTalk release, so ToolTalk's loader reads it unchanged::

    data/easy/demo-*.json       one ground-truth call each
    data/tooltalk/demo-*.json   two calls over two assistant turns (ToolTalk's "hard" split)
    data/databases/<Name>.json  initial state of each plugin's database

The benchmark is ToolTalk's (loader included) pointed at that folder and at the demo plugins.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolscore.benchmarks.base import option
from toolscore.benchmarks.demo.plugins import ALL_TOOLS, PLUGINS
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark, ToolTalkOptions

DATA_DIR = Path(__file__).resolve().parent / "data"
# Every demo turn needs at most two calls; a small model that loops is cut off early so the
# demo stays a couple of minutes long on one CPU thread.
MAX_CALLS_PER_TURN = 4

__all__ = ["ALL_TOOLS", "PLUGINS", "DemoBenchmark", "DemoOptions", "data_dir"]


def data_dir() -> Path:
    """Root of the demo data, laid out like a ToolTalk release (easy/, tooltalk/, databases/)."""
    return DATA_DIR


@dataclass
class DemoOptions(ToolTalkOptions):
    max_calls_per_turn: int | None = option(
        MAX_CALLS_PER_TURN, "Stop a turn after this many tool calls.")
    # the demo is toolscore's own: it asks for its own sampling, not the reference's
    max_tokens: int | None = option(512, "Token limit of each model reply.")
    seed: int | None = option(0, "Sampling seed sent to the model.")


#: ToolTalk's protocol and scorer over the demo data and plugins (ships with the package): a
#: variant of ToolTalk's class, so it takes every option ToolTalk's does.
DemoBenchmark = ToolTalkBenchmark.variant(
    "demo", "built-in: a few conversations over our own small tools (ships with the package)",
    options=DemoOptions, data=DATA_DIR, plugins=PLUGINS,
    default_model="local/smollm2",  # the demo runs offline, out of the box
    reference_requests=False)  # its own prompt, documents and sampling
