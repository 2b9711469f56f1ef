"""What the runner needs from a benchmark: samples, a protocol that runs one sample with a model,
a scorer that scores one stored record, and an aggregation over records.

Scoring reads only the stored record (never the model), so a run can be rescored at zero cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolscore.models.client import ModelClient


@dataclass
class Sample:
    id: str
    data: Any
    meta: dict[str, Any] = field(default_factory=dict)


class Benchmark(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """Everything that determines results besides the model: goes into run.json."""
        ...

    def samples(self) -> list[Sample]: ...

    async def run_sample(self, sample: Sample, model: ModelClient, epoch: int) -> dict[str, Any]:
        """Run one sample; return its JSON-able output (transcript, calls). Infrastructure
        failures propagate as InfraError; model mistakes are recorded in the output."""
        ...

    def score(self, output: dict[str, Any], sample: Sample) -> dict[str, Any]:
        """Per-sample scores from a stored output."""
        ...

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """Headline metrics over scored records (``record["scores"]``), grouped as the method
        publishes them (e.g. per split)."""
        ...
