"""The ``toolscore`` command as a user meets it: a subprocess with its own cache folder, no API
keys from the developer's shell, and the datasets of :mod:`support.data`.

A subprocess (rather than click's in-process runner) is what shows the real exit code, the
whole of stdout and stderr, and that nothing is left over from an earlier test's imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import data

# the developer's own defaults of the common run options never reach a test
SETTINGS = ("TOOLSCORE_MODEL", "TOOLSCORE_OUT", "TOOLSCORE_MAX_CONCURRENCY", "TOOLSCORE_CACHE")


def toolscore(*args: str, cwd: Path, env: dict[str, str] | None = None,
              stdin: str | None = None, timeout: float = 300
              ) -> subprocess.CompletedProcess[str]:
    """Run ``python -m toolscore.cli ARGS`` in ``cwd``; ``env`` adds or overrides variables."""
    base = {k: v for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and k not in SETTINGS}
    base.update(XDG_CACHE_HOME=str(cwd / "xdg-cache"), TOOLSCORE_DATA=str(data.ROOT))
    return subprocess.run([sys.executable, "-m", "toolscore.cli", *args], cwd=cwd,
                          env={**base, **(env or {})}, input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def json_doc(done: subprocess.CompletedProcess[str]) -> Any:
    """The one JSON document a ``--json`` command printed (the whole of stdout)."""
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def assert_user_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    """A user mistake: exit code 2, nothing on stdout, one ``error:`` line naming it."""
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and message in lines[0], lines[0]


def stop_lines(stderr: str) -> list[str]:
    """What a stopped run said on stderr besides its progress lines and its first line (where
    model replies are cached): the lines a user reads to learn why it stopped."""
    return [line for line in stderr.splitlines()
            if line.strip() and not line.startswith(("progress:", "model replies are cached"))]
