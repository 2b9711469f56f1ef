"""toolscore: evaluate tool-calling assistants and agents with numbers you can trust.

    import toolscore
    run = toolscore.evaluate("tooltalk", model="oracle", split="easy")
    run.metrics["easy"]["success_rate"]       # 1.0
    run.to_pandas()                            # one row per (sample, epoch)

Everything is imported lazily, so ``import toolscore`` stays cheap. ``__version__`` is
pyproject.toml's version: the installed package's metadata, or, in a source checkout that was
never installed, the pyproject.toml beside ``src/``. ``toolscore --version`` prints it and
run.json records it: one source, so the three never disagree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_EXPORTS = {
    "evaluate": "toolscore.runs.api", "evaluate_async": "toolscore.runs.api",
    "resume": "toolscore.runs.api", "resume_async": "toolscore.runs.api",
    "score": "toolscore.runs.api", "score_files": "toolscore.runs.api",
    "load_run": "toolscore.runs.api", "Run": "toolscore.runs.api",
    "Benchmark": "toolscore.benchmarks.base", "Sample": "toolscore.benchmarks.base",
    "Column": "toolscore.benchmarks.base", "option": "toolscore.benchmarks.base",
    "Plugin": "toolscore.env.plugin", "tool": "toolscore.env.tool",
    "Environment": "toolscore.env.environment",
}

__all__ = sorted(_EXPORTS)


_PROJECT_VERSION = re.compile(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', re.M | re.S)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("toolscore")
    except metadata.PackageNotFoundError:  # a source checkout that was never installed
        pass
    try:
        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8")
    except OSError:
        return "0+unknown"
    found = _PROJECT_VERSION.search(text)
    return found.group(1) if found else "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _version()
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'toolscore' has no attribute {name!r}")
