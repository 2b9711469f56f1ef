"""How many samples and epochs a run has is a positive number: ``--limit -1`` would run all
samples but the last (a Python slice), and 0 would run nothing and exit 0 as if done. Either
is one line naming the option (exit 2), from the command line and from Python, and leaves no
run directory behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_user_error, toolscore

from toolscore.runs.api import evaluate
from toolscore.runs.runner import RunOptions

BAD = [("--limit", "-1"), ("--limit", "0"), ("--epochs", "0"), ("--epochs", "-2")]


@pytest.mark.parametrize(("option", "value"), BAD)
def test_the_command_refuses_a_size_below_one(tmp_path: Path, option: str, value: str) -> None:
    done = toolscore("run", "demo", "--model", "oracle", "--embedder", "hashing", "--no-cache",
                     "--out", "run", option, value, cwd=tmp_path)
    assert_user_error(done, f"{option} {value}: must be a whole number, 1 or more")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("option", "value"), BAD)
def test_evaluate_refuses_a_size_below_one(tmp_path: Path, option: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"{option} {value}: must be"):
        evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "run",
                 **{option.lstrip("-"): int(value)})
    assert not (tmp_path / "run").exists()


def test_sizes_of_one_and_more_and_no_limit_pass(tmp_path: Path) -> None:
    for options in ({"limit": 1}, {"epochs": 1, "limit": None}, {"epochs": 3, "limit": 6}):
        RunOptions(**options)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="--limit True"):
        RunOptions(limit=True)
    run = evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "run",
                   limit=6)
    assert run.summary is not None and run.summary["run_now"] == 6
