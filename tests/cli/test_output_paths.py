"""An output file named on the command line is never one of a run's own files: a report or an
export written over ``samples.jsonl`` would replace the run's records for good. The path is
compared by its real path, so a relative path, a detour through ``..`` or a symbolic link to
the file is refused too; one line, exit 2, and the run's files are left byte for byte."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.cli import assert_user_error, toolscore

from toolscore.records.paths import RunFileOutput, check_output_path
from toolscore.runs.api import evaluate

RUN_FILES = ("run.json", "samples.jsonl", "scores.json", ".lock")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("outputs") / "run"
    evaluate("demo", "oracle", embedder="hashing", cache=None, out=out)
    return out


def _snapshot(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}


@pytest.mark.parametrize("command", [
    ("report", "run", "--html"),
    ("export", "run", "-o"),
    ("export", "run", "--format", "jsonl", "--out"),
    ("export", "run", "--format", "inspect", "-o"),
    ("leaderboard", "run", "--html"),
])
def test_an_output_path_that_is_a_file_of_the_run_is_refused(
        run_dir: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    shutil.copytree(run_dir, tmp_path / "run")
    (tmp_path / "run" / ".lock").touch()
    before = _snapshot(tmp_path / "run")
    (tmp_path / "elsewhere").mkdir()
    for i, name in enumerate(RUN_FILES):
        link = tmp_path / "elsewhere" / f"{i}.html"
        link.symlink_to(tmp_path / "run" / name)
        target = (f"run/{name}", f"./run/../run/{name}", f"elsewhere/{i}.html")[i % 3]
        done = toolscore(*command, target, cwd=tmp_path)
        assert_user_error(done, f"is the run file {name} of the run in")
        assert str(Path(target)) in done.stderr
    assert _snapshot(tmp_path / "run") == before


def test_another_runs_file_is_refused_and_ordinary_paths_pass(run_dir: Path,
                                                              tmp_path: Path) -> None:
    with pytest.raises(RunFileOutput, match=r"--html .*samples\.jsonl"):
        check_output_path(run_dir / "samples.jsonl", "--html")
    with pytest.raises(RunFileOutput):
        check_output_path(os.path.relpath(run_dir / "scores.json"), "--out")
    # the same names outside a run directory, other files of a run, stdout, nothing: fine
    for ok in (tmp_path / "samples.jsonl", tmp_path / "run.json", run_dir / "report.html",
               run_dir / "export.csv", "-", None):
        check_output_path(ok, "--out")


def test_report_html_into_the_run_directory_still_works(run_dir: Path, tmp_path: Path) -> None:
    done = toolscore("report", str(run_dir), "--html", str(tmp_path / "page.html"),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page.html").read_text().startswith("<!")


def test_run_html_never_overwrites_the_runs_own_files(tmp_path: Path) -> None:
    done = toolscore("run", "demo", "--model", "oracle", "--out", "r", "--html",
                     "r/samples.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "would destroy the run" in done.stderr, done.stderr
    records = (tmp_path / "r" / "samples.jsonl").read_bytes()
    assert records.startswith(b"{")  # the records, not an HTML page
    again = toolscore("run", "demo", "--resume", "r", "--html", "r/run.json", cwd=tmp_path)
    assert again.returncode == 2 and "would destroy the run" in again.stderr
    assert (tmp_path / "r" / "samples.jsonl").read_bytes() == records


def test_the_default_export_file_is_never_written_through_a_link(tmp_path: Path) -> None:
    run = evaluate("demo", "oracle", out=tmp_path / "r", cache=None)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    for fmt in ("csv", "jsonl"):
        (run.path / f"export.{fmt}").symlink_to(target)
        done = toolscore("export", str(run.path), "--format", fmt, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert target.read_text() == "keep me"
    (run.path / "export.csv").unlink()
    done = toolscore("export", str(run.path), "--format", "csv", cwd=tmp_path)
    assert done.returncode == 0 and (run.path / "export.csv").read_text().startswith("id,")
