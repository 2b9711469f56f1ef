"""The common run options from the environment (TOOLSCORE_MODEL, TOOLSCORE_OUT,
TOOLSCORE_MAX_CONCURRENCY, TOOLSCORE_CACHE), and a benchmark that needs a model and was given
none: one line naming --model and TOOLSCORE_MODEL, from the command as from Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore
from support.data import dataset

import toolscore as package
from toolscore.benchmarks.base import OptionError
from toolscore.benchmarks.registry import make_benchmark

DEMO = ("run", "demo", "--embedder", "hashing", "--limit", "1", "--json")
NEEDS_MODEL = ("benchmark 'tooltalk' needs a model: give --model provider/name or set "
               "TOOLSCORE_MODEL")


def test_a_forgotten_model_is_one_line_in_the_command_and_in_python(tmp_path: Path) -> None:
    assert_user_error(toolscore("run", "tooltalk", "--split", "easy", "--limit", "1",
                                cwd=tmp_path), NEEDS_MODEL)
    with pytest.raises(OptionError, match=NEEDS_MODEL):
        package.evaluate("tooltalk", data=dataset("tooltalk"), split="easy", limit=1,
                         out=tmp_path / "py")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "py").exists()
    # only the demo, which runs offline out of the box, has a model of its own
    assert make_benchmark("demo", embedder="hashing").default_model == "local/smollm2"
    assert make_benchmark("tooltalk", data=dataset("tooltalk")).default_model is None


def test_model_and_runs_folder_from_the_environment(tmp_path: Path) -> None:
    doc = json_doc(toolscore(*DEMO, "--no-cache", cwd=tmp_path,
                             env={"TOOLSCORE_MODEL": "oracle", "TOOLSCORE_OUT": "elsewhere"}))
    assert doc["config"]["model"] == "oracle"
    assert Path(doc["run_dir"]).parent == Path("elsewhere")
    given = json_doc(toolscore(*DEMO, "--no-cache", "--model", "oracle", cwd=tmp_path,
                               env={"TOOLSCORE_MODEL": "nope/x", "TOOLSCORE_OUT": "elsewhere"}))
    assert given["run_dir"] == doc["run_dir"]  # the option wins; the same run, found again
    (tmp_path / "file").write_text("")
    assert_user_error(toolscore(*DEMO, "--model", "oracle", cwd=tmp_path,
                                env={"TOOLSCORE_OUT": "file"}),
                      "TOOLSCORE_OUT 'file': not a folder")


def test_max_concurrency_from_the_environment(tmp_path: Path) -> None:
    doc = json_doc(toolscore(*DEMO, "--model", "oracle", "--no-cache", cwd=tmp_path,
                             env={"TOOLSCORE_MAX_CONCURRENCY": "3"}))
    assert doc["config"]["max_concurrency"] == 3
    for value in ("abc", "0", "-2"):
        assert_user_error(toolscore(*DEMO, "--model", "oracle", cwd=tmp_path,
                                    env={"TOOLSCORE_MAX_CONCURRENCY": value}),
                          f"TOOLSCORE_MAX_CONCURRENCY {value!r}: must be a whole number, 1 or "
                          "more")
    assert_user_error(toolscore(*DEMO, "--model", "oracle", "--max-concurrency", "0",
                                cwd=tmp_path),
                      "--max-concurrency '0': must be a whole number, 1 or more")


def test_cache_file_from_the_environment(tmp_path: Path) -> None:
    doc = json_doc(toolscore(*DEMO, "--model", "oracle", "--out", "a", cwd=tmp_path,
                             env={"TOOLSCORE_CACHE": str(tmp_path / "c.sqlite")}))
    assert doc["config"]["cache"] == str(tmp_path / "c.sqlite")
    off = json_doc(toolscore(*DEMO, "--model", "oracle", "--out", "b", cwd=tmp_path,
                             env={"TOOLSCORE_CACHE": "none"}))
    assert off["config"]["cache"] is None
    given = json_doc(toolscore(*DEMO, "--model", "oracle", "--out", "c", "--cache", "mine",
                               cwd=tmp_path, env={"TOOLSCORE_CACHE": "none"}))
    assert given["config"]["cache"] == "mine"
    assert_user_error(toolscore(*DEMO, "--model", "oracle", cwd=tmp_path,
                                env={"TOOLSCORE_CACHE": str(tmp_path)}),
                      f"TOOLSCORE_CACHE {str(tmp_path)!r}: a folder")


def test_help_names_the_variables(tmp_path: Path) -> None:
    text = " ".join(toolscore("run", "demo", "--help", cwd=tmp_path).stdout.split())
    for name in ("TOOLSCORE_MODEL", "TOOLSCORE_OUT", "TOOLSCORE_MAX_CONCURRENCY",
                 "TOOLSCORE_CACHE"):
        assert name in text
