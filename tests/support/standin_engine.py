"""A stand-in for llama.cpp at the edge where toolscore meets native code: an engine the
embedded model's host process loads instead of llama.cpp (``$TOOLSCORE_LOCAL_ENGINE``), so
that the tests can make that process die exactly as a native crash does.

It answers every request with a short deterministic text reply (no tool calls). With
``$STANDIN_CRASH_AT=N`` it kills its own process with SIGSEGV on its N-th request, unless
the file ``$STANDIN_CRASH_ONCE`` exists (it creates that file just before dying): a run
crashes once, and its resume finishes. ``$STANDIN_CRASH_ON_LOAD=1`` dies while loading;
``$STANDIN_SECONDS`` makes every reply take that long.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path
from typing import Any

SPEC = "support.standin_engine:make"


class StandInEngine:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests = 0
        if os.environ.get("STANDIN_CRASH_ON_LOAD"):
            os.kill(os.getpid(), signal.SIGSEGV)

    def describe(self) -> dict[str, Any]:
        return {"stand_in": True, "extra_bufts": False}

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        crash_at = os.environ.get("STANDIN_CRASH_AT")
        once = os.environ.get("STANDIN_CRASH_ONCE")
        if crash_at and self.requests == int(crash_at) and not (once and Path(once).exists()):
            if once:
                Path(once).touch()
            os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(float(os.environ.get("STANDIN_SECONDS", "0")))  # a slow model
        digest = hashlib.sha256(request["text"].encode()).hexdigest()[:6]
        text = f"I cannot do that ({digest})."
        return {"input_tokens": len(request["text"]) // 4, "output_tokens": 6, "text": text,
                "constrained": False, "finish": "stop"}


def make(path: Path) -> StandInEngine:
    return StandInEngine(path)


def environment(tests_dir: Path, **extra: str) -> dict[str, str]:
    """The variables a child toolscore process needs to use this engine (to add to its
    environment)."""
    path = os.pathsep.join([str(tests_dir), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, "TOOLSCORE_LOCAL_ENGINE": SPEC, **extra}
