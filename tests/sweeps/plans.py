"""What the sweep tests share: a plan of demo units against the fake OpenAI server answering
like the oracle, so every unit's correct scores are known and every request is counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import OracleRecording, oracle_recording

_RECORDING: list[OracleRecording] = []


def demo_oracle() -> OracleRecording:
    """The demo benchmark's oracle replies (recorded once per test process)."""
    if not _RECORDING:
        _RECORDING.append(oracle_recording("demo", None, embedder="hashing"))
    return _RECORDING[0]


def write_plan(folder: Path, base_url: str, *, units: int = 12, limit: int | None = None,
               out: str = "runs", **extra: Any) -> Path:
    """A plan of ``units`` demo runs of ``openai/fake`` (one per seed), no response cache."""
    doc: dict[str, Any] = {
        "out": out, "models": [{"model": "openai/fake", "base_url": base_url}],
        "benchmarks": {"demo": {"embedder": "hashing"}},
        "settings": {"seed": list(range(units))}, "cache": "none", "timeout": 30, **extra}
    if limit is not None:
        doc["limits"] = {"openai": limit}
    path = folder / "sweep.json"
    path.write_text(json.dumps(doc))
    return path


def run_demo_plan(folder: Path, *, units: int, limit: int, workers: int,
                  latency: float = 0.05) -> tuple[list[dict[str, Any]], FakeOpenAIServer]:
    """A plan of ``units`` demo runs (max_concurrency 8 each) under a provider ``limit``, run by
    the local pool of ``workers``; its results and the (stopped) server, which counted every
    request and the peak in flight."""
    from toolscore.sweeps.local import run_local
    from toolscore.sweeps.plan import load_plan

    with FakeOpenAIServer(demo_oracle().responder, latency=latency) as srv:
        manifest = load_plan(write_plan(folder, srv.base_url, units=units, limit=limit,
                                        max_concurrency=8))
        results = run_local(manifest, workers=workers)
    return results, srv


def sample_keys(run_dir: str | Path) -> list[tuple[str, int]]:
    """(id, epoch) of every complete record in a run's samples.jsonl, in file order."""
    f = Path(run_dir) / "samples.jsonl"
    if not f.is_file():
        return []
    keys = []
    for line in f.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.endswith("\n"):
            r = json.loads(line)
            keys.append((r["id"], r["epoch"]))
    return keys
