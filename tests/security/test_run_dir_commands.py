"""Opening someone else's run directory starts nothing it names.

The run here was made with ``--mcp-server "sh -c '...'"`` (see :mod:`security.crafted`):
whenever anything starts that command, a marker file appears. Reading, scoring, reporting,
comparing, exporting, ranking and judging the run must leave no marker; continuing it
(``run --resume``) is refused in one line until the user repeats the option or passes
``--allow-run-commands``, which does start it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from support.cli import toolscore  # noqa: E402
from support.testing.openai_server import (  # noqa: E402
    FakeOpenAIServer,
    reply_to_completion,
)

import toolscore as api  # noqa: E402
from security.crafted import marker_command, write_data  # noqa: E402
from toolscore.types import Message  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("crafted")
    marker = root / "marker"
    command = marker_command(root, marker)
    run = api.evaluate("tooltalk", "oracle", data=write_data(root), mcp_server=command,
                       embedder="hashing", out=root / "run", cache=None)
    assert marker.is_file()  # the command does write the marker when it is started
    marker.unlink()
    return {"root": root, "run": root / "run", "marker": marker, "command": command,
            "metrics": run.metrics}


@pytest.fixture
def setup(made: dict[str, Any], tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """A fresh copy of the run (commands may write into it) and the marker, absent."""
    run = tmp_path / "run"
    shutil.copytree(made["run"], run)
    made["marker"].unlink(missing_ok=True)
    return run, made["marker"], made


def untouched(marker: Path, done: subprocess.CompletedProcess[str] | None = None) -> None:
    detail = "" if done is None else done.stderr[-2000:]
    assert not marker.exists(), f"the run's command was started: {detail}"


def test_reading_and_scoring_start_nothing(setup: tuple[Path, Path, dict[str, Any]],
                                           tmp_path: Path) -> None:
    run, marker, made = setup
    done = toolscore("score", str(run), "--json", cwd=tmp_path)
    untouched(marker, done)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metrics"] == made["metrics"]  # the recorded tools score it
    done = toolscore("score", str(run), "-T", "strict=true", "--json", cwd=tmp_path)
    untouched(marker, done)
    assert done.returncode == 0 and json.loads(done.stdout)["metrics"]["strict"] is True
    other = tmp_path / "other"
    shutil.copytree(run, other)
    for args in (("report", str(run)), ("report", str(run), "--html", str(tmp_path / "r.html")),
                 ("compare", str(run), str(other)), ("leaderboard", str(run), str(other)),
                 *(("export", str(run), "-f", fmt, "-o", str(tmp_path / f"e.{fmt}"))
                   for fmt in ("csv", "jsonl", "parquet")),
                 ("export", str(run), "-f", "inspect", "-o", str(tmp_path / "e.json"))):
        done = toolscore(*args, cwd=tmp_path)
        untouched(marker, done)
        if args[:3] == ("export", str(run), "-f") and args[3] == "parquet" and \
                done.returncode == 2 and "pyarrow" in done.stderr + done.stdout:
            continue  # Parquet needs an extra that may not be installed
        assert done.returncode == 0, (args, done.stderr[-2000:])
    assert api.load_run(run).to_pandas() is not None
    assert api.score(run, strict=True).metrics["strict"] is True
    untouched(marker)


def judge_replies(request: dict[str, Any]) -> dict[str, Any]:
    text = " ".join(str(m.get("content")) for m in request["messages"])
    verdict = ('{"reason": "r", "task_status": "Solvable"}' if '"task_status"' in text
               else '{"reason": "r", "answer_status": "Solved"}')
    return reply_to_completion(Message(role="assistant", content=verdict), prompt_tokens=3)


def test_judging_the_run_starts_nothing(setup: tuple[Path, Path, dict[str, Any]],
                                        tmp_path: Path) -> None:
    run, marker, _ = setup
    with FakeOpenAIServer(judge_replies) as srv:
        done = toolscore("judge", str(run), "--model", "openai/fake", "--base-url",
                         srv.base_url, "--votes", "1", "--json", cwd=tmp_path,
                         env={"OPENAI_API_KEY": "sk-judge-0123456789"})
    untouched(marker, done)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metrics"]["overall"]["queries"] == 2


def test_resume_is_refused_in_one_line_until_the_user_vouches(
        setup: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    run, marker, made = setup
    done = toolscore("run", "tooltalk", "--resume", str(run), cwd=tmp_path)
    untouched(marker, done)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "mcp_server" in lines[0] and "--allow-run-commands" in lines[0]
    assert "--mcp-server" in lines[0] and "run.json" in lines[0]
    with pytest.raises(ValueError, match="allow_run_commands"):
        api.resume(run)
    untouched(marker)
    # another value of the option is not a vouch for the stored one
    done = toolscore("run", "tooltalk", "--resume", str(run), "--mcp-server", "true",
                     cwd=tmp_path)
    untouched(marker, done)
    assert done.returncode == 2 and "a resumed run keeps its options" in done.stderr
    done = toolscore("run", "tooltalk", "--resume", str(run), "--allow-run-commands",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert marker.is_file()  # allowed: the stored command runs
    marker.unlink()
    done = toolscore("run", "tooltalk", "--resume", str(run), "--mcp-server", made["command"],
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert marker.is_file()  # repeated with the same value: it runs


def test_a_run_without_its_tool_listing_is_read_but_not_rescored(
        setup: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    """A run.json that names the command but not the server's tools (written before listings
    were kept, or crafted): reports still work; rescoring says in one line what it lacks."""
    run, marker, _ = setup
    doc = json.loads((run / "run.json").read_text())
    del doc["benchmark_config"]["mcp_server"]["listing"]
    (run / "run.json").write_text(json.dumps(doc))
    done = toolscore("score", str(run), cwd=tmp_path)
    untouched(marker, done)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "does not record the server's tool listing" in done.stderr
    assert "--allow-run-commands" in done.stderr
    for args in (("report", str(run)), ("report", str(run), "--html", str(tmp_path / "r.html"))):
        done = toolscore(*args, cwd=tmp_path)
        untouched(marker, done)
        assert done.returncode == 0, done.stderr[-2000:]
    done = toolscore("score", str(run), "--allow-run-commands", cwd=tmp_path)
    assert done.returncode == 0 and marker.is_file()
