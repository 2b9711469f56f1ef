"""The viewer's model: the runs under one folder, each with its tail, its summary row, its
report page (built by :mod:`toolscore.report.html.page`, kept until the run changes) and its
records one at a time.

A run is named by its path relative to the folder (``.`` for the folder itself); a name is
only ever looked up among the runs found, never joined to a path, so no request reaches a file
outside them. Everything here is safe to call from the server's threads.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from toolscore.records.store import RUN_FILE, SCORES_FILE, RunStore
from toolscore.report.intervals import compute
from toolscore.report.view import RunView, run_view
from toolscore.report.viewer.runs import Tail, expected_records, find_runs, held_locks, status_of

RESCAN = 2.0  # seconds between two searches of the folder for new runs
PAGES = 8  # report pages kept built


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


@dataclass(frozen=True)
class Locks:
    """The files locked on this machine at one moment (None: not known here)."""

    held: set[tuple[int, int, int]] | None


@dataclass
class Entry:
    """One run directory as the viewer knows it."""

    name: str
    path: Path
    tail: Tail
    lock: threading.Lock = field(default_factory=threading.Lock)
    building: threading.Lock = field(default_factory=threading.Lock)
    config_sig: tuple[int, int] | None = None
    config: dict[str, Any] | None = None
    view: RunView | None = None
    error: str | None = None
    headline: dict[str, Any] | None = None
    page: tuple[Any, bytes] | None = None  # (the run's signature when built, the page)
    used: float = 0.0  # when the page was last served

    def signature(self) -> tuple[Any, ...]:
        """What changes when the run does: its three files' sizes and times."""
        return (_signature(self.path / RUN_FILE), _signature(self.tail.path),
                _signature(self.path / SCORES_FILE))


class Catalog:
    """The runs under ``root``; with ``apart``, pages are built by :func:`build_apart`."""

    def __init__(self, root: str | Path, *, apart: bool = False) -> None:
        self.root = Path(root)
        self.apart = apart  # report pages built in a child process (see build_apart)
        self.entries: dict[str, Entry] = {}
        self._scanned = 0.0
        self._lock = threading.Lock()

    # -- finding runs --------------------------------------------------------------------------
    def scan(self, force: bool = False) -> None:
        with self._lock:
            if not force and time.monotonic() - self._scanned < RESCAN:
                return
            found = {}
            for path in find_runs(self.root):
                rel = path.relative_to(self.root).as_posix() if path != self.root else "."
                found[rel] = self.entries.get(rel) or Entry(
                    rel, path, Tail(RunStore(path).samples_path))
            self.entries = found
            self._scanned = time.monotonic()

    def get(self, name: str) -> Entry | None:
        """The run called ``name``, or None (the folder is searched again for a new one)."""
        entry = self.entries.get(name)
        if entry is None:
            self.scan(force=True)
            entry = self.entries.get(name)
        return entry

    # -- one run -------------------------------------------------------------------------------
    def _refresh(self, entry: Entry) -> bool:
        """Read what changed in ``entry`` (under its lock); True if its records changed."""
        sig = _signature(entry.path / RUN_FILE)
        if sig != entry.config_sig:
            entry.config_sig, entry.headline = sig, None
            try:
                entry.config = RunStore(entry.path).read_config()
                entry.view, entry.error = run_view(entry.config), None
            except Exception as e:  # a bad run.json is a row saying so, not a failed list
                entry.config, entry.view, entry.error = None, None, str(e)
        changed = entry.tail.update()
        if changed:
            entry.headline = None
        return changed

    def _headline(self, entry: Entry) -> dict[str, Any] | None:
        """The run's first headline metric over its latest finished records."""
        if entry.headline is None and entry.view is not None:
            ok = entry.tail.scored()
            try:
                specs = entry.view.interval_metrics(ok)
                value = compute(ok, specs[0]) if specs and ok else None
                value = value if value is None or math.isfinite(value) else None
            except Exception:  # a third-party hook: the row shows no figure
                specs, value = [], None
            entry.headline = {} if not specs else {"label": specs[0].label,
                                                    "kind": specs[0].kind, "value": value}
        return entry.headline or None

    def summary(self, entry: Entry, locks: Locks | None = None) -> dict[str, Any]:
        """The run's row in the list (and the live state of its page); ``locks``: the
        :func:`held_locks` of the moment, when the caller has them."""
        if locks is None:
            locks = Locks(held_locks())
        with entry.lock:
            self._refresh(entry)
            tail, config = entry.tail, entry.config or {}
            status = status_of(entry.path, locks.held)
            done = tail.ok()
            errors = len(tail.latest) - done
            total = expected_records(config) if config else None
            if status == "finished" and (total is None or total < len(tail.latest)):
                total = len(tail.latest)
            mode = None
            if entry.view is not None:
                try:
                    mode = entry.view.mode()
                except Exception:
                    mode = None
            return {"id": entry.name, "path": str(entry.path),
                    "benchmark": config.get("benchmark"), "model": config.get("model"),
                    "mode": mode, "status": status, "done": done, "errors": errors,
                    "total": total, "records": tail.records, "created": config.get("created"),
                    "headline": self._headline(entry), "error": entry.error,
                    "changed": list(entry.signature())}

    def runs(self) -> list[dict[str, Any]]:
        self.scan()
        locks = Locks(held_locks())
        return [self.summary(e, locks) for e in list(self.entries.values())]

    def page(self, entry: Entry) -> bytes:
        """The run's report page (see :func:`toolscore.report.html.page.build_page`): its
        records fetched one at a time from :meth:`record`; built again only once the run
        changed."""
        from toolscore.report.html.page import build_page
        from toolscore.report.viewer.apart import build_apart

        # built under its own lock: the list and the run's state keep answering meanwhile
        with entry.building:
            with entry.lock:
                self._refresh(entry)
                sig = entry.signature()
                if entry.page is not None and entry.page[0] == sig:
                    entry.used = time.monotonic()
                    return entry.page[1]
            url = f"/api/record?id={quote(entry.name, safe='')}&n="
            data = (build_apart(entry.path, url) if self.apart else
                    "".join(build_page(entry.path, record_url=url)[1]).encode("utf-8"))
            with entry.lock:
                entry.page = (sig, data)
            entry.used = time.monotonic()
            self._forget_pages()
            return data

    def _forget_pages(self) -> None:
        """Keep the :data:`PAGES` pages used last (a page of 10,000 records is 2 MB)."""
        with self._lock:
            kept = sorted((e for e in self.entries.values() if e.page is not None),
                          key=lambda e: e.used, reverse=True)
        for entry in kept[PAGES:]:
            with entry.lock:
                entry.page = None

    def record(self, entry: Entry, idx: int) -> dict[str, Any]:
        """Record ``idx`` as the report page shows it when opened (IndexError: none such)."""
        from toolscore.report.html.samples import record_body

        with entry.lock:
            self._refresh(entry)
            record = entry.tail.record(idx)
            view = entry.view
        if view is None:
            return record_body(record, {})
        return record_body(record, view.record_view(record))
