"""What the sweep tests share: a plan of demo units against the fake OpenAI server answering
like the oracle, so every unit's correct scores are known and every request is counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolscore.testing.oracle_replies import OracleRecording, oracle_recording

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
