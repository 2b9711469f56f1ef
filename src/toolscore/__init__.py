"""toolscore: evaluate tool-calling assistants and agents with numbers you can trust.

    import toolscore
    run = toolscore.evaluate("tooltalk", model="oracle", split="easy")
    run.metrics["easy"]["success_rate"]       # 1.0
    run.to_pandas()                            # one row per (sample, epoch)

Everything is imported lazily, so ``import toolscore`` stays cheap. ``__version__`` is the
installed package's version (pyproject.toml's, read from its metadata), the one ``toolscore
--version`` prints and run.json records: one source, so the three never disagree.
"""

from __future__ import annotations

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


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("toolscore")
        except metadata.PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'toolscore' has no attribute {name!r}")
