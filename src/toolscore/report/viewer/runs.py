"""The runs under a folder as the viewer lists them, kept up to date by ``stat`` and by reading
only what was appended.

A run directory is any folder holding ``run.json``. Each one is watched through its
``samples.jsonl``: the file only grows while a run writes it (one whole line per record), so
a :class:`Tail` remembers how far it has read and, when ``stat`` says the file changed, reads
the new lines only. A file replaced by rescoring (a new inode) or cut shorter is read again
from the start. The tail keeps, per record, where its line starts (so that one record can be
read on demand) and, per (sample, epoch), the latest record's status and scalar scores
(enough for the list's counts and headline figure, never a transcript).

A run is *running* while a process holds its lock (``.lock``; read from ``/proc/locks``
without taking it, so a run starting at that moment is never refused; elsewhere, the pid the
lock file names is alive), *finished* when ``scores.json`` is at least as recent as the last
record, and *stopped* otherwise.
"""

from __future__ import annotations

import json
import os
import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.records.store import LOCK_FILE, RUN_FILE, SAMPLES_FILE, SCORES_FILE

Key = tuple[str, int]
READ = 1 << 20  # bytes read at a time from the end of samples.jsonl


Latest = tuple[str, Any, tuple[str, ...], tuple[Any, ...]]  # status, split, score names, values


def _scalars(scores: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    if not isinstance(scores, dict):
        return (), ()
    kept = [(str(k), v) for k, v in scores.items()
            if isinstance(v, (bool, int, float)) or v is None]
    return tuple(k for k, _ in kept), tuple(v for _, v in kept)


@dataclass
class Tail:
    """What has been read of one ``samples.jsonl`` (see the module's docstring)."""

    path: Path
    ident: tuple[int, int] | None = None
    size: int = -1
    mtime_ns: int = -1
    offset: int = 0  # end of the last complete line read
    starts: array = field(default_factory=lambda: array("q"))  # type: ignore[type-arg]
    # per key: (status, split, score names, score values); the names of records of one
    # benchmark are one shared tuple, so 10,000 records hold little more than their numbers
    latest: dict[Key, Latest] = field(default_factory=dict)
    names: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    lines: int = 0  # complete lines read (the line number of the last one)

    @property
    def records(self) -> int:
        return len(self.starts)

    def reset(self) -> None:
        self.ident, self.size, self.mtime_ns, self.offset, self.lines = None, -1, -1, 0, 0
        self.starts = array("q")
        self.latest, self.names = {}, {}

    def ok(self) -> int:
        """How many (sample, epoch) have a finished (not errored) latest record."""
        return sum(1 for r in self.latest.values() if r[0] == "ok")

    def scored(self) -> list[dict[str, Any]]:
        """The latest finished record of each key, as the report's statistics read records
        (id, epoch, status, split, scalar scores), made when asked."""
        return [{"id": k[0], "epoch": k[1], "status": r[0], "meta": {"split": r[1]},
                 "scores": dict(zip(r[2], r[3], strict=True))}
                for k, r in self.latest.items() if r[0] == "ok"]

    def update(self) -> bool:
        """Read what was appended since the last call; True if the file changed."""
        try:
            st = os.stat(self.path)
        except OSError:
            changed = self.size != -1
            self.reset()
            return changed
        ident = (st.st_dev, st.st_ino)
        if ident == self.ident and (st.st_size, st.st_mtime_ns) == (self.size, self.mtime_ns):
            return False
        if ident != self.ident or st.st_size < self.offset:
            self.reset()  # replaced (rescored) or cut: read again from the start
        self.ident, self.size, self.mtime_ns = ident, st.st_size, st.st_mtime_ns
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            pending = b""
            while chunk := fh.read(READ):
                pending += chunk
                end = pending.rfind(b"\n")
                if end < 0:
                    continue
                self._lines(pending[:end + 1])
                pending = pending[end + 1:]
        return True

    def _lines(self, data: bytes) -> None:
        pos = 0
        for raw in data.splitlines(keepends=True):
            start, pos = self.offset + pos, pos + len(raw)
            self.lines += 1
            if not raw.strip():
                continue
            try:
                doc = json.loads(raw.decode("utf-8-sig" if start == 0 else "utf-8"))
                key = (str(doc["id"]), int(doc.get("epoch", 0)))
            except (ValueError, KeyError, TypeError):
                continue  # the report names a bad line; the list just does not count it
            self.starts.append(start)
            names, values = _scalars(doc.get("scores"))
            meta = doc.get("meta")
            self.latest[key] = (str(doc.get("status", "ok")),
                                meta.get("split") if isinstance(meta, dict) else None,
                                self.names.setdefault(names, names), values)
        self.offset += pos

    def record(self, idx: int) -> dict[str, Any]:
        """Record number ``idx`` (0-based, file order, as the report page numbers them), read
        from its own line only. IndexError if there is no such record."""
        if not 0 <= idx < len(self.starts):
            raise IndexError(idx)
        with open(self.path, "rb") as fh:
            fh.seek(self.starts[idx])
            raw = fh.readline()
        doc = json.loads(raw.decode("utf-8-sig" if self.starts[idx] == 0 else "utf-8"))
        if not isinstance(doc, dict):
            raise ValueError(f"record {idx} is not a JSON object")
        return doc


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


_LOCK_ENTRY = re.compile(r"\b([0-9a-f]+):([0-9a-f]+):(\d+)\b")


def held_locks() -> set[tuple[int, int, int]] | None:
    """(major, minor, inode) of every file locked on this machine, from ``/proc/locks``;
    None where that file cannot be read."""
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    out = set()
    for m in _LOCK_ENTRY.finditer(text):
        out.add((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))))
    return out


def is_running(run_dir: Path, locks: set[tuple[int, int, int]] | None) -> bool:
    """Whether a process holds the run directory's lock (see the module's docstring)."""
    lock = run_dir / LOCK_FILE
    try:
        st = os.stat(lock)
    except OSError:
        return False
    if locks is not None:
        return (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in locks
    try:
        pid = int(lock.read_text(encoding="ascii").strip() or 0)
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # alive, someone else's
    return True


def status_of(run_dir: Path, locks: set[tuple[int, int, int]] | None) -> str:
    if is_running(run_dir, locks):
        return "running"
    scores = _mtime(run_dir / SCORES_FILE)
    samples = _mtime(run_dir / SAMPLES_FILE)
    if scores is not None and (samples is None or scores >= samples):
        return "finished"
    return "stopped"


def find_runs(root: Path) -> list[Path]:
    """Every run directory under ``root`` (``root`` itself included), sorted; hidden folders
    are skipped and a run directory's own sub-folders are not searched."""
    found = []
    for here, dirs, files in os.walk(root, followlinks=False):
        if RUN_FILE in files:
            found.append(Path(here))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(found)


def expected_records(config: dict[str, Any]) -> int | None:
    """How many (sample, epoch) records the run is to make, when run.json says it (a limit
    or a list of sample ids; otherwise the dataset decides, which the viewer does not load)."""
    epochs = int(config.get("epochs") or 1)
    ids, limit = config.get("sample_ids"), config.get("limit")
    if isinstance(ids, list):
        return len(ids) * epochs
    if isinstance(limit, int) and not isinstance(limit, bool):
        return limit * epochs
    if isinstance(limit, list) and len(limit) == 2:
        return (int(limit[1]) - int(limit[0]) + 1) * epochs
    return None
