"""Benchmarks by name. Each maker takes the CLI's options and returns a Benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolscore.data import find_dataset

KNOWN = {
    "demo": "built-in: a few conversations over our own small tools (ships with the package)",
    "tooltalk": "ToolTalk (Farn & Shin 2023): 28 easy + 50 hard conversations, 7 plugins",
    "autode": "AutoDE (Mu et al. 2024): 276 user scripts over 66 APIs; dynamic/static/human",
}


def make_benchmark(name: str, data: str | Path | None = None, **options: Any) -> Any:
    if name == "tooltalk":
        from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark

        return ToolTalkBenchmark(find_dataset("tooltalk", data), **options)
    if name == "autode":
        from toolscore.benchmarks.autode.benchmark import AutoDEBenchmark

        return AutoDEBenchmark(find_dataset("autode", data), **options)
    if name == "demo":
        from toolscore.benchmarks.demo import make_demo

        return make_demo(**options)
    raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(sorted(KNOWN))}")
