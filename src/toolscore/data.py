"""Where a benchmark's released data comes from.

Lookup order: an explicit ``--data DIR``, then ``$TOOLSCORE_DATA/<name>``, then the user cache
(``~/.cache/toolscore/data/<name>``), then a download from the source repository at the pinned
commit. A download is accepted only if a checksum over the files we use matches the one its
source records, so a user gets exactly the data the published numbers were computed from.

Each benchmark declares its own :class:`DatasetSource` (``Benchmark.dataset_source``, next to
its code: e.g. ``benchmarks/tooltalk/dataset.py``); this module knows none of them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class DataNotFound(Exception):
    pass


class DataError(ValueError):
    """A dataset file is missing a piece or malformed; the one-line message names the file, the
    record (line, row or index) and the field, so a user can fix the input directly."""


@dataclass(frozen=True)
class DatasetSource:
    """A dataset as its benchmark declares it (``Benchmark.dataset_source``): its name (the
    folder under ``$TOOLSCORE_DATA`` and the cache), the layout check of a folder (``marker``,
    a path that must exist in it), and, when it can be downloaded, the pinned archive and
    checksums a download must match. Without ``url`` the data is found, never downloaded."""

    name: str
    url: str | None = None
    subdir: str = ""  # folder inside the archive that becomes the dataset folder
    sha256: str = ""  # content checksum of the files in ``files`` (see ``content_checksum``)
    files: tuple[str, ...] = ()  # glob patterns, relative to the dataset folder
    marker: str = ""  # a path that must exist in a valid dataset folder ("": any folder)
    pins: dict[str, str] | None = None  # relative path -> sha256 (see extract_pinned)
    # further pinned files extracted beside ``subdir`` (e.g. ToolTalk's own source files, which
    # its default mode reads its prompt and tool documents from); not part of ``sha256``
    sources: dict[str, str] | None = None
    # why there is no download, said when the data is not found (e.g. where to get it)
    note: str = ""

    def valid(self, folder: Path) -> bool:
        """Whether ``folder`` holds this dataset (its layout check)."""
        return folder.is_dir() and (not self.marker or (folder / self.marker).exists())


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolscore"


def content_checksum(folder: Path, patterns: tuple[str, ...]) -> str:
    """sha256 over (relative path, bytes) of the matching files, in sorted order."""
    h = hashlib.sha256()
    for rel in sorted(str(p.relative_to(folder)) for pat in patterns for p in folder.glob(pat)):
        h.update(rel.encode() + b"\0")
        h.update((folder / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def candidates(name: str, data_dir: str | Path | None = None) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    if data_dir:
        d = Path(data_dir)
        out.append(("--data", d))
        out.append(("--data", d / name))
    env = os.environ.get("TOOLSCORE_DATA")
    if env:
        out.append(("$TOOLSCORE_DATA", Path(env) / name))
    out.append(("user cache", cache_root() / "data" / name))
    return out


def find_dataset(dataset: DatasetSource | str, data_dir: str | Path | None = None, *,
                 download: bool = True) -> Path:
    """The folder holding ``dataset`` (a benchmark's declared source; a bare name: any folder
    of that name, never downloaded); raises DataNotFound with every place tried."""
    source = dataset if isinstance(dataset, DatasetSource) else DatasetSource(dataset)
    name = source.name
    if data_dir is not None:  # an explicit folder is used or refused, never silently replaced
        for folder in (Path(data_dir), Path(data_dir) / name):
            if source.valid(folder):
                return folder
        raise DataNotFound(f"--data {data_dir}: no {name} dataset there"
                           + (f" (expected {source.marker})" if source.marker else ""))
    tried = []
    for label, folder in candidates(name):
        if source.valid(folder):
            return folder
        tried.append(f"{label} {folder}")
    if download and source.url is not None:
        try:
            return fetch(source)
        except Exception as e:  # network, checksum or archive problems: report and fall through
            tried.append(f"download {source.url} ({e})")
    raise DataNotFound(f"dataset {name!r} not found; tried: " + "; ".join(tried)
                       + ". Pass --data DIR or set TOOLSCORE_DATA."
                       + (f" {source.note}" if source.note else ""))


def fetch(source: DatasetSource, timeout: float = 60.0) -> Path:
    """Download the source archive, extract the dataset folder and verify its checksum."""
    target = cache_root() / "data" / source.name
    if source.url is None:
        raise DataNotFound(f"dataset {source.name!r} has no pinned download")
    import urllib.request  # only to download (~40 ms to import: not on every command's path)

    with urllib.request.urlopen(source.url, timeout=timeout) as resp:  # noqa: S310
        blob = resp.read()
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        if source.pins is not None:
            try:
                extract_pinned(zf, source.pins, tmp)
            except DataNotFound:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        else:
            extract_subdir(zf, source.subdir, tmp)
        if source.sources:
            try:
                extract_pinned(zf, source.sources, tmp)
            except DataNotFound:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    got = content_checksum(tmp, source.files) if source.pins is None else source.sha256
    if got != source.sha256:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataNotFound(f"checksum mismatch for {source.url}: got {got}")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


class UnsafeArchive(DataNotFound):
    """An archive with a member that would be written outside the extraction folder."""


def extract_subdir(zf: zipfile.ZipFile, subdir: str, target: Path) -> list[Path]:
    """Extract ``<top>/<subdir>/...`` of a source archive into ``target``; returns the files.

    Every member path is checked before anything is written: an absolute path, a drive, a
    ``..`` part or a symlink entry that would land outside ``target`` refuses the whole archive
    (a downloaded file decides these names, so they are untrusted input).
    """
    names = zf.namelist()
    if not names:
        raise UnsafeArchive("archive is empty")
    top = names[0].split("/")[0]
    prefix = f"{top}/{subdir}/"
    root = target.resolve()
    plan: list[tuple[zipfile.ZipInfo, Path]] = []
    for info in zf.infolist():
        member = info.filename
        if "\\" in member or member.startswith("/") or ":" in member.split("/")[0]:
            raise UnsafeArchive(f"archive member {member!r}: absolute or non-POSIX path")
        if ".." in member.split("/"):
            raise UnsafeArchive(f"archive member {member!r}: path leaves the target folder")
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise UnsafeArchive(f"archive member {member!r}: symbolic links are not extracted")
        if not member.startswith(prefix) or member.endswith("/"):
            continue
        dest = (root / member[len(prefix):]).resolve()
        if dest != root and root not in dest.parents:
            raise UnsafeArchive(f"archive member {member!r}: path leaves the target folder")
        plan.append((info, dest))
    written = []
    for info, dest in plan:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(zf.read(info))
        written.append(dest)
    return written


def extract_pinned(zf: zipfile.ZipFile, pins: dict[str, str], target: Path) -> None:
    """Write each pinned file to ``target/<relative path>``, taken from the archive member that
    ends with the same last two path parts and has the pinned sha256. Nothing else is
    extracted, and member names never decide where a file is written."""
    by_tail: dict[str, list[zipfile.ZipInfo]] = {}
    for info in zf.infolist():
        if not info.filename.endswith("/"):
            parts = info.filename.split("/")
            by_tail.setdefault("/".join(parts[-2:]), []).append(info)
            by_tail.setdefault(parts[-1], []).append(info)
    for rel, digest in sorted(pins.items()):
        tail = "/".join(rel.split("/")[-2:])
        blob = next((b for b in (zf.read(i) for i in by_tail.get(tail, []))
                     if hashlib.sha256(b).hexdigest() == digest), None)
        if blob is None:
            raise DataNotFound(f"archive has no {tail} with the pinned checksum {digest[:12]}…")
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob)


# -- reading user-written files (one-line errors naming file and line) --------------------------
def decode_text(raw: bytes, name: str) -> str:
    """Bytes of a text file as UTF-8. A BOM is dropped (Windows editors write one and it is the
    same text); UTF-16 and bytes that are not UTF-8 (a Latin-1 export, a binary file) are one
    line naming the file and the line, since the decoder's own message names neither."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{name}: UTF-16 text; save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise DataError(f"{name}: line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x}; "
                        "Latin-1 or binary? save it as UTF-8)") from None


def read_text(path: Path, name: str | None = None) -> str:
    """A user's or a dataset's text file (see :func:`decode_text`); ``name`` labels it in
    errors (default: the path)."""
    name = name or str(path)
    return decode_text(read_raw(path, name), name)


def read_raw(path: Path, name: str | None = None) -> bytes:
    """A file's bytes, with :func:`read_text`'s one-line errors (for readers that decode only
    the parts they need)."""
    name = name or str(path)
    if path.is_dir():
        raise DataError(f"{name}: is a folder, expected a file")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{name}: file not found") from None
    except OSError as e:
        raise DataError(f"{name}: cannot read ({e.strerror})") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a line that is not an object is an error."""
    for number, text in enumerate(read_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        yield number, jsonl_object(text, path, number)


def jsonl_object(text: str, path: Path, number: int) -> dict[str, Any]:
    """Line ``number`` of a JSONL file, which must be an object (for readers that walk the
    lines themselves, e.g. to decode a line repeated verbatim only once)."""
    if text[:1] == "{":  # the common case, decoded without json.loads's wrappers
        try:
            obj, end = _SCAN(text, 0)
        except (StopIteration, ValueError):
            pass  # json.loads below names the fault
        else:
            if end == len(text):
                return obj  # type: ignore[no-any-return]
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}:{number}: not valid JSON ({e.msg})") from None
    if not isinstance(obj, dict):
        raise DataError(f"{path}:{number}: expected a JSON object")
    return obj


# json.loads's own scanner (the C one when available), called directly: json.loads checks its
# argument's type and matches whitespace around the value with two regular expressions, a
# fifth of the time of decoding a short line.
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in __init__; not in the stubs


def read_structured(path: Path) -> Any:
    """A JSON file, or YAML for any other suffix (PyYAML imported only then)."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    try:
        import yaml
    except ImportError:
        raise DataError(f"{path}: reading YAML needs PyYAML (pip install pyyaml)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).split("\n")[0]
        raise DataError(f"{path}{line}: not valid YAML ({problem})") from None
