"""AutoDE with a real model offline: local/smollm2 plays both the assistant and the user agent.

Slow (model load and CPU generation on one thread), so marked ``slow``. Only the API document of
the case is offered (``--tools gold``): all 66 documents do not fit SmolLM2's 8k context, which
the protocol records as "Context length exceeded" rather than failing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import data
from support.data import dataset, needs

from toolscore.benchmarks.autode import load_scripts
from toolscore.benchmarks.autode.protocol import user_script
from toolscore.models.local.model import llama_available
from toolscore.types import GenerateConfig, Message

pytestmark = [
    pytest.mark.slow,
    needs("autode"),
    pytest.mark.skipif(not llama_available(), reason="llama-cpp-python not installed"),
]


def test_smollm2_as_assistant_and_user_agent(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLSCORE_DATA": str(data.ROOT), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "toolscore.cli", "run", "autode", "--mode", "dynamic",
         "--model", "local/smollm2", "--user-model", "local/smollm2", "--tools", "gold", "--strict",
         "--limit", "1", "--out", str(tmp_path / "run"), "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - started < 180
    doc = json.loads(done.stdout)
    metrics = doc["metrics"]
    assert metrics["errors"] == 0 and metrics["n_cases"] == 1
    assert 0.0 <= metrics["exact"]["f1"] <= 100.0
    record = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    out = record["output"]
    assert out["user"]["model"] == "local/smollm2"
    assert out["content"][0]["role"] == "User" and 1 <= out["assistant_turns"] <= 8


def test_smollm2_user_agent_answers_a_question() -> None:
    from toolscore.models import ModelClient, get_model
    from toolscore.users import LLMUser

    script = user_script(load_scripts(dataset("autode"))[0])
    user = LLMUser(ModelClient(get_model("local/smollm2"), role="user"),
                   GenerateConfig(max_tokens=48))
    dialogue = [Message(role="user", content=script.first_message),
                Message(role="assistant", content="Sure. Which device is it for?")]
    turn = asyncio.run(user.reply(script, dialogue))
    assert turn.text.strip() and not turn.done and turn.usage.output_tokens > 0
