"""ToolTalk data parsed once per process (benchmarks/tooltalk/loaded.py): benchmarks of the same,
unchanged files share conversations, databases and the ground truth's states; any change to a
file (content, time stamp, a file added, removed or replaced) is parsed again, with its own
ground truth, and a file that fails to load is never kept."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.tooltalk import loaded
from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.benchmarks.tooltalk.data import DataError
from toolscore.benchmarks.tooltalk.plugins import PLUGINS
from toolscore.models.scripted.oracle import OracleModel

ALARM = "easy/AddAlarm-easy.json"


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    """A private copy of the released data (easy split, databases and the release's source
    files the default mode reads its wording from), to edit."""
    src = dataset("tooltalk")
    root = tmp_path / "tooltalk"
    for part in ("easy", "databases", "src"):
        shutil.copytree(src / part, root / part)
    (root / "tooltalk").mkdir()
    return root


def bench(root: Path, **kw: Any) -> ToolTalkBenchmark:
    return ToolTalkBenchmark(root, split="easy", embedder="hashing", **kw)


def expected_hashes(b: ToolTalkBenchmark, sample_id: str) -> dict[int, str]:
    sample = next(s for s in b.samples() if s.id == sample_id)
    output = asyncio.run(b.run_sample(sample, OracleModel(), 0))
    return {t["turn"]: t["expected_state_hash"] for t in output["turns"]}


def test_benchmarks_of_the_same_files_share_what_was_parsed(data: Path) -> None:
    a, b = bench(data), bench(data, strict=True)
    assert [s.data for s in a.samples()] == [s.data for s in b.samples()]
    assert all(x.data is y.data for x, y in zip(a.samples(), b.samples(), strict=True))
    assert a.databases is b.databases
    assert a.truth_hashes is bench(data).truth_hashes
    # the strict simulator reaches other states (a reset code is used up): its own ground truth
    assert a.truth_hashes is not b.truth_hashes
    assert b.truth_hashes is bench(data, strict=True).truth_hashes
    first = expected_hashes(a, "AddAlarm-easy")
    assert expected_hashes(b, "AddAlarm-easy") == first


def test_an_edited_conversation_is_parsed_again_with_its_own_ground_truth(data: Path) -> None:
    a = bench(data)
    before = expected_hashes(a, "AddAlarm-easy")
    path = data / ALARM
    conv = json.loads(path.read_text())
    call = next(api for t in conv["conversation"] if t["role"] == "assistant"
                for api in t.get("apis", []) if api["request"]["api_name"] == "AddAlarm")
    call["request"]["parameters"]["time"] = "06:15:00"  # another alarm: another world
    path.write_text(json.dumps(conv))
    b = bench(data)
    assert b.samples()[0].data is not a.samples()[0].data
    assert b.truth_hashes is not a.truth_hashes
    after = expected_hashes(b, "AddAlarm-easy")
    assert after != before
    assert expected_hashes(bench(data), "AddAlarm-easy") == after


@pytest.mark.parametrize("change", ["touch", "add", "remove", "replace", "database"])
def test_any_change_to_the_files_is_read_again(data: Path, change: str) -> None:
    a = bench(data)
    convs, dbs = a.samples(), a.databases
    path = data / ALARM
    if change == "touch":
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif change == "add":
        shutil.copy(path, data / "easy" / "Copy-easy.json")
    elif change == "remove":
        path.unlink()
    elif change == "replace":  # same size and time stamp, another file
        st = path.stat()
        tmp = path.with_suffix(".new")
        shutil.copy2(path, tmp)
        os.replace(tmp, path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        db = data / "databases" / "Alarm.json"
        db.write_text(db.read_text() + "\n")
    b = bench(data)
    if change == "database":
        assert b.databases is not dbs and b.databases == dbs
        assert [s.data for s in b.samples()] == [s.data for s in convs]
    else:
        assert b.samples()[0].data is not convs[0].data
        assert len(b.samples()) == len(convs) + {"add": 1, "remove": -1}.get(change, 0)
    assert b.truth_hashes is not a.truth_hashes


def test_a_file_that_fails_to_load_is_not_kept(data: Path) -> None:
    path = data / ALARM
    good = path.read_text()
    bench(data).samples()
    path.write_text(good[:-10])
    with pytest.raises(DataError, match="AddAlarm-easy.json: invalid JSON"):
        bench(data).samples()
    with pytest.raises(DataError, match="AddAlarm-easy.json: invalid JSON"):
        bench(data).samples()  # still an error: nothing was kept, the old parse is not used
    path.write_text(good)
    assert len(bench(data).samples()) == len(list((data / "easy").glob("*.json")))


def test_other_plugins_have_their_own_ground_truth(data: Path) -> None:
    a, b = bench(data), bench(data, plugins=list(PLUGINS))
    assert a.truth_hashes is b.truth_hashes  # the same plugin objects
    c = bench(data, plugins=[copy.copy(p) for p in PLUGINS])
    assert a.databases is c.databases
    assert a.truth_hashes is not c.truth_hashes


def test_only_the_last_datasets_are_kept(tmp_path: Path, data: Path) -> None:
    first = bench(data)
    convs = first.samples()[0].data
    for i in range(loaded.KEEP):
        folder = tmp_path / f"copy{i}"
        shutil.copytree(data, folder)
        bench(folder).samples()
    assert bench(data).databases is first.databases  # databases are kept on their own
    assert bench(data).samples()[0].data is not convs  # evicted: parsed again, same content
    assert bench(data).samples()[0].data == convs
