"""An Inspect ``.eval`` archive of a run whose sample ids are hostile (path traversal, absolute
paths, backslashes, control characters, empty segments, ids of thousands of characters, ids
that collide once made safe): every member name is safe to extract, no two samples share one,
extraction stays inside its folder, and each sample is where Inspect's own naming rule
(``samples/<id>_epoch_<epoch>.json`` from the sample's id) looks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

import pytest

from toolscore.records import RunStore
from toolscore.report.export.inspect_log import export_inspect
from toolscore.report.export.inspect_names import inspect_id, kept, member_problem

HOSTILE = [
    "../../../../elsewhere/evil", "../x", "..", ".", "/abs/path", "//abs/path", "samples/../..",
    "a\\..\\..\\b", "C:\\Windows\\x", "C:x", "a//b", "a/./b", "a/b/", "", " ", "x\x00y",
    "line\nbreak", "\x1b[31mred", "tab\there", "con/x", "nul.txt/y", "ü-umlaut", "\ud800lone",
    "x" * 5000, "x" * 5001, "a b", "a_b", "a~b", "snow\u2603man", "right\u202eleft", "~",
    "G1_category/1187", "demo-add-item", "5",
]


def write_run(path: Path, ids: list[str]) -> Path:
    store = RunStore(path)
    store.write_config({"benchmark": "demo", "model": "m", "epochs": 2})
    for sid in ids:
        for epoch in (0, 1):
            store.append({"id": sid, "epoch": epoch, "status": "ok", "meta": {},
                          "usage": {"input_tokens": 1, "output_tokens": 1, "calls": 1},
                          "output": {"turns": []}, "scores": {"success": True},
                          "time_s": 0.1})
    return path


def rule_breach(name: str) -> str | None:
    """The rules a member name must follow, checked here independently of the writer."""
    segments = name.split("/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute"
    if "\\" in name:
        return "backslash"
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        return "control character"
    if any(s in ("", ".", "..") for s in segments):
        return "empty, . or .. segment"
    if len(name) > 200 or any(len(s) > 150 for s in segments):
        return "too long"
    return None


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    run = write_run(folder / "run", HOSTILE)
    return export_inspect(run, folder / "out" / "log.eval")


def test_every_member_name_is_safe_and_unique(archive: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
        infos = z.infolist()
    samples = [n for n in names if n.startswith("samples/")]
    assert len(samples) == len(HOSTILE) * 2  # no two (id, epoch) share a member
    assert len(set(names)) == len(names)
    for name in names:
        assert rule_breach(name) is None, (name, rule_breach(name))
        assert member_problem(name) is None, name
    assert {len(i.filename) for i in infos} <= set(range(1, 201))


def test_extraction_stays_inside_its_folder(archive: Path, tmp_path: Path) -> None:
    dest = tmp_path / "extract" / "here"
    dest.mkdir(parents=True)
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():  # what a naive extractor does: join and write
            target = os.path.realpath(os.path.join(dest, name))
            assert target.startswith(str(dest.resolve()) + os.sep), name
        z.extractall(dest)
        members = len(z.namelist())
    inside = [p for p in dest.rglob("*") if p.is_file()]
    assert len(inside) == members  # nothing overwritten by a name that collided on disk
    outside = {p.name for p in tmp_path.rglob("*") if p.is_file()} - {p.name for p in inside}
    assert not outside


def test_each_sample_is_where_inspect_looks_and_keeps_its_own_id(archive: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        summaries = json.loads(z.read("summaries.json"))
        found: dict[str, Any] = {}
        for summary in summaries:  # Inspect opens a listed sample by this name
            sample = json.loads(z.read(f"samples/{summary['id']}_epoch_{summary['epoch']}.json"))
            assert (sample["id"], sample["epoch"]) == (summary["id"], summary["epoch"])
            found[sample["metadata"]["toolscore_id"]] = sample["id"]
    assert len(summaries) == len(HOSTILE) * 2
    assert sorted(found) == sorted(HOSTILE)
    assert len(set(found.values())) == len(HOSTILE)
    for ordinary in ("G1_category/1187", "demo-add-item", "5"):
        assert found[ordinary] == ordinary  # ids that are safe already stay as they are


def test_the_json_log_uses_the_same_ids(archive: Path, tmp_path: Path) -> None:
    log = json.loads(export_inspect(archive.parent.parent / "run", tmp_path / "l.json")
                     .read_text(encoding="utf-8"))
    with zipfile.ZipFile(archive) as z:
        zipped = {(s["id"], s["epoch"]) for s in json.loads(z.read("summaries.json"))}
    assert {(s["id"], s["epoch"]) for s in log["samples"]} == zipped


@pytest.mark.parametrize("sample_id", HOSTILE)
def test_a_replaced_id_is_kept_no_more_and_never_equals_a_kept_one(sample_id: str) -> None:
    new = inspect_id(sample_id)
    assert kept(new) == (new == sample_id)
    assert inspect_id(new) == new or "~" in new  # a replaced id is never taken for a kept one
    assert rule_breach(f"samples/{new}_epoch_1.json") is None


def test_inspect_reads_the_archive_back(archive: Path) -> None:
    """With inspect_ai installed (the ``inspect`` extra), its reader loads every sample, and
    finds a sample with a replaced id by that id."""
    log = pytest.importorskip("inspect_ai.log")
    read = log.read_eval_log(str(archive))
    assert len(read.samples) == len(HOSTILE) * 2
    some = inspect_id("../../../../elsewhere/evil")
    assert log.read_eval_log_sample(str(archive), some, 2).metadata["toolscore_id"] == (
        "../../../../elsewhere/evil")


def test_cli_validate_reads_it_back(archive: Path, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai.log")
    done = subprocess.run([sys.executable, "-m", "toolscore.cli", "export",
                           str(archive.parent.parent / "run"), "-f", "inspect", "-o",
                           str(tmp_path / "v.eval"), "--validate"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(HOSTILE) * 2} samples" in done.stdout + done.stderr
