"""The default mode reads the reference's wording from the release's own source files at run
time (never from a copy in the project): the system-prompt template here, checked against what
ToolTalk's code returns (``openai_docs.json``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.data import dataset, needs

from toolscore.benchmarks.base import OptionError
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.benchmarks.tooltalk.release import PROMPT_FILE, release_prompt

pytestmark = needs("tooltalk", "tooltalk-reference")


def _reference() -> dict:
    return json.loads((dataset("tooltalk-reference") / "openai_docs.json").read_text())


def test_the_template_is_the_reference_runners() -> None:
    found = release_prompt(dataset("tooltalk"))
    assert found.template == _reference()["system_prompt"]
    assert found.source == f"release: {PROMPT_FILE}"


def test_it_is_formatted_as_the_reference_formats_it() -> None:
    template = _reference()["system_prompt"]
    bench = ToolTalkBenchmark(dataset("tooltalk"))
    for meta in ({"location": "Here", "timestamp": "2023-09-11 09:00:00", "username": "ann"},
                 {"location": "Here", "timestamp": "2023-09-11 09:00:00"}):  # logged out
        expected = template.format(location=meta["location"], timestamp=meta["timestamp"],
                                   username=meta.get("username"))
        assert bench.system_prompt(meta) == expected
    assert bench.system_prompt({"location": "x", "timestamp": "y"}).endswith("None")
    assert bench.config()["prompt_source"] == f"release: {PROMPT_FILE}"


def test_toolscores_own_modes_keep_their_prompt() -> None:
    template = _reference()["system_prompt"].split("{")[0]
    meta = {"location": "Here", "timestamp": "2023-09-11 09:00:00"}
    for bench in (ToolTalkBenchmark(dataset("tooltalk"), strict=True),
                  ToolTalkBenchmark(dataset("tooltalk"), plugins=[])):
        assert not bench.system_prompt(meta).startswith(template)
        assert bench.config()["prompt_source"] == "toolscore's own"


def _copy_data(tmp_path: Path) -> Path:
    data = tmp_path / "tooltalk"
    shutil.copytree(dataset("tooltalk"), data, ignore=shutil.ignore_patterns("*.json"))
    return data


def test_a_data_folder_without_the_source_fails_in_one_line(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    (data / PROMPT_FILE).unlink()
    with pytest.raises(OptionError) as err:
        release_prompt(data)
    said = str(err.value)
    assert "\n" not in said and str(data / PROMPT_FILE) in said and "e05f4ce.zip" in said


def test_a_modified_source_is_labelled(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    path = data / PROMPT_FILE
    path.write_text(path.read_text() + "\n# changed\n")
    assert "modified" in release_prompt(data).source
