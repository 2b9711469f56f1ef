"""``toolscore mcp serve ... --transport stdio`` as a desktop client starts it: a subprocess the
SDK's stdio client talks to; closing the connection ends the episode into --out. Without the
``mcp`` package the command says how to install it (exit 2)."""

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

from toolscore.records import RunStore  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"


def environment(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "TOOLSCORE_DATA": str(dataset("tooltalk").parent),
            **extra}


def test_stdio_serves_one_episode_and_records_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable, env=environment(),
        args=["-m", "toolscore.cli", "mcp", "serve", "tooltalk", "--conversation",
              "AddAlarm-easy", "--transport", "stdio", "--embedder", "hashing",
              "--out", str(out), "--agent", "desktop/person"])

    async def play() -> tuple[list[str], str, bool]:
        async with Client(params, mode="legacy") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("AddAlarm", {"time": "18:30:00"})
            instructions = client.instructions or ""
            return tools, result.content[0].text, "Username: justinkool" in instructions

    tools, text, prompted = anyio.run(play)
    assert len(tools) == 28 and text == '{"alarm_id": "5bff-dd80"}' and prompted
    for _ in range(100):  # the server writes its record as it exits
        if RunStore(out).exists() and list(RunStore(out).records()):
            break
        anyio.run(anyio.sleep, 0.1)
    (record,) = list(RunStore(out).records())
    assert record["id"] == "AddAlarm-easy" and record["scores"]["success"] is True
    assert RunStore(out).config().model == "desktop/person"


def test_missing_sdk_is_one_line_and_exit_2(tmp_path: Path) -> None:
    fake = tmp_path / "mcp"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('No module named mcp')\n")
    env = environment()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    done = subprocess.run([sys.executable, "-m", "toolscore.cli", "mcp", "serve", "tooltalk",
                           "--conversation", "AddAlarm-easy"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert "pip install 'toolscore[mcp]'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_unknown_conversation_is_one_line_and_exit_2() -> None:
    done = subprocess.run([sys.executable, "-m", "toolscore.cli", "mcp", "serve", "tooltalk",
                           "--conversation", "NoSuch-easy"], env=environment(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "no conversation 'NoSuch-easy'" in done.stderr
