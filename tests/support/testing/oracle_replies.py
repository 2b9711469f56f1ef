"""Oracle replies served over HTTP: the fake OpenAI server answering like the ``oracle`` model.

The robustness tests (kill and resume, injected faults) and the throughput benchmark need the
real ``openai/`` provider, the real runner and a real socket, *and* a run whose correct scores
are known. Replaying the oracle gives both: the oracle runs a benchmark once through a
:class:`ModelClient` that records every request and reply, and the recording becomes a
:class:`ScriptedResponder` keyed on the conversation so far. A run against that server must
then score exactly like the oracle run, whatever faults the server injects on the way.

This module sits above the runner (it runs one), so only tests and tools import it.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.testing.openai_server import Responder, ScriptedResponder, default_responder
from toolscore.models.client import ModelClient
from toolscore.models.scripted.oracle import OracleModel
from toolscore.types import Message, Reply


@dataclass
class OracleRecording:
    """What an oracle run produced: the responder, and the run's own sample records."""

    responder: ScriptedResponder
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # sample id -> record
    calls: int = 0  # model calls of the whole run

    def chain(self) -> int:
        """The longest chain of dependent calls: the most calls made by one sample (a
        sample's calls are sequential, every one depends on the reply before)."""
        return max((int(r["usage"]["calls"]) for r in self.records.values()), default=0)


def load_recording(path: str | Path, fallback: Responder | None = default_responder
                   ) -> ScriptedResponder:
    """A responder answering every request recorded in ``path`` (``record_path`` format)."""
    responder = ScriptedResponder(fallback=fallback)
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                messages = [Message.from_dict(m) for m in rec["request"]["messages"]]
                responder.add(messages, Reply.from_dict(rec["reply"]))
    return responder


def record_oracle(benchmark: Any, *, fallback: Responder | None = default_responder,
                  max_concurrency: int = 16) -> OracleRecording:
    """Run ``benchmark`` with the oracle through the real runner, recording every call."""
    from toolscore.records import RunStore
    from toolscore.runs.runner import RunOptions, execute_run

    with tempfile.TemporaryDirectory(prefix="toolscore-oracle-") as tmp:
        recording = Path(tmp) / "recording.jsonl"
        client = ModelClient(OracleModel(), cache=None, max_concurrency=max_concurrency,
                             record_path=recording)
        store = RunStore(Path(tmp) / "run")
        options = RunOptions(max_concurrency=max_concurrency, progress=False)
        summary = asyncio.run(execute_run(benchmark, client, store, options))
        if summary.errors:
            raise RuntimeError(f"the oracle run had {summary.errors} errored samples")
        return OracleRecording(load_recording(recording, fallback),
                               {r["id"]: r for r in store.latest().values()},
                               client.usage.calls)


def oracle_recording(benchmark: str, data: str | Path | None = None,
                     fallback: Responder | None = default_responder,
                     **options: Any) -> OracleRecording:
    """:func:`record_oracle` for a benchmark given by name and options (as ``RunRequest``)."""
    from toolscore.benchmarks.registry import make_benchmark

    return record_oracle(make_benchmark(benchmark, data, **options), fallback=fallback)
