"""Dataset lookup order and the verified download (exercised offline through a file:// URL)."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from support import data
from support.autode_release import values, write_release
from support.data import needs

from toolscore.benchmarks.datasets import dataset_sources
from toolscore.data import (
    DataNotFound,
    DatasetSource,
    content_checksum,
    fetch,
    find_dataset,
)

SOURCES = dataset_sources()  # each benchmark's own declaration, by dataset name
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
        for f in sorted((DATA / "src").rglob("*.py")):  # the release's own source files
            zf.writestr(f"ToolTalk-e05f4ce/{f.relative_to(DATA)}", f.read_bytes())
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
    # the source files the default mode reads its wording from, verified, and nothing else
    assert {str(p.relative_to(target)) for p in (target / "src").rglob("*")
            if p.is_file()} == set(source.sources or {})


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
    assert find_dataset(SOURCES["tooltalk"], download=False) == DATA  # $TOOLSCORE_DATA/<name>
    assert find_dataset(SOURCES["tooltalk"], DATA, download=False) == DATA  # --data wins
    with pytest.raises(DataNotFound, match="--data .*nowhere"):  # no silent fallback
        find_dataset(SOURCES["tooltalk"], tmp_path / "nowhere", download=False)
    monkeypatch.delenv("TOOLSCORE_DATA")
    with pytest.raises(DataNotFound) as err:
        find_dataset(SOURCES["tooltalk"], download=False)
    message = str(err.value)
    assert "\n" not in message and "user cache" in message and "TOOLSCORE_DATA" in message


# -- zip path traversal (issue 10, item 9): names inside a downloaded archive are untrusted ----
def _crafted(tmp: Path, member: str, *, symlink: bool = False) -> zipfile.ZipFile:
    path = tmp / "crafted.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("top/data/databases/Account.json", "{}")
        info = zipfile.ZipInfo(member)
        if symlink:
            info.external_attr = (0o120777 << 16)
        zf.writestr(info, "../../outside" if symlink else "pwned")
    return zipfile.ZipFile(path)


@pytest.mark.parametrize("member", [
    "top/data/../../escaped.txt",
    "top/data/sub/../../../escaped.txt",
    "/var/escaped.txt",
    "top/data/..\\..\\escaped.txt",
    "C:/escaped.txt",
])
def test_extraction_refuses_a_member_outside_the_target(tmp_path: Path, member: str) -> None:
    from toolscore.data import UnsafeArchive, extract_subdir

    target = tmp_path / "out" / "tooltalk"
    with _crafted(tmp_path, member) as zf, pytest.raises(UnsafeArchive, match="archive member"):
        extract_subdir(zf, "data", target)
    # refused before anything is written, and nothing lands next to the target
    assert not target.exists()
    assert not list(tmp_path.rglob("escaped.txt"))


def test_extraction_refuses_symlinks(tmp_path: Path) -> None:
    from toolscore.data import UnsafeArchive, extract_subdir

    with _crafted(tmp_path, "top/data/link", symlink=True) as zf, \
            pytest.raises(UnsafeArchive, match="symbolic"):
        extract_subdir(zf, "data", tmp_path / "out")


def test_extraction_keeps_the_subdir_only(tmp_path: Path) -> None:
    from toolscore.data import extract_subdir

    with _crafted(tmp_path, "top/README.md") as zf:
        written = extract_subdir(zf, "data", tmp_path / "out")
    assert [p.relative_to((tmp_path / "out").resolve()).as_posix() for p in written] == [
        "databases/Account.json"]


def _release_files(tmp: Path, name: str) -> dict[str, bytes]:
    """The release's own source files that ``name``'s default mode reads, which the shared data
    does not hold: written from the recorded values (so not the release's bytes). ToolEval's
    are in the test datasets' folder already (tests/support/data.py)."""
    if name != "autode" or not SOURCES[name].sources:
        return {}
    folder = write_release(tmp / "release")
    return {rel: (folder / rel).read_bytes() for rel in SOURCES[name].sources}


def _source(tmp: Path, name: str, url: str) -> DatasetSource:
    """``name``'s pinned source at ``url``, its source files pinned to the written ones."""
    import hashlib

    files = _release_files(tmp, name)
    if not files:
        return replace(SOURCES[name], url=url)
    return replace(SOURCES[name], url=url, sources={
        rel: hashlib.sha256(blob).hexdigest() for rel, blob in files.items()})


def _pinned_archive(tmp: Path, name: str, layout: str, mutate: str | None = None) -> Path:
    """The released files of ``name`` zipped under ``<top>/<layout>/...``: the archive's layout
    is not the dataset folder's, as in the source repositories."""
    root = data.path(name)
    path = tmp / f"{name}.zip"
    release = _release_files(tmp, name)
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(p for p in root.rglob("*") if p.is_file() and p.name != "LICENSE"):
            blob = f.read_bytes()
            if f.name == mutate:
                blob += b" "
            zf.writestr(f"Repo-abc/{layout}/{f.relative_to(root)}", blob)
        for rel, blob in release.items():
            zf.writestr(f"Repo-abc/{rel}", blob)
        zf.writestr("Repo-abc/README.md", "not part of the dataset")
    return path


# the sha256 of the evaluator files the suite generates beside the ToolEval answers
# (support.tooleval_release): a pinned download of them is checked against these
GENERATED_EVALUATOR = {
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml":
        "c0d02c517499692474fcf22bbb25627f084fb9206fd0153430b80300ea1c70d7",
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt":
        "9a37a20bda107fadcc9db8f71f2d3f0987bac00b2614f0c4d5471b3ac223d4f8",
}


@pytest.mark.parametrize("name", ["autode", "tooleval"])
def test_every_pinned_file_is_the_released_one(name: str) -> None:
    import hashlib

    root = data.dataset(name)
    pins = SOURCES[name].pins or {}
    released = {str(p.relative_to(root)) for p in root.rglob("*")
                if p.is_file() and p.name != "LICENSE"}
    assert set(pins) == released - set(SOURCES[name].sources or {})
    assert all(hashlib.sha256((root / rel).read_bytes()).hexdigest() == digest
               for rel, digest in pins.items())


@pytest.mark.parametrize("name", ["autode", "tooleval"])
def test_a_pinned_download_finds_its_files_in_any_layout(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data.dataset(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLSCORE_DATA", raising=False)
    source = _source(tmp_path, name, _pinned_archive(tmp_path, name, "data/v1").as_uri())
    if name == "tooleval":  # the suite's evaluator files are generated, not ToolBench's own
        source = replace(source, sources=GENERATED_EVALUATOR)
    target = fetch(source)
    assert find_dataset(SOURCES[name], download=False) == target
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == \
        sorted({**(source.pins or {}), **(source.sources or {})})


def test_a_pinned_download_refuses_a_changed_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    data.dataset("autode")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    archive = _pinned_archive(tmp_path, "autode", "", mutate="data_v1_2.jsonl")
    with pytest.raises(DataNotFound, match="no data_v1_2.jsonl with the pinned checksum"):
        fetch(_source(tmp_path, "autode", archive.as_uri()))
    assert not (tmp_path / "cache" / "toolscore" / "data" / "autode").exists()


def test_the_autode_source_pins_are_the_release_files() -> None:
    """The source files' pins are the reference's files, as recorded from its repository."""
    assert SOURCES["autode"].sources == values()["sources"]


def test_each_benchmark_declares_its_own_dataset_source(tmp_path: Path) -> None:
    """The sources live with their benchmarks; data.py knows none, and ``toolscore data NAME``
    finds one by the name a benchmark declares (ACS: found, never downloaded)."""
    from click.testing import CliRunner

    from toolscore.benchmarks.acs.benchmark import ACSBenchmark
    from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
    from toolscore.cli import app

    assert {"tooltalk", "autode", "tooleval", "acs"} <= set(SOURCES)
    assert SOURCES["tooltalk"] is ToolTalkBenchmark.dataset_source
    assert SOURCES["acs"] is ACSBenchmark.dataset_source and SOURCES["acs"].url is None
    folder = tmp_path / "acs"
    folder.mkdir()
    with pytest.raises(DataNotFound, match="expected acs_dev.csv"):
        find_dataset(SOURCES["acs"], folder, download=False)
    (folder / "acs_dev.csv").write_text("row_id\n")
    done = CliRunner().invoke(app, ["data", "acs", "--data", str(folder), "--json"])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip().endswith(f'"path": "{folder}"}}') or str(folder) in done.stdout
    done = CliRunner().invoke(app, ["data", "acs", "--data", str(tmp_path / "none"),
                                    "--no-download"])
    assert done.exit_code == 2 and "no acs dataset there" in done.stderr
