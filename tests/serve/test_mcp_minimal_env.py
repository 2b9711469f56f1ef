"""``toolscore mcp serve`` as a desktop MCP client really starts it: the SDK's default
environment (HOME, PATH, USER, ...; no TOOLSCORE_DATA), another working folder. With ``--data``
in its args the episode is served and recorded; without, the server exits at once with one
line naming ``--data`` and nothing on stdout (the protocol's channel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from support.data import dataset

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import get_default_environment  # noqa: E402

from toolscore.records import RunStore  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"


def minimal_environment(home: Path) -> dict[str, str]:
    """What an MCP client passes a server it starts, with an empty home (no user cache) and
    downloads sent to a closed port (the test stays offline); PYTHONPATH only selects this
    checkout's sources."""
    home.mkdir(exist_ok=True)
    closed = "http://127.0.0.1:9"
    env = {**get_default_environment(), "HOME": str(home), "PYTHONPATH": str(SRC),
           "https_proxy": closed, "HTTPS_PROXY": closed, "http_proxy": closed,
           "HTTP_PROXY": closed}
    assert "TOOLSCORE_DATA" not in env and "XDG_CACHE_HOME" not in env
    return env


def serve_args(*extra: str) -> list[str]:
    return ["-m", "toolscore.cli", "mcp", "serve", "tooltalk", "--conversation",
            "AddAlarm-easy", "--transport", "stdio", "--embedder", "hashing", *extra]


def test_data_in_the_args_serves_the_episode(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "me"
    elsewhere = tmp_path / "client"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=sys.executable, env=minimal_environment(tmp_path / "home"), cwd=elsewhere,
        args=serve_args("--data", str(dataset("tooltalk").parent), "--out", str(out),
                        "--agent", "me/desktop"))

    async def play() -> tuple[int, str]:
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("AddAlarm", {"time": "18:30:00"})
            return len(tools), result.content[0].text

    assert anyio.run(play) == (28, '{"alarm_id": "5bff-dd80"}')
    for _ in range(100):  # the server writes its record as it exits
        if RunStore(out).exists() and list(RunStore(out).records()):
            break
        anyio.run(anyio.sleep, 0.1)
    (record,) = list(RunStore(out).records())
    assert record["id"] == "AddAlarm-easy" and record["scores"]["success"] is True


def test_without_data_one_line_names_the_option(tmp_path: Path) -> None:
    env = minimal_environment(tmp_path / "home")
    done = subprocess.run([sys.executable, *serve_args("--out", str(tmp_path / "run"))],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: dataset 'tooltalk' not found")
    assert "put --data DIR in the server's args" in line
    assert not (tmp_path / "run").exists()
    assert os.listdir(tmp_path / "home") == []  # nothing downloaded, nothing cached
