"""A run directory as the API returns it: its configuration, headline metrics and records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.records import RunConfig, RunStore
from toolscore.records.store import without_output
from toolscore.runs.runner import RunSummary


@dataclass
class Run:
    """A run directory, loaded: configuration, headline metrics and records.

    ``records`` are the latest record of each (sample, epoch), in (id, epoch) order.
    ``summary`` says what this call did (samples run now, skipped, errors, tokens); it is None
    for a run that was only loaded.
    """

    path: Path
    config: RunConfig
    metrics: dict[str, Any] | None
    summary: dict[str, Any] | None = None
    _records: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def records(self) -> list[dict[str, Any]]:
        if self._records is None:
            latest = RunStore(self.path).latest()
            self._records = [latest[k] for k in sorted(latest)]
        return self._records

    def error_count(self) -> tuple[int, int]:
        """(records that ended in an error, all records), read without their outputs."""
        latest = RunStore(self.path).latest(without_output)
        return sum(r.get("status") != "ok" for r in latest.values()), len(latest)

    def to_pandas(self) -> Any:
        """One row per (sample, epoch): id, epoch, split, status, scores, tokens, time."""
        from toolscore.records.table import records_frame

        return records_frame(self.records)

    def to_dict(self) -> dict[str, Any]:
        return {"run_dir": str(self.path), "config": self.config.to_dict(),
                "metrics": self.metrics, "summary": self.summary}


def load_run(path: str | Path) -> Run:
    """A finished (or partial) run directory; a one-line RunStoreError if it is not one."""
    store = RunStore(path)
    return Run(store.path, store.config(), store.read_scores())


def summary_dict(summary: RunSummary) -> dict[str, Any]:
    u = summary.usage
    return {"samples": summary.total, "run_now": summary.done, "skipped": summary.skipped,
            "errors_now": summary.errors, "calls": u.calls, "cached_calls": u.cached_calls,
            "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "tokens": u.total_tokens, "wall_s": round(summary.wall_s, 3),
            "tokens_by_role": {role: r.total_tokens
                               for role, r in sorted(summary.usage_by_role.items())},
            **({} if summary.spent is None else {"spent_usd": summary.spent})}
