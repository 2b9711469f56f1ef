"""Whatever shape an endpoint's reply takes, a run finishes and the model's output is scored,
never turned into a harness error (which would leave it out of the denominator and inflate
the scores). Each case is a raw chat.completion the fake server sends for every request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.testing.openai_server import FakeOpenAIServer

import toolscore


def completion(message: dict[str, Any], usage: Any = None) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": "stop"}],
            "usage": usage if usage is not None else {"prompt_tokens": 3, "completion_tokens": 2}}


def call(name: Any, arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": name, "arguments": arguments}}],
            "content": None}


DEEP = '{"title": ' + "[" * 200_000 + "]" * 200_000 + "}"
SHAPES: dict[str, dict[str, Any]] = {
    "content as a list of parts": completion({"content": [{"type": "text", "text": "All "},
                                                          {"type": "text", "text": "done."}]}),
    "content as a number": completion({"content": 5}),
    "content as an object": completion({"content": {"answer": "done"}}),
    "tool_calls as a number": completion({"content": "ok", "tool_calls": 5}),
    "function name as an object": completion(call({"n": "AddItem"}, "{}")),
    "function name as a list": completion(call(["AddItem"], "{}")),
    "arguments nested 200,000 deep": completion(call("AddItem", DEEP)),
    "a 5,000-digit number": completion(call("AddItem", '{"quantity": ' + "9" * 5000 + "}")),
    "a lone surrogate in the arguments": completion(call("AddItem", '{"name": "\\ud83d"}')),
    "a lone surrogate in the text": completion({"content": "caf\ud83d"}),
    "a malformed usage field": completion({"content": "Done."}, usage={"prompt_tokens": "many"}),
}
EXPECTED_TEXT = {"content as a list of parts": "All done.", "content as a number": "5",
                 "content as an object": '{"answer": "done"}',
                 "a lone surrogate in the text": "caf\ufffd", "a malformed usage field": "Done."}


def run(tmp_path: Path, reply: dict[str, Any], limit: int = 2) -> toolscore.Run:
    with FakeOpenAIServer(lambda request: reply) as srv:
        return toolscore.evaluate("demo", "openai/fake", base_url=srv.base_url, cache="default",
                                  limit=limit, embedder="hashing", out=tmp_path / "run")


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_is_scored_never_an_error(tmp_path: Path, shape: str) -> None:
    result = run(tmp_path, SHAPES[shape])
    assert [r["status"] for r in result.records] == ["ok", "ok"], result.records[0].get("error")
    assert result.metrics["errors"] == 0
    assert all(isinstance(r["scores"]["success"], bool) for r in result.records)
    turn = result.records[0]["output"]["turns"][0]
    if shape in EXPECTED_TEXT:
        assert turn["text"] == EXPECTED_TEXT[shape]
    elif shape == "a lone surrogate in the arguments":  # executed with U+FFFD, raw text kept
        (prediction, *_) = turn["predictions"]
        assert prediction["request"]["parameters"] == {"name": "\ufffd"}
        assert prediction["raw_arguments"] == '{"name": "\\ud83d"}'
    else:  # a broken call: executed or refused by the simulator, and counted as a prediction
        assert turn["predictions"] and turn["predictions"][0]["exception"]
        assert result.records[0]["scores"]["predictions"] >= 1
    # the run directory is valid UTF-8 JSON, and resuming or rescoring it works (the reply was
    # cached: a resume reads it back)
    for line in (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)
    assert toolscore.score(tmp_path / "run").metrics == result.metrics


def test_a_model_that_keeps_answering_nothing_is_scored(tmp_path: Path) -> None:
    """Empty completions are retried; one that persists is the model's answer: the sample is
    scored (a failure), not excluded from the denominator."""
    result = run(tmp_path, completion({"content": ""}), limit=1)
    (record,) = result.records
    assert record["status"] == "ok" and record["scores"]["success"] is False
    assert record["output"]["turns"][0]["text"] == ""
    assert result.metrics["errors"] == 0 and result.metrics["easy"]["success_rate"] == 0.0
