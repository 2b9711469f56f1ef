"""A turn of ToolTalk's default mode runs as the reference runner runs it: one call per reply,
each call sent back as the runner rebuilds it (arguments parsed and serialised again with the
injected session token, ``null`` when they do not parse, no text beside it), and a safety cap
that is reported when a looping model reaches it. Strict mode executes every call of a reply
and sends the reply back as the model wrote it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.data import dataset, needs

from toolscore.benchmarks.tooltalk.benchmark import ToolTalkBenchmark
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec

pytestmark = needs("tooltalk")
TOKEN = "98a5a87a-7714-b404"  # the logged-in user of AddAlarm-easy


class Scripted:
    """A model at the edge: answers each request with the next scripted reply (the last one
    again once the script runs out) and keeps the messages it was sent."""

    def __init__(self, *replies: Message, api: str | None = None) -> None:
        self.replies = list(replies)
        self.api = api
        self.sent: list[list[dict[str, Any]]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        self.sent.append([m.to_dict() for m in messages])
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return Reply(message=reply, api=self.api)


def calls(*pairs: tuple[str, str], text: str | None = None) -> Message:
    return Message(role="assistant", content=text,
                   tool_calls=[ToolCall(f"c{i}", name, args) for i, (name, args) in
                               enumerate(pairs)])


DONE = Message(role="assistant", content="Done.")


def run_turn(model: Scripted, **options: Any) -> dict[str, Any]:
    bench = ToolTalkBenchmark(dataset("tooltalk"), embedder="hashing", tools="exact",
                              **options)
    sample = next(s for s in bench.samples() if s.id.startswith("AddAlarm-easy"))
    output = asyncio.run(bench.run_sample(sample, model, 0))
    output["scores"] = bench.score(output, sample)
    output["bench"] = bench
    return output


def test_one_call_per_reply_echoed_as_the_reference_rebuilds_it() -> None:
    model = Scripted(calls(("AddAlarm", '{"time":"18:30:00"}'), ("AddAlarm", '{"time": "1"}'),
                           text="Setting it."), DONE, api="functions")
    turn = run_turn(model)["turns"][0]
    assert len(turn["predictions"]) == 1 and turn["dropped_calls"] == 1
    assert turn["api"] == ["functions"]
    echo, result = model.sent[1][-2:]
    # the text beside the call is dropped, the arguments come back re-serialised with the
    # session token the executor added
    assert echo == {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c0", "type": "function", "function": {
            "name": "AddAlarm",
            "arguments": json.dumps({"time": "18:30:00", "session_token": TOKEN})}}]}
    assert json.loads(result["content"])["exception"] is None
    # the stored transcript keeps what the model said, as it said it
    assert turn["transcript"][0]["content"] == "Setting it."
    assert len(turn["transcript"][0]["tool_calls"]) == 2


@pytest.mark.parametrize("arguments", ["", '{"time": ', "[1]"])
def test_unparsable_arguments_are_sent_back_as_null(arguments: str) -> None:
    model = Scripted(calls(("AddAlarm", arguments)), DONE)
    turn = run_turn(model)["turns"][0]
    assert turn["predictions"][0]["exception"] == "Failed to parse API call"
    assert model.sent[1][-2]["tool_calls"][0]["function"]["arguments"] == "null"


def test_strict_mode_executes_every_call_and_echoes_the_reply_as_written() -> None:
    reply = calls(("AddAlarm", '{"time":"18:30:00"}'), ("AddAlarm", '{"time":"19:00:00"}'),
                  text="Setting them.")
    model = Scripted(reply, DONE)
    turn = run_turn(model, strict=True)["turns"][0]
    assert len(turn["predictions"]) == 2 and "dropped_calls" not in turn
    assert model.sent[1][-3] == reply.to_dict()  # then both results


def test_a_looping_model_stops_at_the_safety_cap_and_the_report_says_so() -> None:
    model = Scripted(calls(("FindAlarms", "{}")))  # never answers
    output = run_turn(model, max_calls_per_turn=5)
    turn = output["turns"][0]
    assert turn["stop"] == "max_calls" and len(turn["predictions"]) == 5
    assert output["scores"]["turns_at_call_cap"] == 1
    bench = output["bench"]
    record = {"status": "ok", "scores": output["scores"], "meta": {"split": "easy"}}
    assert bench.aggregate([record])["turns_at_call_cap"] == 1
    assert "cap 5 calls (set; the reference has none)" in bench.config()["turn_protocol"]
    default = ToolTalkBenchmark(dataset("tooltalk"), embedder="hashing")
    assert default.max_calls == 100 and "cap 100 calls (the" in default.turn_label()
    assert ToolTalkBenchmark(dataset("tooltalk"), strict=True).max_calls == 10
