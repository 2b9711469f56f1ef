"""``--limit N`` or ``A-B`` (samples A to B counted from 1, both included: Inspect's
convention) and ``--sample-id a,b``: part of the run's identity, resumed as stored, and every
bad value one line (exit 2) before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import assert_user_error, json_doc, toolscore

from toolscore.runs.api import evaluate, resume

RUN = ("run", "demo", "--model", "oracle", "--embedder", "hashing", "--no-cache", "--json")
IDS = ['demo-add-item', 'demo-calculate', 'demo-convert-units', 'demo-create-note',
       'demo-delete-note', 'demo-shopping-list']  # the demo's samples, in order


def _ids(run_dir: Path) -> list[str]:
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["id"] for line in lines)


def test_a_range_and_ids_select_samples_and_name_the_run(tmp_path: Path) -> None:
    ranged = json_doc(toolscore(*RUN, "--limit", "2-4", cwd=tmp_path))
    assert _ids(tmp_path / ranged["run_dir"]) == IDS[1:4]
    assert ranged["config"]["limit"] == [2, 4]
    picked = json_doc(toolscore(*RUN, "--sample-id", "demo-shopping-list,demo-calculate",
                                cwd=tmp_path))
    assert _ids(tmp_path / picked["run_dir"]) == ["demo-calculate", "demo-shopping-list"]
    assert picked["config"]["sample_ids"] == ["demo-shopping-list", "demo-calculate"]
    first = json_doc(toolscore(*RUN, "--limit", "3", cwd=tmp_path))
    assert _ids(tmp_path / first["run_dir"]) == IDS[:3] and first["config"]["limit"] == 3
    assert len({ranged["run_dir"], picked["run_dir"], first["run_dir"]}) == 3
    again = json_doc(toolscore(*RUN, "--limit", "2-4", cwd=tmp_path))
    assert again["run_dir"] == ranged["run_dir"] and again["summary"]["run_now"] == 0


def test_resume_keeps_the_selection(tmp_path: Path) -> None:
    run = evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "r",
                   limit="2-3", sample_ids="demo-calculate,demo-create-note,demo-add-item")
    assert sorted(r["id"] for r in run.records) == ["demo-calculate", "demo-create-note"]
    lines = (tmp_path / "r" / "samples.jsonl").read_text().splitlines()
    (tmp_path / "r" / "samples.jsonl").write_text(lines[0] + "\n")  # as if killed after one
    again = resume(tmp_path / "r")
    assert again.summary["run_now"] == 1 and again.summary["samples"] == 2
    assert _ids(tmp_path / "r") == ["demo-calculate", "demo-create-note"]


@pytest.mark.parametrize(("args", "message"), [
    (("--limit", "0"), "--limit 0: must be a whole number, 1 or more, or a range A-B"),
    (("--limit", "-3"), "--limit -3: must be a whole number"),
    (("--limit", "0-2"), "--limit 0-2: must be a whole number"),
    (("--limit", "4-2"), "--limit 4-2: must be a whole number, 1 or more, or a range A-B with "
                         "1 <= A <= B"),
    (("--limit", "x"), "--limit x: must be a whole number"),
    (("--sample-id", "demo-calculate,nope,zz"), "--sample-id: no sample with id nope, zz"),
    (("--sample-id", ","), "--sample-id ',': no sample id given"),
])
def test_bad_selections_are_one_line(tmp_path: Path, args: tuple[str, ...],
                                     message: str) -> None:
    assert_user_error(toolscore(*RUN, "--out", "x", *args, cwd=tmp_path), message)
    assert not (tmp_path / "x").exists()


def test_help_names_both(tmp_path: Path) -> None:
    text = " ".join(toolscore("run", "demo", "--help", cwd=tmp_path).stdout.split())
    assert "--limit N|A-B" in text and "--sample-id" in text


def test_an_inspect_export_says_the_selection_as_inspect_does(tmp_path: Path) -> None:
    from toolscore.report.export.inspect_log import inspect_parts

    evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "r",
             limit="2-4", sample_ids=["demo-calculate"])
    header, _ = inspect_parts(tmp_path / "r")
    config = header["eval"]["config"]
    assert config["limit"] == [1, 4]  # Inspect's (start, stop) slice of samples 2 to 4
    assert config["sample_id"] == ["demo-calculate"]
