"""What names a run: its identity (everything that decides its results, as plain JSON) and
the default run directory named by that identity's hash, so the same command twice finds the
same directory and resumes or reports it instead of starting over."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolscore.records import RunConfig
from toolscore.runs.settings import RunIdentity

NO_MODEL = "none"


def run_identity(benchmark: str, model: str, *, options: dict[str, Any] | None = None,
                 model_args: dict[str, Any] | None = None, epochs: int = 1,
                 limit: int | list[int] | None = None, base_url: str | None = None,
                 data: str | Path | None = None,
                 sample_ids: list[str] | None = None) -> dict[str, Any]:
    """Everything that decides a run's results, as plain JSON: the run's name is its hash
    (:class:`~toolscore.runs.settings.RunIdentity`, from loose values)."""
    return RunIdentity(benchmark, model, options=dict(options or {}),
                       model_args=dict(model_args or {}), epochs=epochs, limit=limit,
                       sample_ids=sample_ids, base_url=base_url,
                       data=None if data is None else str(data)).to_json()


def slug(text: str) -> str:
    """A name safe in a path on every platform (runs of other characters become '_')."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


def default_run_dir(benchmark: str, model: str,
                    identity: dict[str, Any] | RunIdentity | None = None,
                    root: str | Path = "runs") -> Path:
    """``runs/<benchmark>-<model>-<hash>``: the same configuration always names the same
    directory (no timestamp), so repeating a command resumes or reports a finished run
    instead of starting over. ``identity`` defaults to the bare benchmark and model."""
    from toolscore.models.cache import sha256_json

    if isinstance(identity, RunIdentity):
        identity = identity.to_json()
    ident = identity if identity is not None else run_identity(benchmark, model)
    return Path(root) / f"{slug(benchmark)}-{slug(model)}-{sha256_json(ident)[:10]}"


def same_run(config: RunConfig, identity: RunIdentity) -> bool:
    """Does an existing run.json describe the run ``identity`` names? (Its data folder is
    stored resolved, so it is not compared; the directory name already carries it.)"""
    stored = replace(RunIdentity.of_config(config), data=None)
    return stored.to_json() == replace(identity, data=None).to_json()
