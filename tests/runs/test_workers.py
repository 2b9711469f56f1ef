"""One run in several worker processes (``workers=N``, ``toolscore run --workers N``): the same
records and metrics as one process, whichever way the workers start (forked, from a fork server
with the benchmark rebuilt from run.json or pickled); never more requests in flight than the
run's ``max_concurrency``, for the model under test and for a simulated user; a worker that
fails or dies stops the run with its error and keeps every finished sample for the resume; a
worker whose parent is killed stops; progress and ``on_record`` see every record."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.autode import asking_assistant, responder
from support.cli import assert_user_error, json_doc, toolscore
from support.data import dataset, needs
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

import toolscore as api
from toolscore.benchmarks.base import parse_options
from toolscore.benchmarks.demo import DemoBenchmark, DemoOptions
from toolscore.benchmarks.registry import make_benchmark
from toolscore.records import RunStore
from toolscore.runs.stopped import RunStopped
from toolscore.runs.workers import WorkerError, shares

DEMO = {"embedder": "hashing"}


def _records(out: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Each (sample, epoch)'s record without what differs between runs (times, order)."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for r in RunStore(out).records():
        key = (r["id"], r["epoch"])
        assert key not in found, f"{key} written twice"
        r.pop("time_s")
        for usage in (r["usage"], *r["usage_by_role"].values()):
            usage.pop("latency_s", None)
        found[key] = r
    return found


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The demo run in one process: what every split run must equal."""
    out = tmp_path_factory.mktemp("whole") / "run"
    return api.evaluate("demo", "oracle", epochs=3, cache=None, out=out, **DEMO)


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_workers_write_the_same_run_as_one_process(whole: Any, tmp_path: Path, method: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCORE_START_METHOD", method)
    seen: list[dict[str, Any]] = []
    run = api.evaluate("demo", "oracle", epochs=3, cache=None, out=tmp_path / "run",
                       workers=2, on_record=seen.append, **DEMO)
    assert run.metrics == whole.metrics
    assert json.loads((tmp_path / "run" / "scores.json").read_text()) == whole.metrics
    assert _records(tmp_path / "run") == _records(whole.path)
    assert sorted((r["id"], r["epoch"]) for r in seen) == sorted(_records(whole.path))
    s = run.summary
    assert (s["samples"], s["run_now"], s["skipped"], s["errors_now"]) == (18, 18, 0, 0)
    assert s["calls"] == whole.summary["calls"]


def test_a_benchmark_object_goes_to_forked_workers_as_it_is(
        whole: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCORE_START_METHOD", "fork")
    bench = make_benchmark("demo", None, **DEMO)
    run = api.evaluate(bench, "oracle", epochs=3, cache=None, out=tmp_path / "run", workers=3)
    assert run.metrics == whole.metrics
    assert _records(tmp_path / "run") == _records(whole.path)


def test_a_benchmark_object_a_fork_server_cannot_take_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's tools are functions behind a decorator: pickle refuses them. Said before any
    worker starts, with the ways out."""
    monkeypatch.setenv("TOOLSCORE_START_METHOD", "forkserver")
    bench = make_benchmark("demo", None, **DEMO)
    with pytest.raises(ValueError, match="cannot be sent to a worker process") as caught:
        api.evaluate(bench, "oracle", cache=None, out=tmp_path / "run", workers=2)
    assert "\n" not in str(caught.value) and "by name" in str(caught.value)
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_requests_in_flight_never_exceed_the_runs_limit(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    oracle = oracle_recording("demo", None, **DEMO)
    with FakeOpenAIServer(oracle.responder, latency=0.05) as srv:
        run = api.evaluate("demo", "openai/fake", base_url=srv.base_url, epochs=4, cache=None,
                           out=tmp_path / "run", max_concurrency=5, workers=2, **DEMO)
        assert srv.requests == 4 * oracle.calls
        assert 3 <= srv.max_in_flight <= 5  # 3 + 2 samples, one call each in flight
    assert run.summary["calls"] == 4 * oracle.calls and run.summary["errors_now"] == 0
    assert run.metrics["hard"]["success_rate"] == 1.0


@needs("autode")
def test_a_simulated_users_requests_are_limited_too(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with FakeOpenAIServer(responder(asking_assistant)) as assistant, \
            FakeOpenAIServer(responder(asking_assistant), latency=0.2) as user:
        run = api.evaluate("autode", "openai/fake", base_url=assistant.base_url,
                           data=dataset("autode"), cache=None, out=tmp_path / "run", limit=6,
                           max_concurrency=3, workers=2, mode="dynamic", strict=True,
                           user_model="openai/user", user_base_url=user.base_url)
    assert run.summary["errors_now"] == 0 and user.requests == 6
    assert user.max_in_flight <= 3


def test_max_concurrency_is_split_and_workers_never_outnumber_it() -> None:
    assert shares(8, 3) == [3, 3, 2] and shares(5, 2) == [3, 2] and sum(shares(128, 7)) == 128


class _DyingDemo(DemoBenchmark):
    """The demo, except that one sample kills the process running it (a worker lost to the
    kernel's OOM killer, say)."""

    async def run_sample(self, sample: Any, model: Any, epoch: int) -> Any:
        if (sample.id, epoch) == ("demo-shopping-list", 1) and os.environ.get("DIE"):
            os._exit(9)
        return await super().run_sample(sample, model, epoch)


class _BrokenDemo(DemoBenchmark):
    def bind(self, settings: Any) -> None:
        raise ValueError("disk quota exceeded in the worker")


def _demo(cls: type[DemoBenchmark]) -> Any:
    return cls.create(None, parse_options(DemoOptions, DEMO, "demo"))


def test_a_dead_worker_stops_the_run_and_the_resume_finishes_it(
        whole: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCORE_START_METHOD", "fork")
    monkeypatch.setenv("DIE", "1")
    bench = _demo(_DyingDemo)
    out = tmp_path / "run"
    with pytest.raises(RunStopped, match=r"^worker \d/2 \(pid \d+\) died with exit code 9 "
                       r"before it finished its samples; \d+ of 18 samples finished") as stopped:
        api.evaluate(bench, "oracle", epochs=3, cache=None, out=out, workers=2,
                     max_concurrency=2)
    assert isinstance(stopped.value.__cause__, WorkerError)
    assert str(stopped.value).endswith(f"resume with: toolscore run demo --resume {out}")
    kept = _records(out)
    assert stopped.value.facts.kept == len(kept)
    assert len(kept) < 18 and ("demo-shopping-list", 1) not in kept
    assert all(kept[k] == _records(whole.path)[k] for k in kept)  # what was kept is right
    monkeypatch.delenv("DIE")
    again = api.resume(out, benchmark=bench, workers=2)
    assert again.summary["skipped"] == len(kept) and again.metrics == whole.metrics
    assert _records(out) == _records(whole.path)


def test_a_workers_error_is_raised_as_it_was_raised(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSCORE_START_METHOD", "fork")
    with pytest.raises(ValueError, match="^disk quota exceeded in the worker$"):
        api.evaluate(_demo(_BrokenDemo), "oracle", cache=None, out=tmp_path / "run",
                     workers=2)
    assert not (tmp_path / "run" / "scores.json").exists()


@pytest.mark.parametrize("workers", [0, -1, True, 1.5])
def test_bad_worker_counts_are_one_line_errors(tmp_path: Path, workers: Any) -> None:
    with pytest.raises(ValueError, match="--workers"):
        api.evaluate("demo", "oracle", cache=None, out=tmp_path / "run", workers=workers,
                     **DEMO)
    with pytest.raises(ValueError, match="--workers 2 with --shard 1/2"):
        api.evaluate("demo", "oracle", cache=None, out=tmp_path / "r2", workers=2,
                     shard="1/2", **DEMO)


def test_the_command_line_takes_workers(whole: Any, tmp_path: Path) -> None:
    args = ("run", "demo", "--model", "oracle", "--embedder", "hashing", "--no-cache",
            "--epochs", "3")
    doc = json_doc(toolscore(*args, "--workers", "2", "--json", cwd=tmp_path))
    assert doc["metrics"] == whole.metrics and doc["summary"]["run_now"] == 18
    again = json_doc(toolscore(*args, "--json", cwd=tmp_path))  # same run: workers not in it
    assert again["run_dir"] == doc["run_dir"] and again["summary"]["run_now"] == 0
    bad = toolscore(*args, "--workers", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "--workers" in bad.stderr and bad.stdout == ""
    assert_user_error(toolscore(*args, "--workers", "2", "--shard", "1/2", cwd=tmp_path),
                      "--workers 2 with --shard 1/2")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    oracle = oracle_recording("demo", None, **DEMO)
    with FakeOpenAIServer(oracle.responder, latency=0.5) as srv:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolscore.cli", "run", "demo", "--model", "openai/fake",
             "--base-url", srv.base_url, "--embedder", "hashing", "--no-cache", "--epochs",
             "20", "--workers", "2", "--out", str(tmp_path / "run")],
            env={**env, "OPENAI_API_KEY": "dummy", "XDG_CACHE_HOME": str(tmp_path / "xdg")},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while srv.requests < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            workers = [p for p in _children(proc.pid) if _alive(p)]
            assert len(workers) == 2, workers
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)


def test_progress_counts_every_workers_records(whole: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers send one short tick per record when only progress needs them; the bar then
    ends at every sample."""
    import io

    import rich.progress

    monkeypatch.setenv("TOOLSCORE_START_METHOD", "fork")
    shown = io.StringIO()
    real = rich.progress.Progress

    def quiet_bar(*args: Any, **kwargs: Any) -> Any:
        from rich.console import Console

        return real(*args, console=Console(file=shown, width=200), **kwargs)

    monkeypatch.setattr(rich.progress, "Progress", quiet_bar)
    run = api.evaluate("demo", "oracle", epochs=3, cache=None, out=tmp_path / "run",
                       workers=2, progress="bar", **DEMO)
    assert run.metrics == whole.metrics
    assert "18/18" in shown.getvalue()


def test_an_on_record_error_stops_the_run_as_in_one_process(
        whole: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The callback runs in this process: its error ends the run here and stops the workers;
    what they finished is kept and the resume completes it."""
    monkeypatch.setenv("TOOLSCORE_START_METHOD", "fork")
    seen: list[str] = []

    def fussy(record: dict[str, Any]) -> None:
        seen.append(record["id"])
        if len(seen) == 3:
            raise KeyError("the callback's own bug")

    out = tmp_path / "run"
    with pytest.raises(KeyError, match="the callback's own bug"):
        api.evaluate("demo", "oracle", epochs=3, cache=None, out=out, workers=2,
                     max_concurrency=2, on_record=fussy, **DEMO)
    assert not (out / "scores.json").exists() and 3 <= len(_records(out)) <= 18
    assert api.resume(out, workers=2).metrics == whole.metrics
    assert _records(out) == _records(whole.path)


def test_workers_from_inside_a_running_event_loop(whole: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a notebook: the run goes to a thread of its own, so its workers cannot be forked
    safely and come from a fork server, rebuilding the benchmark from run.json."""
    import asyncio

    monkeypatch.delenv("TOOLSCORE_START_METHOD", raising=False)

    async def notebook_cell() -> Any:
        return api.evaluate("demo", "oracle", epochs=3, cache=None, out=tmp_path / "run",
                            workers=2, **DEMO)

    assert asyncio.run(notebook_cell()).metrics == whole.metrics
    assert _records(tmp_path / "run") == _records(whole.path)
