"""A request that does not fit the model's context, as each OpenAI-compatible server says it.

Two cases that look the same on the wire and mean opposite things: the benchmark's own prompt
does not fit before the model has said anything (an infrastructure error: the sample is left
out of the scores, the run is incomplete, and the run says once why and what to do), or the
model's own dialogue grew past its context (its failure, scored as before)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import data
from support.testing.dialects import DIALECTS, overflow, request_tokens
from support.testing.openai_server import FakeOpenAIServer

import toolscore
from toolscore.models import ModelClient, get_model
from toolscore.models.base import ContextLengthExceeded, InfraError
from toolscore.models.client import PromptTooLong, benchmark_prompt, context_numbers
from toolscore.models.openai.http import status_error
from toolscore.types import GenerateConfig, Message

DEMO = {"embedder": "hashing"}
HI = [Message(role="system", content="You help."), Message(role="user", content="hello there")]


def overflow_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if "exceeds the model's context" in r.getMessage()]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_servers_overflow_error_is_a_context_overflow(dialect: str) -> None:
    status, body = overflow(dialect, 3154, 2048, 512)
    err = status_error(status, json.dumps(body).encode(), None)
    assert isinstance(err, ContextLengthExceeded), err
    window, requested = context_numbers(str(err))
    if dialect == "ollama":  # its message gives no numbers
        assert (window, requested) == (None, None)
    else:
        assert window == 2048
        assert requested == (3154 + 512 if dialect == "llama-cpp-python" else 3154)


def test_context_numbers_of_other_wordings() -> None:
    assert context_numbers("Input length (3000) exceeds model's maximum context length "
                           "(2048).") == (2048, 3000)
    assert context_numbers("prompt of 9000 tokens fills the 8192-token context window") == (
        8192, 9000)
    assert context_numbers("This model's maximum context length is 4096 tokens. However, "
                           "your prompt contains at least 4097 input tokens") == (4096, 4097)
    assert context_numbers("HTTP 400: bad request") == (None, None)
    # another 400 stays a plain, non-retryable request error
    other = status_error(400, b'{"error": {"message": "bad tool schema"}}', None)
    assert isinstance(other, InfraError) and not other.retryable


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_benchmarks_prompt_too_long_is_an_infrastructure_error(dialect: str) -> None:
    with FakeOpenAIServer(dialect=dialect, context_window=3) as srv:
        client = ModelClient(get_model("openai/fake", base_url=srv.base_url))

        async def go() -> None:
            with benchmark_prompt(advice="do less"):
                await client.generate(HI, [], GenerateConfig())

        with pytest.raises(PromptTooLong) as caught:
            asyncio.run(go())
        # not retried: one request, and an error the runner records and leaves out of scores
        assert srv.requests == 1 and isinstance(caught.value, InfraError)
        assert not caught.value.retryable
        assert str(caught.value).startswith("prompt exceeds the model's context before the "
                                            "model said anything")
        # outside benchmark_prompt the same answer keeps its meaning: the model's overflow
        with pytest.raises(ContextLengthExceeded):
            asyncio.run(client.generate(HI, [], GenerateConfig()))


def test_a_demo_run_whose_prompt_never_fits_is_all_errors_said_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with FakeOpenAIServer(dialect="llama-cpp-python", context_window=40) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 out=tmp_path / "run", **DEMO)
    errored, total = run.error_count()
    assert errored == total == 6 == srv.overflows  # one request per sample, none retried
    for record in run.records:
        assert record["status"] == "error" and "scores" not in record
        assert record["error"].startswith("infrastructure: prompt exceeds the model's context")
    # nothing is scored: no group has a conversation, every sample is counted as an error
    assert run.metrics is not None and run.metrics["errors"] == 6
    assert not [k for k, v in run.metrics.items() if isinstance(v, dict) and v.get(
        "conversations")]
    lines = overflow_lines(caplog)
    assert len(lines) == 1, lines
    line = lines[0]
    assert f"openai/fake at {srv.base_url}" in line and "(40 tokens, " in line
    assert "tokens requested" in line and "--tools exact" in line and "\n" not in line


def test_the_models_own_growing_dialogue_is_still_its_failure(tmp_path: Path) -> None:
    """The first request of a turn fits; the follow-up with the model's call and its result
    does not: the turn ends there ("context_length") and the sample is scored."""
    with FakeOpenAIServer() as probe:
        toolscore.evaluate("demo", "openai/fake", base_url=probe.base_url, cache=None,
                           out=tmp_path / "probe", limit=1, **DEMO)
    first, follow_up = (request_tokens(r) for r in probe.received[:2])
    assert follow_up > first
    with FakeOpenAIServer(dialect="llama.cpp", context_window=first + 1) as srv:
        run = toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache=None,
                                 out=tmp_path / "run", limit=1, **DEMO)
    assert srv.overflows == 1 and run.error_count() == (0, 1)
    record = run.records[0]
    assert record["status"] == "ok" and "scores" in record
    assert record["output"]["turns"][0]["stop"] == "context_length"


def test_the_command_exits_3_and_says_it_once(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), TOOLSCORE_DATA=str(data.ROOT))
    with FakeOpenAIServer(dialect="vllm", context_window=40) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "toolscore.cli", "run", "demo", "--model", "openai/fake",
             "--base-url", srv.base_url, "--no-cache", "--embedder", "hashing", "--out",
             str(tmp_path / "run")], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120)
    assert done.returncode == 3, done.stderr[-3000:]
    said = [ln for ln in done.stderr.splitlines() if "exceeds the model's context" in ln]
    assert len(said) == 1, done.stderr
    assert "(40 tokens, " in said[0] and "use a model with a longer context" in said[0]
    assert "6 of 6 samples ended in an infrastructure error" in done.stderr


def test_the_message_is_said_once_per_client_whatever_the_role() -> None:
    with FakeOpenAIServer(context_window=3) as srv:
        assistant = ModelClient(get_model("openai/fake", base_url=srv.base_url))
        user = assistant.with_role("user")
        records: list[Any] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("toolscore.models")
        logger.addHandler(handler)
        try:
            for client in (assistant, user, assistant):
                with pytest.raises(PromptTooLong), benchmark_prompt():
                    asyncio.run(client.generate(HI, [], GenerateConfig()))
        finally:
            logger.removeHandler(handler)
    said = [r for r in records if "exceeds the model's context" in r.getMessage()]
    assert len(said) == 1
