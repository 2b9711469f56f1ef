"""What a model is sent while a multi-turn BFCL entry is played, against what BFCL's own OpenAI
function-calling handler sent, request by request, for the same replies
(``tests/fixtures/bfcl_requests/multi_turn.json.gz``, recorded by
``tests/reference/bfcl/record_multi_turn_requests.py``): the messages of every step (turns,
the assistant messages as they came, one tool message per call with BFCL's backends' result
texts, the message of a turn that adds functions), the tools (held-out functions added at
their turn), the sampling fields, the step limit and the raw result kept.

Two fields differ, by design: the reference's ``store: false`` (OpenAI's default, left out as
for single-turn entries) and each tool's ``response`` schema (no field of the ``tools`` API);
and an assistant message with calls only has content "" rather than null (toolscore's request
shape for every provider, see ``to_openai_messages``)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from support.data import dataset

from toolscore.benchmarks.bfcl import episode, prompting
from toolscore.benchmarks.bfcl.benchmark import BFCLBenchmark, BFCLOptions
from toolscore.benchmarks.bfcl.categories import MULTI_TURN, category_of
from toolscore.benchmarks.bfcl.oracle import multi_turn_steps
from toolscore.models.openai.provider import build_request
from toolscore.models.scripted.oracle import OracleModel
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec

FIXTURE = (Path(__file__).resolve().parents[2] / "fixtures" / "bfcl_requests"
           / "multi_turn.json.gz")
RECORDED: dict[str, Any] = json.loads(gzip.decompress(FIXTURE.read_bytes()))


class Recording(OracleModel):
    """The oracle, keeping each request it is asked."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        self.requests.append(build_request("MODEL", messages, tools, config))
        return await super().generate(messages, tools, config)


def steps_of(result: list[list[Any]]) -> list[list[dict[str, Any]]]:
    """The replies a recorded result was made of, as oracle steps."""
    return [[{"tool_calls": [{"name": n, "arguments": a} for c in step for n, a in c.items()]}
             if isinstance(step, list) else {"content": step} for step in turn]
            for turn in result]


def as_toolscore_sends(request: dict[str, Any]) -> dict[str, Any]:
    request = json.loads(json.dumps(request))
    assert request.pop("store") is False
    for tool in request.get("tools", []):
        tool["function"].pop("response", None)
    for m in request["messages"]:
        if m["role"] == "assistant" and m.get("content") is None:
            m["content"] = ""
    return request


@pytest.fixture(scope="module")
def bench() -> BFCLBenchmark:
    return BFCLBenchmark(dataset("bfcl"), BFCLOptions(category=["multi_turn"]))


@pytest.fixture(scope="module")
def samples(bench: BFCLBenchmark) -> dict[str, Any]:
    return {s.id: s for s in bench.samples()}


def test_fixture_covers_every_multi_turn_category() -> None:
    assert {category_of(i) for i in RECORDED} == set(MULTI_TURN)
    assert {r["variant"] for r in RECORDED.values()} == {"oracle", "looping", "malformed"}
    assert FIXTURE.stat().st_size < 300_000


@pytest.mark.parametrize("entry_id", sorted(RECORDED))
def test_requests_are_the_reference_handlers(entry_id: str, bench: BFCLBenchmark,
                                             samples: dict[str, Any]) -> None:
    recorded = RECORDED[entry_id]
    entry = samples[entry_id].data["entry"]
    documents, held = bench.documents(entry)
    model = Recording()
    played = asyncio.run(episode.play(entry, documents, held, model,
                                      prompting.generate_config(), steps_of(recorded["result"])))
    assert played.result == recorded["result"]
    assert played.forced_quit == (recorded["variant"] == "looping")
    expected = [as_toolscore_sends(r) for r in recorded["requests"]]
    assert len(model.requests) == len(expected)
    for k, (ours, theirs) in enumerate(zip(model.requests, expected, strict=True)):
        assert ours == theirs, f"request {k}"


@pytest.mark.parametrize("entry_id", sorted(i for i, r in RECORDED.items()
                                            if r["variant"] == "oracle"))
def test_the_oracle_replies_as_the_recording_did(entry_id: str,
                                                 samples: dict[str, Any]) -> None:
    sample = samples[entry_id]
    assert multi_turn_steps(sample.data["entry"], sample.data["answer"]) == steps_of(
        RECORDED[entry_id]["result"])
