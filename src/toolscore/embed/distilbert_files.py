"""Where the files of ``distilbert-base-uncased`` (ToolTalk's reference embedder) come from.

Lookup order: the folder the user names (``--embedder sent2vec-distilbert:DIR``), then
``$TOOLSCORE_DISTILBERT_DIR``, then the user cache (``~/.cache/toolscore/models/...``), then
the Hugging Face clients' cache (where running ToolTalk's own scorer put it), then a download
from the Hugging Face hub at a pinned revision into toolscore's cache. The weights are not
a dependency of the package (268 MB, and no PyPI package ships them), so they are fetched once
on first use, or put in place by hand where there is no network.

A download is accepted file by file only if its sha256 equals the one pinned here, or, for a
file without a pin, the checksum the hub itself declares for it at that revision (the sha256 of
a large file, the git blob id of a small one); every accepted file's sha256 is then recorded in
``manifest.json`` beside it, and the folder is moved into place only when all files passed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from toolscore.data import cache_root
from toolscore.embed.distilbert import REQUIRED_FILES, WEIGHT_FILES

REPO = "distilbert/distilbert-base-uncased"
#: A commit of the model's repository on the hub: files resolved at a commit never change.
REVISION = "12040accade4e8a0f71eabdb258fecc2e7e948be"
FILES = ("config.json", "tokenizer_config.json", "vocab.txt", "model.safetensors")
#: sha256 of the files known ahead of the download (the uncased BERT vocabulary is the one
#: every uncased BERT-family model shares); the others are checked against the hub's own.
PINS: dict[str, str] = {
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
ENV_DIR = "TOOLSCORE_DISTILBERT_DIR"
HOW_TO_GET = (f"download config.json, vocab.txt and model.safetensors (or pytorch_model.bin) "
              f"of {REPO} (revision "
              f"{REVISION[:12]}) into a folder and pass --embedder sent2vec-distilbert:DIR "
              f"(or set {ENV_DIR}=DIR)")


class ModelFilesMissing(RuntimeError):
    """The model's files are neither where the user said nor in the cache, and could not be
    downloaded; the message says how to get them."""


def endpoint() -> str:
    """The hub's address; ``HF_ENDPOINT`` (the variable the hub's own clients read) points
    elsewhere, e.g. a mirror."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def cached_dir() -> Path:
    return cache_root() / "models" / REPO.replace("/", "--") / REVISION


def hf_cache_snapshot() -> Path | None:
    """The model as the Hugging Face clients cached it (where ToolTalk's own scorer, through
    sent2vec and transformers, left it): the pinned revision's snapshot if complete, else the
    newest complete one. ``HF_HUB_CACHE``, ``HF_HOME``/hub or ``~/.cache/huggingface/hub``."""
    hub = os.environ.get("HF_HUB_CACHE") or str(
        Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface") / "hub")
    snapshots = [Path(hub) / f"models--{name.replace('/', '--')}" / "snapshots"
                 for name in (REPO, REPO.split("/")[-1])]  # the repository's old name too
    for base in snapshots:
        if complete(base / REVISION):
            return base / REVISION
    found = [d for base in snapshots if base.is_dir() for d in base.iterdir() if complete(d)]
    return max(found, key=lambda d: d.stat().st_mtime) if found else None


def pinned(folder: Path) -> bool:
    """Whether ``folder`` holds the pinned revision: the download's own folder (its manifest
    names it) or the hub clients' snapshot of that revision."""
    if folder.name == REVISION and folder.parent.name == "snapshots":
        return True
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return (manifest.get("revision") == REVISION
                and all(manifest["sha256"].get(k) == v for k, v in PINS.items()))
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return False


def missing_files(folder: Path) -> list[str]:
    """What a model folder lacks: required files, and the weights in either format."""
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        missing.append(" or ".join(WEIGHT_FILES))
    return missing


def complete(folder: Path) -> bool:
    return not missing_files(folder)


def locate(path: str | None = None, *, download: bool = True) -> Path:
    """The folder to load the model from (see the module's lookup order)."""
    given = path or os.environ.get(ENV_DIR)
    if given:
        folder = Path(given).expanduser()
        missing = missing_files(folder)
        if missing:
            raise ModelFilesMissing(f"{folder}: {', '.join(missing)} missing; {HOW_TO_GET}")
        return folder
    folder = cached_dir()
    if complete(folder):
        return folder
    found = hf_cache_snapshot()
    if found is not None:
        return found
    if not download or os.environ.get("HF_HUB_OFFLINE") == "1":
        raise ModelFilesMissing(f"the sent2vec-distilbert embedder needs {REPO}'s files (not "
                                f"in {folder}, downloads are off): {HOW_TO_GET}")
    try:
        return fetch(folder)
    except (OSError, ValueError) as e:
        raise ModelFilesMissing(f"downloading {REPO} failed ({e}); {HOW_TO_GET}") from None


def _declared(headers: Any) -> tuple[str, str] | None:
    """The checksum the hub declares for a file: ("sha256", hex) for a file kept in large-file
    storage (``X-Linked-Etag``, or ``ETag`` when not redirected), ("git-sha1", hex), the git
    blob id, for one kept in git (``ETag``)."""
    for key in ("X-Linked-Etag", "ETag"):
        value = (headers.get(key) or "").strip().removeprefix("W/").strip('"')
        if re.fullmatch(r"[0-9a-f]{64}", value):
            return "sha256", value
        if re.fullmatch(r"[0-9a-f]{40}", value):
            return "git-sha1", value
    return None


def _file_digest(path: Path, kind: str) -> str:
    """sha256 of the file, or its git blob id (sha1 of a "blob SIZE\\0" header and the bytes)."""
    digest = hashlib.sha256() if kind == "sha256" else hashlib.sha1(usedforsecurity=False)
    if kind != "sha256":
        digest.update(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(target: Path) -> Path:
    """Download ``FILES`` at ``REVISION`` into ``target``, verifying each (see the module); a
    failed download leaves nothing behind."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        _download_into(partial)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


def _opener(seen: list[Any]) -> Any:
    """An opener that follows redirects and appends each redirect's headers to ``seen``: the
    hub answers a large file's request with a redirect to a CDN, and only that first answer
    carries the file's sha256 (``X-Linked-Etag``)."""
    import urllib.request

    class KeepHeaders(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                             newurl: str) -> Any:
            seen.append(headers)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(KeepHeaders)


def _download_into(partial: Path, timeout: float = 120.0) -> None:
    manifest: dict[str, Any] = {"repo": REPO, "revision": REVISION, "sha256": {}}
    for name in FILES:
        url = f"{endpoint()}/{REPO}/resolve/{REVISION}/{name}"
        seen: list[Any] = []
        with _opener(seen).open(url, timeout=timeout) as response:
            seen.append(response.headers)  # the hub's own answer first, the CDN's last
            declared = next(filter(None, map(_declared, seen)), None)
            with open(partial / name, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
        sha256 = _file_digest(partial / name, "sha256")
        if name in PINS:
            declared = ("sha256", PINS[name])
        if declared is None:
            raise ValueError(f"{url}: the server declared no checksum to verify it against")
        kind, expected = declared
        got = sha256 if kind == "sha256" else _file_digest(partial / name, kind)
        if got != expected:
            raise ValueError(f"{url}: {kind} {got} differs from the expected {expected}")
        manifest["sha256"][name] = sha256
    (partial / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
