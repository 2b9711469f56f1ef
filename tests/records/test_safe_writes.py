"""A run's files are written in place only, never through a link: a symbolic link (or a file
with another hard link) among them is refused with one line naming it, and the file it points
to is left byte for byte, for every file the store writes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import assert_user_error, toolscore

from toolscore.records import RunStore, UnsafeFile
from toolscore.records.store import APPEND_LOCK_FILE, LOCK_FILE
from toolscore.runs.api import evaluate, resume, score

RECORD = {"id": "a", "epoch": 0, "status": "ok", "output": {}, "scores": {"x": 1}}
CONFIG = {"benchmark": "demo", "model": "oracle"}
VICTIM = b"someone else's file\n"


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "run")
    s.write_config(CONFIG)
    s.append(RECORD)
    s.write_scores({"x": 1})
    return s


def _link(store: RunStore, name: str, tmp_path: Path) -> Path:
    victim = tmp_path / f"victim-{name.strip('.')}"
    victim.write_bytes(VICTIM)
    target = store.path / name
    target.unlink(missing_ok=True)
    target.symlink_to(victim)
    return victim


WRITES: dict[str, tuple[str, Callable[[RunStore], object]]] = {
    "run.json": ("run.json", lambda s: s.write_config(CONFIG)),
    "append": ("samples.jsonl", lambda s: s.append(RECORD)),
    "rewrite": ("samples.jsonl", lambda s: s.rewrite([RECORD])),
    "repair": ("samples.jsonl", lambda s: s.repair()),
    "scores.json": ("scores.json", lambda s: s.write_scores({"x": 2})),
    "run lock": (LOCK_FILE, lambda s: s.lock().acquire().release()),
    "shard lock": (LOCK_FILE, lambda s: s.lock(shared=True).acquire().release()),
    "append lock": (APPEND_LOCK_FILE, lambda s: s.append_lock().acquire().release()),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_no_write_follows_a_symbolic_link(store: RunStore, tmp_path: Path, write: str) -> None:
    name, do = WRITES[write]
    victim = _link(store, name, tmp_path)
    with pytest.raises(UnsafeFile, match="is a symbolic link") as e:
        do(store)
    assert str(store.path / name) in str(e.value) and "\n" not in str(e.value)
    assert victim.read_bytes() == VICTIM
    assert (store.path / name).is_symlink()  # not replaced by a file either


def test_a_dangling_link_is_not_created_through(store: RunStore, tmp_path: Path) -> None:
    (store.path / "samples.jsonl").unlink()
    (store.path / "samples.jsonl").symlink_to(tmp_path / "created-elsewhere")
    with pytest.raises(UnsafeFile):
        store.append(RECORD)
    assert not (tmp_path / "created-elsewhere").exists()


@pytest.mark.parametrize("name", ["samples.jsonl", APPEND_LOCK_FILE, LOCK_FILE])
def test_a_file_written_in_place_with_another_hard_link_is_refused(
        store: RunStore, tmp_path: Path, name: str) -> None:
    (store.path / name).touch()
    os.link(store.path / name, tmp_path / "other-name")
    before = (tmp_path / "other-name").read_bytes()
    do = {"samples.jsonl": lambda: store.append(RECORD),
          APPEND_LOCK_FILE: lambda: store.append(RECORD),
          LOCK_FILE: lambda: store.lock().acquire().release()}[name]
    with pytest.raises(UnsafeFile, match="other hard link"):
        do()
    assert (tmp_path / "other-name").read_bytes() == before


def test_a_run_lock_refuses_a_run_with_a_linked_file_before_anything_is_written(
        store: RunStore, tmp_path: Path) -> None:
    """The run, resume and rescoring take this lock first: a linked scores.json is said
    before a single sample runs or a record is rewritten."""
    victim = _link(store, "scores.json", tmp_path)
    samples = store.samples_path.read_bytes()
    with pytest.raises(UnsafeFile, match="scores.json"):
        store.lock().acquire()
    assert victim.read_bytes() == VICTIM and store.samples_path.read_bytes() == samples
    (store.path / "scores.json").unlink()
    store.lock().acquire().release()  # and it was released: nothing holds the directory


def test_a_fresh_store_writes_regular_files(tmp_path: Path) -> None:
    s = RunStore(tmp_path / "run")
    s.write_config(CONFIG)
    s.append(RECORD)
    s.rewrite([RECORD, RECORD])
    s.write_scores({"x": 1})
    with s.lock():
        pass
    names = sorted(p.name for p in s.path.iterdir())
    assert names == [".append.lock", ".lock", "run.json", "samples.jsonl", "scores.json"]
    assert not any(p.is_symlink() for p in s.path.iterdir())
    assert len(s.samples_path.read_text().splitlines()) == 2


# -- the commands --------------------------------------------------------------------------
@pytest.fixture
def demo_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    evaluate("demo", "oracle", embedder="hashing", cache=None, out=out)
    return out


def test_score_refuses_a_linked_scores_file_and_leaves_the_run(demo_run: Path,
                                                               tmp_path: Path) -> None:
    victim = tmp_path / "victim.json"
    victim.write_bytes(VICTIM)
    (demo_run / "scores.json").unlink()
    (demo_run / "scores.json").symlink_to(victim)
    samples = (demo_run / "samples.jsonl").read_bytes()
    done = toolscore("score", "run", cwd=tmp_path)
    assert_user_error(done, "run/scores.json: is a symbolic link")
    assert victim.read_bytes() == VICTIM
    assert (demo_run / "samples.jsonl").read_bytes() == samples
    with pytest.raises(UnsafeFile):
        score(demo_run)


@pytest.mark.parametrize("name", [".lock", "samples.jsonl", "run.json"])
def test_resume_refuses_a_linked_file_before_any_sample_runs(demo_run: Path, tmp_path: Path,
                                                             name: str) -> None:
    lines = (demo_run / "samples.jsonl").read_text().splitlines()
    (demo_run / "samples.jsonl").write_text("\n".join(lines[:3]) + "\n")  # 3 left to run
    kept = demo_run / f"{name}.real"
    os.replace(demo_run / name, kept) if (demo_run / name).exists() else kept.touch()
    (demo_run / name).symlink_to(kept)
    before = kept.read_bytes()
    done = toolscore("run", "demo", "--resume", "run", cwd=tmp_path)
    assert_user_error(done, f"run/{name}: is a symbolic link")
    assert kept.read_bytes() == before
    with pytest.raises(UnsafeFile):
        resume(demo_run)
    assert kept.read_bytes() == before
