"""``toolscore --debug``: a condition toolscore knows is one line; with ``--debug`` the
traceback behind it is printed too, for whoever debugs toolscore itself."""

from __future__ import annotations

import socket
from pathlib import Path

from support.cli import toolscore


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def test_one_line_without_debug_and_the_traceback_with_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    args = ("run", "demo", "--model", "openai/x", "--base-url", url, "--out", "run")
    plain = toolscore(*args, cwd=tmp_path, env={"OPENAI_API_KEY": "k"})
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert plain.stderr.strip().splitlines() == [
        f"error: {url}: nothing answers at 127.0.0.1:{url.split(':')[2].split('/')[0]} "
        "(connection refused)"]
    debug = toolscore("--debug", *args, cwd=tmp_path, env={"OPENAI_API_KEY": "k"})
    assert debug.returncode == 2 and debug.stderr.startswith("Traceback (most recent call last)")
    assert "EndpointUnreachable" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1] == plain.stderr.strip()
    assert not (tmp_path / "run").exists()
