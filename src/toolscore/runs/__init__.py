"""Runs: the public API (evaluate, resume, score, load_run) and the asyncio runner."""

from toolscore.runs.api import (
    Run,
    evaluate,
    evaluate_async,
    load_run,
    resume,
    resume_async,
    score,
    score_files,
)
from toolscore.runs.rebuild import rebuild_benchmark

__all__ = ["Run", "evaluate", "evaluate_async", "load_run", "rebuild_benchmark", "resume",
           "resume_async", "score", "score_files"]
