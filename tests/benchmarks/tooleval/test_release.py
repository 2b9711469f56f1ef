"""ToolBench's evaluator files: found where a download leaves them, read into the questions
the reference mode asks, and bad files refused in one line naming the file and the field. The
folder is generated from the values recorded from ToolBench's files (no copy is kept): the
loader must read exactly those values back, and the download pins the recorded files."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tooleval_release import values, write_release

from toolscore.benchmarks.tooleval.dataset import TOOLEVAL_SOURCE
from toolscore.benchmarks.tooleval.release import (
    EVALUATOR_DIR,
    find_evaluator,
    load_evaluator,
)
from toolscore.data import DataError


def test_found_in_the_dataset_folder_first_then_the_other_places(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "tooleval"
    write_release(data)
    assert find_evaluator(data) == data / EVALUATOR_DIR
    assert find_evaluator(tmp_path / "elsewhere", explicit=tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("TOOLSCORE_DATA", raising=False)
    with pytest.raises(DataError, match="are not in .*elsewhere.*--option evaluator=DIR"):
        find_evaluator(tmp_path / "elsewhere")


def test_the_download_pins_the_recorded_files() -> None:
    recorded = values()
    assert recorded["sha256"] == TOOLEVAL_SOURCE
    assert set(TOOLEVAL_SOURCE) == {f"{EVALUATOR_DIR}/config.yaml",
                                    f"{EVALUATOR_DIR}/template.txt"}
    assert len(recorded["commit"]) == 40


def test_the_generated_folder_reads_as_the_recorded_values(tmp_path: Path) -> None:
    recorded = values()
    ev = load_evaluator(write_release(tmp_path))
    assert (ev.max_tokens, ev.temperature) == (recorded["max_tokens"], recorded["temperature"])
    assert [q.function for q in ev.questions.values()] == recorded["functions"]
    assert {name: q.text for name, q in ev.questions.items()} == recorded["texts"]
    assert set(ev.questions) == {"check_answer_status", "parse_answer_status",
                                 "check_task_solvable", "select_better_answer"}
    assert (ev.max_tokens, ev.temperature) == (1000, 0.2)
    assert ev["select_better_answer"].key == "index"
    assert ev["check_task_solvable"].labels() == ("Unsure", "Unsolvable", "Solvable")
    spec = ev["check_answer_status"].spec(reason=True)
    assert spec.parameters["required"] == ["answer_status", "reason"]
    assert ev["check_answer_status"].function["parameters"]["required"] == ["answer_status"]
    assert ev["select_better_answer"].parse('{"index": 1.0}') == ("1", "")
    assert "not one of" in str(ev["check_answer_status"].parse('{"answer_status": "Maybe"}'))


def test_a_broken_evaluator_is_one_line(tmp_path: Path) -> None:
    folder = write_release(tmp_path / "ev")
    (folder / "template.txt").write_text("<function><name>check_answer_status</name>"
                                         "</function>")
    with pytest.raises(DataError, match=r"template.txt: a <function> without <name> or "):
        load_evaluator(folder)
    (folder / "template.txt").write_text("")
    with pytest.raises(DataError, match=r"config.yaml: record functions\[0\]: field 'name'"):
        load_evaluator(folder)
    (folder / "config.yaml").write_text("completions_kwargs: {}\n")
    with pytest.raises(DataError, match="field 'completions_kwargs.functions': missing"):
        load_evaluator(folder)
