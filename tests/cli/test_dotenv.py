"""A ``.env`` file: the nearest from the working directory up to the project's root (a folder
holding ``.git``) fills what the real environment leaves unset; ``--verbose`` says which."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import json_doc, toolscore
from support.data import dataset
from support.testing.openai_server import FakeOpenAIServer
from support.testing.oracle_replies import oracle_recording

from toolscore.benchmarks.base import OptionError
from toolscore.cli.common import find_dotenv

DEMO = ("run", "demo", "--embedder", "hashing", "--limit", "1", "--no-cache", "--json")


def _project(tmp_path: Path) -> Path:
    """tmp/project/.git, tmp/project/.env and a working folder two levels below."""
    (tmp_path / "project" / ".git").mkdir(parents=True)
    (tmp_path / "project" / ".env").write_text(
        "# keys of this project\nOPENAI_API_KEY=sk-from-dotenv\nTOOLSCORE_MODEL=openai/fake\n")
    work = tmp_path / "project" / "a" / "b"
    work.mkdir(parents=True)
    return work


def test_a_parent_dotenv_key_reaches_the_endpoint(tmp_path: Path) -> None:
    work = _project(tmp_path)
    oracle = oracle_recording("demo", None, embedder="hashing")
    with FakeOpenAIServer(oracle.responder) as srv:
        doc = json_doc(toolscore(*DEMO, "--base-url", srv.base_url, "--out", "one", cwd=work))
        assert srv.last_headers["authorization"] == "Bearer sk-from-dotenv"
        assert doc["config"]["model"] == "openai/fake"  # TOOLSCORE_MODEL from the file too
        json_doc(toolscore(*DEMO, "--base-url", srv.base_url, "--out", "two", cwd=work,
                           env={"OPENAI_API_KEY": "sk-real"}))
        assert srv.last_headers["authorization"] == "Bearer sk-real"  # the real one wins
    assert "sk-from-dotenv" not in (work / "one" / "run.json").read_text()


def test_verbose_says_which_file(tmp_path: Path) -> None:
    work = _project(tmp_path)
    done = toolscore("--verbose", "benchmarks", cwd=work, env={"OPENAI_API_KEY": "sk-real"})
    assert done.returncode == 0, done.stderr
    line = " ".join(done.stderr.split())
    assert f".env: {tmp_path / 'project' / '.env'} (set 1 of its 2 variables; already set, " \
           "kept: OPENAI_API_KEY)" in line
    quiet = toolscore("benchmarks", cwd=work)
    assert ".env" not in quiet.stderr


def test_python_never_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the command reads a .env: importing or using the library leaves the host's
    environment as it is."""
    monkeypatch.chdir(_project(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    import toolscore

    with pytest.raises(OptionError, match="TOOLSCORE_MODEL"):
        toolscore.evaluate("tooltalk", data=dataset("tooltalk"), split="easy", limit=1)
    assert "OPENAI_API_KEY" not in os.environ and "TOOLSCORE_MODEL" not in os.environ


def test_the_search_stops_at_the_project_root(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("X=1\n")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    assert find_dotenv(tmp_path / "repo" / "sub") is None
    assert find_dotenv(tmp_path) == tmp_path / ".env"
    (tmp_path / "repo" / ".env").write_text("X=2\n")
    assert find_dotenv(tmp_path / "repo" / "sub") == tmp_path / "repo" / ".env"
