"""No secret is stored: not an API key an endpoint echoes in an ordinary reply (as is or
base64-encoded, in text or in tool-call arguments), not a token, key or URL credential typed on
the command line. Checked where they would land: every file of the run directory, the rows of
the response cache, the HTML report with its compressed records unpacked, run.json's
``command``."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.cli import toolscore
from support.data import dataset
from support.testing.openai_server import FakeOpenAIServer, reply_to_completion

from toolscore.models.base import secret_forms
from toolscore.types import Message, ToolCall

KEY = "sk-echo-Qm4T8vWx2Lp9Rz7Kd3Nf"
PASSWORD = "pw-Hs6Yb1Jc5Ge0Tq8U"


def forms(secret: str) -> list[str]:
    """What a grep for the secret looks for: as is, URL-encoded, base64 (alone and inside a
    longer encoded text, at any alignment) and long tails."""
    raw = secret.encode()
    found = {secret, quote(secret, safe=""), base64.b64encode(raw).decode(),
             base64.urlsafe_b64encode(raw).decode().rstrip("="), secret[-10:]}
    return sorted(found | {f for f in secret_forms(secret) if len(f) >= 8})


def leaks(text: str) -> list[str]:
    return [f for s in (KEY, PASSWORD) for f in forms(s) if f in text]


def echo(request: dict[str, Any]) -> dict[str, Any]:
    """An endpoint that repeats the key (and the URL password) in every ordinary answer: in a
    tool call's arguments after the user speaks, in its text after a tool result."""
    both = f"{KEY} {PASSWORD}"
    b64 = base64.b64encode(both.encode()).decode()
    if request["messages"][-1]["role"] == "tool":
        return reply_to_completion(Message(role="assistant",
                                           content=f"Done. Your key is {KEY}; as base64: {b64}"))
    call = ToolCall("call_1", "CreateNote", json.dumps({"title": KEY, "text": b64}))
    return reply_to_completion(Message(role="assistant", content=f"noting {both}",
                                       tool_calls=[call]))


def test_an_echoed_key_reaches_no_record_cache_report_or_command(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp")
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(echo) as srv:
        url = srv.base_url.replace("http://", f"http://user:{PASSWORD}@")
        done = toolscore("run", "demo", "--model", "openai/fake", "--base-url", url,
                         "--cache", str(cache), "--out", str(tmp_path / "run"),
                         "--embedder", "hashing", "--limit", "2",
                         "--html", str(tmp_path / "report.html"), "--json", cwd=tmp_path,
                         env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "run"
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" for r in records)
    assert "***" in json.dumps(records)  # the echo arrived, and was blanked
    texts = {str(p): p.read_bytes().decode("utf-8", "replace")
             for p in run.rglob("*") if p.is_file()}
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT key, model, reply FROM replies").fetchall()
    assert rows
    texts["cache rows"] = json.dumps(rows)
    texts["cache file"] = cache.read_bytes().decode("utf-8", "replace")
    from toolscore.report.html.samples import page_bodies

    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    texts["report.html"] = page + json.dumps(page_bodies(page), ensure_ascii=False)
    texts["stdout"] = done.stdout + done.stderr
    for name, text in texts.items():
        assert not leaks(text), (name, leaks(text))
    command = json.loads((run / "run.json").read_text())["command"]
    assert "--base-url" in command and "user:" not in " ".join(command)


@pytest.mark.parametrize(("argv", "hidden", "kept"), [
    (["toolscore", "mcp", "serve", "tooltalk", "--token", "tok-Abc123456", "--port", "8080"],
     ["tok-Abc123456"], ["--token", "8080"]),
    (["toolscore", "mcp", "serve", "--control-token=ctl-Abc123456", "--json"],
     ["ctl-Abc123456"], ["--json"]),
    (["toolscore", "run", "x", "--api-key", "k-Abc123456", "--max-tokens", "512"],
     ["k-Abc123456"], ["512", "--max-tokens"]),
    (["toolscore", "run", "x", "-M", "api_key=k-Abc123456", "-Mtoken=t-Abc123456",
      "--model-arg=secret_key=s-Abc123456", "-M", "top_p=0.9"],
     ["k-Abc123456", "t-Abc123456", "s-Abc123456"], ["top_p=0.9"]),
    (["toolscore", "run", "x", "-M", 'extra_body={"api_key": "k-Abc123456", "n": "2"}'],
     ["k-Abc123456"], ['"n": "2"']),
    (["toolscore", "run", "x", "--base-url", "http://me:k-Abc123456@10.0.0.1:8/v1?token=t-9z9z9z9z"
      "&v=1"], ["k-Abc123456", "t-9z9z9z9z", "me:"], ["10.0.0.1:8/v1", "v=1"]),
    (["toolscore", "run", "x", "--password", "p-Abc123456", "--my-secret=s-Abc123456",
      "OPENAI_API_KEY=k-Abc123456"], ["p-Abc123456", "s-Abc123456", "k-Abc123456"], []),
])
def test_stored_command_lines_hide_secret_bearing_flags(argv: list[str], hidden: list[str],
                                                        kept: list[str]) -> None:
    from toolscore.models.base import redact_argv

    stored = " ".join(redact_argv(argv))
    assert not [h for h in hidden if h in stored], stored
    assert all(k in stored for k in kept), stored
    assert stored.startswith(" ".join(argv[:3]))


def test_a_known_secret_is_hidden_in_any_form_and_place() -> None:
    from toolscore.models.base import redact_argv

    b64 = base64.b64encode(KEY.encode()).decode()
    stored = redact_argv(["toolscore", "run", "--note", f"x{KEY}y", "--label", b64], [KEY])
    assert not leaks(" ".join(stored)), stored


def test_a_run_stores_its_command_line_without_secrets(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """From Python too: a script's own argv holding a token is stored redacted."""
    import toolscore as api

    monkeypatch.setattr(sys, "argv", ["evaluate.py", "--hf-token", "hf-Abc123456",
                                      "--url", f"https://u:{PASSWORD}@h.example/v1"])
    run = api.evaluate("demo", "oracle", embedder="hashing", cache=None, out=tmp_path / "run",
                       limit=1)
    stored = json.loads((tmp_path / "run" / "run.json").read_text())["command"]
    assert stored == run.config.command == [
        "evaluate.py", "--hf-token", "***", "--url", "https://***@h.example/v1"]


def test_mcp_serve_does_not_store_its_tokens(tmp_path: Path) -> None:
    """``toolscore mcp serve --token T`` records its episodes into a run whose run.json holds
    the command line: the tokens are not in it."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    import toolscore as api
    from toolscore.records import RunStore

    src = Path(api.__file__).resolve().parents[1]  # the code under test, in the server too
    out = tmp_path / "run"
    env = {**os.environ, "TOOLSCORE_DATA": str(dataset("tooltalk").parent),
           "PYTHONPATH": os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH"))
                                         if p)}
    params = StdioServerParameters(
        command=sys.executable, env=env,
        args=["-m", "toolscore.cli", "mcp", "serve", "tooltalk", "--conversation",
              "AddAlarm-easy", "--transport", "stdio", "--embedder", "hashing",
              "--token", f"tok-{PASSWORD}",
              "--out", str(out), "--agent", "desktop/person"])

    async def play() -> None:
        async with Client(params, mode="legacy") as client:
            await client.call_tool("AddAlarm", {"time": "18:30:00"})

    anyio.run(play)
    for _ in range(100):  # the server writes its record as it exits
        if RunStore(out).exists() and list(RunStore(out).records()):
            break
        anyio.run(anyio.sleep, 0.1)
    text = (out / "run.json").read_text()
    command = json.loads(text)["command"]
    assert "--token" in command and PASSWORD not in text and not leaks(text)


def test_a_key_too_short_to_identify_leaves_replies_alone() -> None:
    """A test's key "k" is not blanked from every "k" of an answer (nor is a real key's
    8-character tail missed: see the test above)."""
    import asyncio

    pytest.importorskip("aiohttp")
    from toolscore.models.client import ModelClient
    from toolscore.models.providers import get_model

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return reply_to_completion(Message(role="assistant", content="keep kites; key: " + KEY))

    with FakeOpenAIServer(answer) as srv:
        short = get_model("openai/fake", base_url=srv.base_url, api_key="k")
        reply = asyncio.run(ModelClient(short).generate([Message(role="user", content="hi")]))
        assert reply.message.content == "keep kites; key: " + KEY
        real = get_model("openai/fake", base_url=srv.base_url, api_key=KEY)
        reply = asyncio.run(ModelClient(real).generate([Message(role="user", content="hi")]))
        assert reply.message.content == "keep kites; key: ***"
