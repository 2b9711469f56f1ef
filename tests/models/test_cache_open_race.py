"""Several processes opening one new response cache at the same moment (a run's workers, a
sweep's pool) all get a working, writable cache: none runs without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPEN = """
import sys, time
from toolscore.models.cache import ResponseCache
start = float(sys.argv[2])
while time.time() < start:
    pass
cache = ResponseCache(sys.argv[1])
print("ok" if cache._conn is not None and not cache.read_only else "off")
"""


def test_processes_opening_a_new_cache_at_once_all_use_it(tmp_path: Path) -> None:
    import time

    for attempt in range(4):
        path = tmp_path / f"cache-{attempt}" / "responses.sqlite"
        start = time.time() + 1.5  # every process is started and waiting by then
        procs = [subprocess.Popen([sys.executable, "-c", OPEN, str(path), str(start)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
        results = [p.communicate(timeout=120) for p in procs]
        assert [out.strip() for out, _ in results] == ["ok"] * 6, [e for _, e in results]
