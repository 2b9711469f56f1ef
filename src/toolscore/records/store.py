"""A run on disk: ``run.json`` (configuration) and ``samples.jsonl`` (one line per finished sample).

``samples.jsonl`` is append-only, each record written whole in one write, so a run killed at
any moment (even SIGKILL) loses at most the line being written; that partial line is cut off on
resume. A write that fails (full disk, file size limit) raises :class:`NotStored` after cutting
its partial line off, and no write goes through a link (:mod:`toolscore.records.files`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from toolscore.records.files import (
    NotStored,
    RunStoreError,
    open_in_place,
    refuse_unsafe,
    replace_file,
    write_all,
)
from toolscore.records.schema import FORMAT_VERSION, RecordError, RunConfig, SampleRecord

RUN_FILE = "run.json"
LOCK_FILE = ".lock"
APPEND_LOCK_FILE = ".append.lock"
SAMPLES_FILE = "samples.jsonl"
SCORES_FILE = "scores.json"
#: Every file the store writes in a run directory (besides its own temporary files).
RUN_FILES = (RUN_FILE, SAMPLES_FILE, SCORES_FILE, LOCK_FILE, APPEND_LOCK_FILE)


def json_line(record: dict[str, Any]) -> str:
    """One JSON line; text that cannot be encoded as UTF-8 (a lone surrogate that got past the
    model layer) is written with ASCII escapes instead, losslessly, never failing the run."""
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True, default=str) + "\n"
    return line


def _json_file(f: Path) -> Any:
    """run.json or scores.json (a BOM is the same text; bytes that are not UTF-8 are named)."""
    if f.is_dir():
        raise RunStoreError(f"{f}: is a folder, expected a file")
    raw = f.read_bytes()
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise RunStoreError(f"{f}: line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x})"
                            ) from None
    except json.JSONDecodeError as e:
        raise RunStoreError(f"{f}: invalid JSON at line {e.lineno} ({e.msg})") from None


class RunLocked(RunStoreError):
    """Another process is writing this run directory (a run or a resume)."""


class RunLock:
    """An exclusive lock on a run directory while a run or resume writes it.

    Two writers would run the same samples twice and interleave their lines, so the second one
    is refused at once with a one-line :class:`RunLocked`. The lock is an ``flock`` on
    ``<run dir>/.lock``: the kernel drops it when the holder exits, however it exits (SIGKILL
    included), so a lock left by a killed run never blocks the resume that follows. The file
    itself stays behind and means nothing on its own. Where ``fcntl`` is missing (Windows) no
    lock is taken.
    """

    def __init__(self, path: str | Path, *, shared: bool = False,
                 name: str = LOCK_FILE, wait: bool = False) -> None:
        self.path = Path(path)
        self.shared = shared  # the shards of one run hold it together; a whole run alone
        self.name = name
        self.wait = wait
        self._fd: int | None = None
        self._created = False

    def acquire(self) -> RunLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        self._created = not self.path.exists()
        self.path.mkdir(parents=True, exist_ok=True)
        # held: the lock lives as long as this descriptor
        fd = open_in_place(self.path / self.name, os.O_RDWR | os.O_CREAT)
        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode if self.wait else mode | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise RunLocked(f"{self.path}: another toolscore process"
                            + (f" (pid {holder})" if holder.isdigit() else "")
                            + " is writing this run directory; wait for it to finish or "
                            "stop it, then resume") from None
        self._fd = fd
        if self.name == LOCK_FILE:  # a writer of the run: refused before it writes anything
            try:
                check_run_files(self.path)
            except BaseException:
                self.release()
                raise
        if not self.shared and not self.wait:
            # the pid only names the holder when a second writer is refused: a disk too full
            # to hold it takes nothing from the lock
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        return self

    def release(self) -> None:
        if self._fd is not None:
            # A run that failed before writing anything (bad data) leaves no directory behind.
            if self._created and [p.name for p in self.path.iterdir()] == [self.name]:
                (self.path / self.name).unlink(missing_ok=True)
                with contextlib.suppress(OSError):  # a shard came in meanwhile
                    self.path.rmdir()
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def check_run_files(path: Path) -> None:
    """Refuse a run directory whose files toolscore would write through a link, or (written in
    place) with other names: said before a run, resume or rescoring changes anything."""
    for name in (RUN_FILE, SCORES_FILE):
        refuse_unsafe(path / name)
    for name in (SAMPLES_FILE, APPEND_LOCK_FILE):
        refuse_unsafe(path / name, in_place=True)


Projection = Callable[[Any], Any]


def without_output(output: Any) -> None:
    """A projection that keeps nothing of the output (status, scores and meta remain)."""
    return None


def project_record(record: dict[str, Any], project: Projection) -> dict[str, Any]:
    """``record`` with its output replaced by ``project(output)``; the traceback of a harness
    error is dropped too (it is read from the file when one record is shown)."""
    if "output" in record:
        record["output"] = project(record["output"])
    record.pop("traceback", None)
    return record


def sample_key(record: dict[str, Any]) -> tuple[str, int]:
    return str(record["id"]), int(record.get("epoch", 0))


def _cut_partial_tail(fd: int, path: Path) -> tuple[int, int]:
    """Truncate the file ``fd`` after its last newline; (its size before, its size after)."""
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return end, end
    pos, block = end, 65536
    while pos > 0:  # scan back block by block: records can be long
        start = max(0, pos - block)
        i = os.pread(fd, pos - start, start).rfind(b"\n")
        if i >= 0:
            keep = start + i + 1
            break
        pos = start
    else:
        keep = 0
    try:
        os.ftruncate(fd, keep)
    except OSError as e:
        raise NotStored(f"{path}: its partial last line cannot be cut off ({e.strerror})"
                        ) from None
    return end, keep


class RunStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def samples_path(self) -> Path:
        return self.path / SAMPLES_FILE

    def lock(self, shared: bool = False) -> RunLock:
        """An exclusive :class:`RunLock` on this directory (``with store.lock(): ...``);
        ``shared``: the lock the shards of one run hold together (a whole run is refused
        while shards write, and shards while a whole run writes)."""
        return RunLock(self.path, shared=shared)

    def append_lock(self) -> RunLock:
        """A short exclusive lock, waited for, around one append (or one read-and-score):
        shards of one run append to the same ``samples.jsonl`` from several processes."""
        return RunLock(self.path, name=APPEND_LOCK_FILE, wait=True)

    def exists(self) -> bool:
        return (self.path / RUN_FILE).is_file()

    # -- configuration -----------------------------------------------------------------------
    def write_config(self, config: RunConfig | dict[str, Any]) -> None:
        """Write ``run.json`` (a dict is checked as a current-format :class:`RunConfig`)."""
        if isinstance(config, dict):
            config = RunConfig.from_dict({"format_version": FORMAT_VERSION, **config},
                                         str(self.path / RUN_FILE))
        self.path.mkdir(parents=True, exist_ok=True)
        text = json.dumps(config.to_dict(), indent=2, sort_keys=True, default=str)
        replace_file(self.path / RUN_FILE, [text.encode("utf-8")])

    def config(self) -> RunConfig:
        """``run.json``, typed; a 0.1.0 file is read into the current shape."""
        f = self.path / RUN_FILE
        if not f.exists():
            raise RunStoreError(f"{self.path}: not a run directory (no {RUN_FILE})")
        doc = _json_file(f)
        try:
            return RunConfig.from_dict(doc, str(f))
        except RecordError as e:
            raise RunStoreError(str(e)) from None

    def read_config(self) -> dict[str, Any]:
        """``run.json`` as a plain dict in the current shape (see :meth:`config`)."""
        return self.config().to_dict()

    # -- samples -----------------------------------------------------------------------------
    def repair(self) -> int:
        """Cut a partial last line left by a killed writer; returns the bytes removed."""
        refuse_unsafe(self.samples_path, in_place=True)  # said before the file is read
        if not self.samples_path.is_file():
            return 0
        for _ in self.records(without_output):  # a file that is not a run's lines is refused,
            pass                                 # never cut
        with self.append_lock():
            fd = open_in_place(self.samples_path, os.O_RDWR)
            try:
                end, keep = _cut_partial_tail(fd, self.samples_path)
            finally:
                os.close(fd)
        return end - keep

    def records(self, project: Projection | None = None) -> Iterator[dict[str, Any]]:
        """Every complete record in file order; the latest record of a key wins in ``latest``.

        ``project`` replaces each record's ``output`` as it is read (see :func:`without_output`):
        aggregating 10,000 records then holds their scores, not their transcripts.
        """
        for _, record in self.lines(project):
            yield record

    def lines(self, project: Projection | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """:meth:`records` with the line number of each (for messages that name it)."""
        f = self.samples_path
        if f.is_dir():
            raise RunStoreError(f"{f}: is a folder, expected a file")
        if not f.is_file():
            return
        with open(f, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.endswith(b"\n"):
                    return  # partial line of a killed writer
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as e:
                    raise RunStoreError(f"{f}: line {lineno}: not UTF-8 text (byte "
                                        f"0x{raw[e.start]:02x})") from None
                if not line.strip():
                    continue
                try:
                    doc = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RunStoreError(f"{f}: line {lineno}: invalid JSON ({e})") from None
                try:  # the fields every reader relies on (the output is the benchmark's)
                    SampleRecord.from_dict(doc, f"{f}: line {lineno}")
                except RecordError as e:
                    raise RunStoreError(str(e)) from None
                yield lineno, (project_record(doc, project) if project is not None else doc)

    def latest(self, project: Projection | None = None) -> dict[tuple[str, int], dict[str, Any]]:
        """The last record written for each (sample id, epoch), in first-written order."""
        return {sample_key(r): r for r in self.records(project)}

    def latest_index(self) -> dict[tuple[str, int], int]:
        """Record number (0-based, in file order) of the latest record of each key, the keys in
        first-written order: with :meth:`records_at` a caller streams the latest records
        without holding them all."""
        index: dict[tuple[str, int], int] = {}
        for n, r in enumerate(self.records(without_output)):
            index[sample_key(r)] = n
        return index

    def records_at(self, numbers: set[int], project: Projection | None = None
                   ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) of the records whose number (see :meth:`latest_index`) is in
        ``numbers``, in file order."""
        for n, (lineno, r) in enumerate(self.lines(project)):
            if n in numbers:
                yield lineno, r

    def finished(self) -> set[tuple[str, int]]:
        """Samples that need no re-run: completed ones (errored samples are retried on resume)."""
        return {k for k, r in self.latest(without_output).items() if r.get("status") == "ok"}

    def typed_records(self) -> Iterator[SampleRecord]:
        """:meth:`records`, typed (a malformed line is a one-line error naming it)."""
        for n, doc in enumerate(self.records(), 1):
            try:
                yield SampleRecord.from_dict(doc, f"{self.samples_path}: record {n}")
            except RecordError as e:
                raise RunStoreError(str(e)) from None

    def append(self, record: dict[str, Any] | SampleRecord) -> None:
        """Add one record at the end of ``samples.jsonl``, whole, or raise :class:`NotStored`
        (a full disk, the file size limit) with the file as it was before."""
        if isinstance(record, SampleRecord):
            record = record.to_dict()
        data = json_line(record).encode("utf-8")  # (the lock makes the folder if it is gone)
        # Under the append lock, in one write: shards of a run append to this file at once,
        # and a shard killed mid-line must not glue its partial line to the next record.
        path = self.samples_path
        with self.append_lock():
            fd = open_in_place(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                _, end = _cut_partial_tail(fd, path)
                try:
                    write_all(fd, data, path)
                except NotStored:
                    # a part of the line may be written: cut it now, so that the file holds
                    # whole records only (else the next append or resume cuts it)
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, end)
                    raise
            finally:
                os.close(fd)

    def partial_tail(self) -> int | None:
        """The line number of a partial last line (a writer killed mid-line), else None. Reads
        the last byte, and counts lines in chunks only when it is not a newline."""
        f = self.samples_path
        if not f.is_file():
            return None
        with open(f, "rb") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return None
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return None
            fh.seek(0)
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1

    def rewrite(self, records: Iterable[dict[str, Any]]) -> None:
        """Replace samples.jsonl atomically (used by rescoring); ``records`` may be a stream.

        Refused while the file ends in a partial line: rewriting would drop that sample
        silently and the new scores.json would count a subset; resuming the run finishes it.
        """
        torn = self.partial_tail()
        if torn is not None:
            raise RunStoreError(f"{self.samples_path}: line {torn}: partial record (the run "
                                "was stopped while writing it); resume the run to finish it, "
                                "then score; the run's files are left as they are")
        refuse_unsafe(self.samples_path)  # before the stream is read
        replace_file(self.samples_path, (json_line(r).encode("utf-8") for r in records))

    def write_scores(self, scores: dict[str, Any]) -> None:
        """Write ``scores.json`` whole (a failure leaves the previous file as it was)."""
        text = json.dumps(scores, indent=2, sort_keys=True, default=str)
        replace_file(self.path / SCORES_FILE, [text.encode("utf-8")])

    def read_scores(self) -> dict[str, Any] | None:
        f = self.path / SCORES_FILE
        if not f.exists():
            return None
        doc = _json_file(f)
        if not isinstance(doc, dict):
            raise RunStoreError(f"{f}: expected a JSON object of metrics, got "
                                f"{type(doc).__name__}")
        return doc
