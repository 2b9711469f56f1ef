"""One writer per run directory (issue 10, item 9): a second run or resume of the same directory
is refused at once with a one-line message, and a lock left by a killed process never blocks
(the kernel drops an ``flock`` with its holder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cli import toolscore

from toolscore.records import RunStore
from toolscore.records.store import RunLocked

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

HOLD = textwrap.dedent("""
    import sys, time
    from toolscore.records import RunStore
    lock = RunStore(sys.argv[1]).lock().acquire()
    print("locked", flush=True)
    time.sleep(60)
""")


def _holder(run_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_second_writer_is_refused_and_a_killed_holder_frees_the_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = _holder(run_dir)
    try:
        with pytest.raises(RunLocked, match=rf"{run_dir}: another toolscore process \(pid "
                                            rf"{proc.pid}\) is writing"):
            RunStore(run_dir).lock().acquire()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    with RunStore(run_dir).lock():  # the OS released it with the killed process
        pass


def test_lock_is_released_and_retaken_in_process(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    with store.lock(), pytest.raises(RunLocked):
        store.lock().acquire()  # a second descriptor in the same process is refused too
    with store.lock():
        pass


def test_cli_resume_of_a_locked_run_exits_2_with_one_line(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = toolscore("run", "demo", "--model", "oracle", "--out", str(run_dir),
                      cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (run_dir / "samples.jsonl").read_bytes()
    proc = _holder(run_dir)
    try:
        second = toolscore("run", "demo", "--resume", str(run_dir), cwd=tmp_path)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert second.returncode == 2
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is writing this run directory" in lines[0], second.stderr
    assert (run_dir / "samples.jsonl").read_bytes() == before


def test_tooltalk_scores_do_not_depend_on_the_order_samples_finished() -> None:
    """A resumed run appends samples in another order than an uninterrupted one: the split
    metrics (soft_success is a sum of fractions) must come out byte-identical."""
    import json
    import random

    from toolscore.benchmarks.tooltalk.scoring import ConversationScore, aggregate

    rng = random.Random(7)
    scores = []
    for _ in range(50):
        truths = rng.randint(1, 9)
        matches = rng.randint(0, truths)
        actions = rng.randint(0, 7)
        bad = rng.randint(0, actions)
        scores.append(ConversationScore(predictions=matches + rng.randint(0, 3),
                                        ground_truths=truths, matches=matches, actions=actions,
                                        valid_actions=actions - bad, bad_actions=bad))
    first = json.dumps(aggregate(scores), sort_keys=True)
    for _ in range(30):
        rng.shuffle(scores)
        assert json.dumps(aggregate(scores), sort_keys=True) == first
