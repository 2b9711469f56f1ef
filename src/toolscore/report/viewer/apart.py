"""A run's report page built in a short-lived child process.

Building the page of a 10,000-record run reads every record and bootstraps its intervals: a
couple of hundred MB at its peak, which a long-running server would keep afterwards (freed
memory mostly stays with the process). A child that builds one page and exits gives it back
to the system, so the server stays the size of what it holds (its runs' tails and the pages
built). The child is this module run as a program (``python -m``; the page on its standard
output, a one-line error on its standard error), with the same ``toolscore`` package first on
its path: no fork of the server's threads, and nothing of the caller's ``__main__`` is run
again, as a multiprocessing child would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


class BuildFailed(RuntimeError):
    """The child could not build the page (the message is its one-line error)."""


def build_apart(run_dir: str | Path, url: str) -> bytes:
    """The report page of ``run_dir`` whose records are fetched from ``url`` + number, built
    in a child process (in this one when there is no interpreter to start)."""
    if not sys.executable:
        from toolscore.report.html.page import build_page

        return "".join(build_page(run_dir, record_url=url)[1]).encode("utf-8")
    import toolscore

    src = str(Path(toolscore.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", __name__, str(run_dir), url],
                          stdin=subprocess.DEVNULL, capture_output=True, check=False,
                          env={**os.environ, "PYTHONPATH": path})
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BuildFailed(said[-1] if said else f"{run_dir}: the process building its report "
                          f"page ended with exit code {done.returncode}")
    return done.stdout


def main(args: list[str]) -> int:
    """``python -m toolscore.report.viewer.apart RUN_DIR URL``: the page on standard output."""
    from toolscore.report.html.page import build_page

    try:
        _, parts = build_page(args[0], record_url=args[1])
        out = sys.stdout.buffer
        for part in parts:
            out.write(part.encode("utf-8"))
        out.flush()
    except Exception as e:  # one line for the server to show
        sys.stderr.write(" ".join(f"{type(e).__name__}: {e}".split()) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
