"""AutoDE when a request does not fit the model's context: the benchmark's own prompt (the
static history, or the dynamic dialogue's first request) is an infrastructure error, left out of
the scores; a dialogue that the model and the user agent grew past the context ends as the
released runs record it ("Context length exceeded"), scored as a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.autode import ASSISTANT_HEAD, asking_assistant, responder
from support.data import dataset, needs
from support.testing.dialects import request_tokens
from support.testing.openai_server import FakeOpenAIServer

from toolscore.runs.api import evaluate

pytestmark = needs("autode")


def run(tmp_path: Path, name: str, window: int | None, mode: str,
        requests: list[dict[str, Any]] | None = None, limit: int = 2) -> Any:
    with FakeOpenAIServer(responder(asking_assistant, requests), dialect="openai",
                          context_window=window) as srv:
        return evaluate("autode", "openai/fake", data=dataset("autode"), limit=limit, cache=None,
                        base_url=srv.base_url, out=tmp_path / name, mode=mode, strict=True,
                        tools="all")


def test_a_static_history_that_does_not_fit_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, "static", 10, "static")
    assert result.error_count() == (2, 2)
    assert all(r["error"].startswith("infrastructure: prompt exceeds the model's context")
               for r in result.records)
    assert result.metrics["errors"] == 2


def test_a_first_dynamic_request_that_does_not_fit_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, "dynamic", 10, "dynamic")
    assert result.error_count() == (2, 2)


def test_a_dialogue_grown_past_the_context_is_the_models_failure(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []
    run(tmp_path, "probe", None, "dynamic", requests, limit=1)
    assistant = [request_tokens(r) for r in requests
                 if r["messages"][0]["content"].startswith(ASSISTANT_HEAD)]
    user = [request_tokens(r) for r in requests
            if not r["messages"][0]["content"].startswith(ASSISTANT_HEAD)]
    window = assistant[0] + 1  # the first request fits, the user agent's too
    assert len(assistant) == 2 and max(user) < window and assistant[1] >= window
    result = run(tmp_path, "grown", window, "dynamic", limit=1)
    assert result.error_count() == (0, 1)
    out = result.records[0]["output"]
    assert out["state"] == "failure" and out["reason"] == "Context length exceeded"
    assert out["assistant_turns"] == 2
