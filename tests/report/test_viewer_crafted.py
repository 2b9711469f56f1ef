"""Viewing someone else's run starts nothing it names: a run made with ``--mcp-server "sh -c
'...'"`` (see :mod:`security.crafted`) is listed, its report page served and its records
opened by ``toolscore view`` without the command ever starting (no marker file)."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from security.crafted import marker_command, write_data  # noqa: E402

import toolscore as api  # noqa: E402
from toolscore.report.viewer import make_server  # noqa: E402


def test_viewing_a_crafted_run_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    runs = tmp_path / "runs"
    api.evaluate("tooltalk", "oracle", data=write_data(tmp_path), embedder="hashing",
                 mcp_server=marker_command(tmp_path, marker), out=runs / "run", cache=None)
    assert marker.is_file()  # the command does write the marker when it is started
    marker.unlink()
    server = make_server(str(runs), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        def get(path: str) -> bytes:
            with urllib.request.urlopen(server.url + path, timeout=120) as resp:
                return resp.read()

        rows = json.loads(get("api/runs"))["runs"]
        assert [r["id"] for r in rows] == ["run"] and rows[0]["status"] == "finished"
        assert b"toolscore report: tooltalk" in get("report?id=run")
        assert json.loads(get("api/record?id=run&n=0"))["scores"]
        assert json.loads(get("api/state?id=run"))["records"] == rows[0]["records"]
    finally:
        server.shutdown()
        server.server_close()
    assert not marker.exists(), "the run's command was started"
