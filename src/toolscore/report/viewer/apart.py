"""A run's report page built in a short-lived child process.

Building the page of a 10,000-record run reads every record and bootstraps its intervals: a
few hundred MB at its peak, which a long-running server would keep afterwards (freed memory
mostly stays with the process). A child forked for one page returns it to the system when it
exits, so the server stays the size of what it holds (its runs' tails and the pages built).

The children come from a ``forkserver``: a clean single-threaded process that has imported the
report's modules once, so a child starts in milliseconds without inheriting the server's
threads. Where there is no forkserver (Windows, macOS' default) the page is built in the
server's own process.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

PRELOAD = ["toolscore.report.html.page", "toolscore.benchmarks.registry"]
_context: Any = None
_lock = threading.Lock()


class BuildFailed(RuntimeError):
    """The child could not build the page (the message is its one-line error)."""


def _child(conn: Connection, run_dir: str, url: str) -> None:
    try:
        from toolscore.report.html.page import build_page

        data = "".join(build_page(run_dir, record_url=url)[1]).encode("utf-8")
        conn.send_bytes(b"1" + data)
    except BaseException as e:  # said to the parent, whatever it was
        conn.send_bytes(b"0" + f"{type(e).__name__}: {e}".encode("utf-8", "replace"))
    finally:
        conn.close()


def _ctx() -> Any:
    global _context
    with _lock:
        if _context is None:
            if "forkserver" not in multiprocessing.get_all_start_methods():
                _context = False
            else:
                _context = multiprocessing.get_context("forkserver")
                _context.set_forkserver_preload(PRELOAD)
        return _context


def build_apart(run_dir: str | Path, url: str) -> bytes:
    """The report page of ``run_dir`` whose records are fetched from ``url`` + number, built
    in a child process (in this one where children cannot be forked cleanly)."""
    ctx = _ctx()
    if ctx is False:
        from toolscore.report.html.page import build_page

        return "".join(build_page(run_dir, record_url=url)[1]).encode("utf-8")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, str(run_dir), url), daemon=True)
    child.start()
    send.close()
    try:
        message = receive.recv_bytes()
    except EOFError:
        message = b""
    finally:
        receive.close()
        child.join()
    if not message:
        raise BuildFailed(f"{run_dir}: the process building its report page ended without "
                          f"a page (exit code {child.exitcode})")
    if message[:1] != b"1":
        raise BuildFailed(message[1:].decode("utf-8", "replace"))
    return message[1:]
