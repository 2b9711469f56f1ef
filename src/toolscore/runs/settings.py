"""A run's settings, in two objects passed whole from the edge (the Python API, the CLI, a
sweep unit) to the runner and its workers, so that whether a setting is part of the run's
identity is answered here and nowhere else:

==================  =========  ============================================================
setting             identity?  why
==================  =========  ============================================================
benchmark           yes        what is measured
model               yes        who is measured
options             yes        the benchmark's declared options, defaults filled in
model_args          yes        generation settings sent on every call of the model
epochs              yes        how many times each sample runs
limit, sample_ids   yes        which samples run (``sample_ids`` only when given)
base_url            yes        which endpoint serves the model (credentials stripped)
data                yes        which data folder (the run directory's name carries it)
max_concurrency     no         how fast, not what: changing it resumes the same run
cache               no         a response cache replays what the model said
timeout             no         a request that times out is an error, retried on resume
progress            no         what is shown while it runs
shard, workers      no         which process runs which samples; the records are the same
download            no         where a missing dataset comes from, not which one
cost_limit, prices  no         when this command stops spending; a stopped run resumes
on_record           no         a callback that sees each record as it is stored
==================  =========  ============================================================

:class:`RunIdentity` is hashed into the default run directory's name (:mod:`.identity`);
:class:`RunExecution` may differ between the start of a run and its resumption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscore.records import RunConfig


@dataclass(frozen=True)
class RunIdentity:
    """Everything that decides a run's results (see the module's table), as stored in
    run.json; :meth:`to_json` is what names the run."""

    benchmark: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    model_args: dict[str, Any] = field(default_factory=dict)
    epochs: int = 1
    limit: int | list[int] | None = None
    sample_ids: list[str] | None = None
    base_url: str | None = None
    data: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON whose hash names the run. ``sample_ids`` appears only when given, so the
        runs made before it existed keep their names."""
        from toolscore.models.base import strip_credentials

        identity = {"benchmark": self.benchmark, "model": self.model,
                    "options": dict(self.options), "model_args": dict(self.model_args),
                    "epochs": self.epochs, "limit": self.limit,
                    "base_url": strip_credentials(self.base_url),
                    "data": None if self.data is None else str(self.data)}
        if self.sample_ids is not None:
            identity["sample_ids"] = list(self.sample_ids)
        return identity

    @classmethod
    def of_config(cls, config: RunConfig, model_args: dict[str, Any] | None = None
                  ) -> RunIdentity:
        """The identity a run.json records (``model_args``: its validated model arguments)."""
        return cls(config.benchmark, config.model, options=dict(config.options or {}),
                   model_args=dict(config.model_args if model_args is None else model_args),
                   epochs=config.epochs, limit=config.limit, sample_ids=config.sample_ids,
                   base_url=config.base_url, data=config.data)


@dataclass(frozen=True)
class RunExecution:
    """How a run runs, not what it computes (see the module's table): none of it is part of
    the run's identity. ``cache`` is "default", a file, or None (no cache)."""

    max_concurrency: int = 8
    cache: str | Path | None = "default"
    timeout: float = 120.0
    progress: bool | str = False
    shard: tuple[int, int] | None = None
    workers: int = 1
    download: bool = True
    # stop once this command's model calls cost this many USD (runs.costlimit), priced by the
    # pinned table and ``prices`` (a user's price file) over it
    cost_limit: float | None = None
    prices: str | None = None
    on_record: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False)

    def without_callback(self) -> RunExecution:
        """The same, sendable to another process (the callback stays with the parent)."""
        return replace(self, on_record=None)
