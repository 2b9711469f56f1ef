"""Dataset lookup order and the verified download (exercised offline through a file:// URL)."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from support import data
from support.data import needs

from toolscore.data import SOURCES, DataNotFound, content_checksum, fetch, find_dataset

DATA = data.path("tooltalk")
needs_data = needs("tooltalk")


def _archive(tmp: Path, mutate: bool = False) -> Path:
    """A zip laid out like the source repository's archive: <top>/data/{databases,easy,...}."""
    path = tmp / "ToolTalk-e05f4ce.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(DATA.rglob("*.json")):
            data = f.read_bytes()
            if mutate and f.name == "Account.json":
                data = data.replace(b"justinkool", b"justincool")
            zf.writestr(f"ToolTalk-e05f4ce/data/{f.relative_to(DATA)}", data)
        zf.writestr("ToolTalk-e05f4ce/README.md", "not part of the dataset")
    return path


@needs_data
def test_released_data_matches_the_pinned_checksum() -> None:
    source = SOURCES["tooltalk"]
    assert content_checksum(DATA, source.files) == source.sha256


@needs_data
def test_fetch_extracts_and_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = replace(SOURCES["tooltalk"], url=_archive(tmp_path).as_uri())
    target = fetch(source)
    assert target == tmp_path / "cache" / "toolscore" / "data" / "tooltalk"
    assert len(list((target / "tooltalk").glob("*.json"))) == 50
    assert not (target / "README.md").exists()


@needs_data
def test_fetch_rejects_altered_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = replace(SOURCES["tooltalk"], url=_archive(tmp_path, mutate=True).as_uri())
    with pytest.raises(DataNotFound, match="checksum mismatch"):
        fetch(source)
    assert not (tmp_path / "cache" / "toolscore" / "data" / "tooltalk").exists()


@needs_data
def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLSCORE_DATA", str(DATA.parent))
    assert find_dataset("tooltalk", download=False) == DATA  # $TOOLSCORE_DATA/<name>
    assert find_dataset("tooltalk", DATA, download=False) == DATA  # --data wins
    with pytest.raises(DataNotFound, match="--data .*nowhere"):  # no silent fallback
        find_dataset("tooltalk", tmp_path / "nowhere", download=False)
    monkeypatch.delenv("TOOLSCORE_DATA")
    with pytest.raises(DataNotFound) as err:
        find_dataset("tooltalk", download=False)
    message = str(err.value)
    assert "\n" not in message and "user cache" in message and "TOOLSCORE_DATA" in message
