"""Output files named on a command line (``--html``, ``export -o``...) that are a run's own.

Why one check for every command: a report or an export written over ``samples.jsonl`` replaces
the run's records with the page, and nothing brings them back. The path a user typed may be
relative, go through ``..`` or be a symbolic link to the file, so it is compared by its real
path; any run directory counts, not only the one the command reads.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolscore.records.store import (
    APPEND_LOCK_FILE,
    LOCK_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    SCORES_FILE,
)

_RUN_FILES = (RUN_FILE, SAMPLES_FILE, SCORES_FILE, LOCK_FILE, APPEND_LOCK_FILE)


class RunFileOutput(ValueError):
    """An output path that is one of a run's own files (one line naming both)."""


def check_output_path(path: str | os.PathLike[str] | None, option: str) -> None:
    """Refuse ``path`` (given as ``option``, e.g. ``--html``) when its real path is a file of a
    run directory: ``run.json``, ``samples.jsonl``, ``scores.json`` or a lock. ``None`` and
    ``-`` (stdout) pass."""
    if path is None or str(path) == "-":
        return
    real = Path(os.path.realpath(path))
    if real.name not in _RUN_FILES:
        return
    folder = real.parent
    if not ((folder / RUN_FILE).exists() or (folder / SAMPLES_FILE).exists()):
        return  # a file of that name in a folder that is not a run
    shown = str(path) if Path(path) == real else f"{path} (that is {real})"
    raise RunFileOutput(f"{option} {shown}: is the run file {real.name} of the run in "
                        f"{folder}; writing there would destroy the run: choose another path")
