"""How a judge kind is applied to a stored run: the run it writes to judge it.

``toolscore judge RUN --judge KIND`` knows no kind: it hands the kind a :class:`JudgeRequest`
(the judged run's run.json and finished samples, the judge's model, endpoint, configuration
file and kind-specific options) and the kind's ``plan`` answers with a :class:`JudgeRun` (which
benchmark to run, with which options, model and data, into ``RUN/judgements/<name>/``) or
raises :class:`CannotJudge` with the one line that says why it cannot judge that run (a record
shape it does not read, a kind that compares two runs...). A kind lives with its method
(ToolEval's in :mod:`toolscore.judges.kinds`, ACS's in ``benchmarks/acs``), so the plans do too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class CannotJudge(ValueError):
    """A judge kind that cannot judge this run; the message is the one line that says why."""


@dataclass(frozen=True)
class JudgeRequest:
    """What a judge kind is asked to judge, and with what."""

    kind: str
    run_dir: Path  # the judged run
    source: dict[str, Any]  # its run.json
    samples: list[str]  # ids of its finished samples
    model: str | None = None
    base_url: str | None = None
    judge_config: Path | None = None
    config: Any = None  # the JudgeConfig read from judge_config
    options: dict[str, Any] = field(default_factory=dict)  # kind-specific (-T KEY=VALUE)

    @property
    def benchmark(self) -> str:
        return str(self.source.get("benchmark"))

    def cannot(self, why: str) -> CannotJudge:
        return CannotJudge(f"judge {self.kind!r} cannot be applied to {self.run_dir}: {why}")

    def require_benchmark(self, *names: str, reads: str) -> None:
        """Refuse a run of another benchmark (``reads``: the record shape the kind reads)."""
        if self.benchmark not in names:
            raise self.cannot(f"it judges {reads}, and this is a {self.benchmark} run")

    def judge_model(self) -> tuple[str, str | None]:
        """(model, endpoint) of an LLM judge: ``--model``, else the configuration's."""
        if self.model is not None:
            return self.model, self.base_url
        if self.config is not None and self.config.model is not None:
            return str(self.config.model), self.config.base_url or self.base_url
        raise ValueError("give --model provider/model (the judge) or --judge-config FILE")


@dataclass(frozen=True)
class JudgeRun:
    """The run that judges: ``benchmark`` with ``options`` (and ``model``, ``base_url``,
    ``data``; ``samples``: only these sample ids, None: every sample the benchmark has)."""

    benchmark: str
    options: dict[str, Any]
    model: str | None = None
    base_url: str | None = None
    data: str | None = None
    samples: list[str] | None = None
