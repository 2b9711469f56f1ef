"""BFCL's released data as the benchmark declares it: every file pinned by checksum, found in
an archive laid out as the bfcl-eval wheel is (its data under ``bfcl_eval/data/``)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from support.data import dataset

from toolscore.benchmarks.bfcl.dataset import SOURCE
from toolscore.data import extract_pinned


def test_every_released_file_is_pinned() -> None:
    root = dataset("bfcl")
    released = {p.relative_to(root).as_posix() for p in root.rglob("*.json")}
    pins = SOURCE.pins or {}
    assert set(pins) == released
    assert all(hashlib.sha256((root / rel).read_bytes()).hexdigest() == digest
               for rel, digest in pins.items())
    assert SOURCE.valid(root)


def test_the_pinned_files_are_found_in_the_wheels_layout(tmp_path: Path) -> None:
    root = dataset("bfcl")
    wheel = tmp_path / "bfcl_eval.whl"
    pins = SOURCE.pins or {}
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel in pins:
            zf.write(root / rel, f"bfcl_eval/data/{rel}")
        # a file of the same name elsewhere in the wheel is told apart by its checksum
        zf.writestr("bfcl_eval/data/unused_datasets/possible_answer/BFCL_v4_parallel.json",
                    "{}")
    with zipfile.ZipFile(wheel) as zf:
        extract_pinned(zf, pins, tmp_path / "bfcl")
    for rel in ("BFCL_v4_simple_python.json", "possible_answer/BFCL_v4_parallel.json",
                "multi_turn_func_doc/math_api.json"):
        assert (tmp_path / "bfcl" / rel).read_bytes() == (root / rel).read_bytes()
