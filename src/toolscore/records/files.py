"""Writing a run's files so that a write harms nothing but the file meant, and never fails
silently.

Why this exists: a run directory is shared, copied and inspected by hand, so one of its names
may be a symbolic link to some other file (or a hard link, another name of a file elsewhere).
Writing through such a name would overwrite whatever it points to, so every write opens the
name itself without following a link (``O_NOFOLLOW``), and a write in place (the append of a
record, a lock's pid) also refuses a file with other hard links. A file written whole
(``run.json``, ``scores.json``, a rewritten ``samples.jsonl``) goes to a temporary file of its
own first and is renamed over the name, which replaces a link rather than following it.

And a write can end short of its data (a file size limit, ``ulimit -f``, where the kernel
writes what fits; a full disk): every byte is checked, so a record that is not stored whole is
an error that stops the run instead of a torn line that the next append cuts away unseen.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20  # a streamed rewrite is written a megabyte at a time


class RunStoreError(ValueError):
    """A run directory that cannot be read (one line naming the file)."""


class UnsafeFile(RunStoreError):
    """A run's file toolscore will not write: a link, not a regular file, or a file with other
    names (the message names it and what to do)."""


class NotStored(RunStoreError):
    """A write to a run's file did not complete (full disk, file size limit, I/O error); the
    file is left as it was before the write, or with at most a partial last line that the next
    append or resume cuts off."""

    # set by the runner when a record was not stored: the facts of the stopped run's message
    # (reason, run_dir, benchmark, kept, total), kept when the error is pickled by a worker
    stopped: dict[str, Any] | None = None


def describe(error: OSError) -> str:
    """The reason of a failed write, with what the usual ones mean here."""
    reason = error.strerror or str(error)
    if error.errno == errno.EFBIG:
        return f"{reason}: the file size limit of this process (ulimit -f) is reached"
    return reason


def refuse_unsafe(path: Path, *, in_place: bool = False) -> None:
    """Refuse a name that is a link or not a regular file (``in_place``: or a file that has
    other names too). A name that does not exist yet is fine.

    Only direct children of a run directory are written, so a name that is not a symbolic
    link is a file inside the directory; a hard link is the one way such a name is also a file
    elsewhere, hence the link count.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise NotStored(f"{path}: cannot be read ({describe(e)})") from None
    _refuse(path, st, in_place)


def _refuse(path: Path, st: os.stat_result, in_place: bool) -> None:
    if stat.S_ISLNK(st.st_mode):
        try:
            target = f" (to {os.readlink(path)})"
        except OSError:
            target = ""
        raise UnsafeFile(f"{path}: is a symbolic link{target}; toolscore never writes a run's "
                         "files through a link: put the file itself in its place")
    if stat.S_ISDIR(st.st_mode):
        raise UnsafeFile(f"{path}: is a folder, expected a file")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"{path}: is not a regular file; toolscore writes a run's files only "
                         "as regular files")
    if in_place and st.st_nlink > 1:
        raise UnsafeFile(f"{path}: has {st.st_nlink - 1} other hard link(s), so writing it "
                         "would change those files too; put a copy of it in its place")


def open_in_place(path: Path, flags: int) -> int:
    """A descriptor of ``path`` for a write in place (``flags`` of :func:`os.open`), opened
    without following a link; a regular file with no other name (see :func:`refuse_unsafe`)."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC, 0o666)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO):
            refuse_unsafe(path, in_place=True)  # raises, naming what the name is
        raise NotStored(f"{path}: cannot be opened for writing ({describe(e)})") from None
    try:
        _refuse(path, os.fstat(fd), in_place=True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes, path: Path) -> None:
    """Write every byte of ``data`` or raise :class:`NotStored`: a short write is followed by
    another, which reports why the first one stopped (EFBIG past ``ulimit -f``, ENOSPC)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except OSError as e:
            raise NotStored(f"{path}: not written ({describe(e)})") from None
        if n <= 0:
            raise NotStored(f"{path}: not written (the system wrote no byte)")
        view = view[n:]


def replace_file(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``path`` whole: into a temporary file of this writer's own, renamed over ``path``
    when every byte is written. A failure (of a write, or of the stream ``chunks``) leaves
    ``path`` as it was. A link at ``path`` is refused before anything is written."""
    refuse_unsafe(path)
    # a name of this writer's own: shards starting together each write run.json, and a shared
    # temporary name would be renamed away under another writer
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:  # left by a killed process that had this pid and thread id
            tmp.unlink()
            fd = os.open(tmp, flags, 0o666)
    except OSError as e:
        raise NotStored(f"{path}: not written ({describe(e)})") from None
    try:
        try:
            pending: list[bytes] = []
            size = 0
            for chunk in chunks:
                pending.append(chunk)
                size += len(chunk)
                if size >= _CHUNK:
                    write_all(fd, b"".join(pending), path)
                    pending, size = [], 0
            write_all(fd, b"".join(pending), path)
        except BaseException:
            os.close(fd)
            raise
        try:
            os.close(fd)  # where a network file system reports a full disk
            os.replace(tmp, path)
        except OSError as e:
            raise NotStored(f"{path}: not written ({describe(e)})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
