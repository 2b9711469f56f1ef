"""A benchmark that is not ToolTalk's is served through its own ``Serving``, with no code of
the serve package about it: a lamp world whose samples are a list of steps, its episode's
turns, user requests, stored calls, ground truth and final-state check all the benchmark's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolscore.benchmarks.base import Benchmark, OptionError, Sample
from toolscore.benchmarks.serve.episodes import Episodes
from toolscore.benchmarks.serve.interface import Serving
from toolscore.benchmarks.serve.world import ServedWorld
from toolscore.env import Environment, Plugin, tool
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ToolSpec


@tool("SwitchOn", action=True)
def switch_on(env: Environment, name: str) -> dict[str, Any]:
    """Switch a lamp on.

    Args:
        name: The lamp.
    """
    env.db("Lamps")[name] = True
    return {"name": name, "on": True}


LAMPS = Plugin("lamps", [switch_on], databases=("Lamps",))
# a sample: (role, text or expected calls) steps, the agent answering the "agent" steps
STEPS = [("user", "Good evening."), ("user", "Switch on the desk lamp."),
         ("agent", [{"tool": "SwitchOn", "arguments": {"name": "desk"}}]),
         ("user", "Thanks"), ("agent", [])]


class LampServing:
    def __init__(self, bench: LampBenchmark) -> None:
        self.bench = bench

    plugins = [LAMPS]
    databases = {"Lamps": {"desk": False}}
    replayable = True

    def environment(self, sample: Any) -> Environment:
        return Environment([LAMPS], databases={"Lamps": {"desk": False}})

    def offered_tools(self, sample: Any) -> list[Tool]:
        return list(LAMPS.tools)

    def shown_spec(self, tool: Tool) -> ToolSpec:
        return tool.spec

    def system_prompt(self, sample: Any) -> str:
        return f"You switch lamps ({sample.id})."

    def assistant_turns(self, sample: Any) -> list[int]:
        return [i for i, (role, _) in enumerate(sample.data) if role == "agent"]

    def user_request(self, sample: Any, turn: int) -> list[str]:
        said = []
        for role, text in reversed(sample.data[:turn]):
            if role != "user":
                break
            said.insert(0, text)
        return said

    def ground_truth(self, sample: Any, turn: int) -> list[dict[str, Any]]:
        return list(sample.data[turn][1])

    def stored_call(self, record: CallRecord, raw_arguments: str) -> dict[str, Any]:
        return {"tool": record.name, "arguments": record.arguments, "error": record.exception}

    def check_final_state(self, sample: Any, env: Environment,
                          truth: Callable[[], Environment], output: dict[str, Any]) -> None:
        expected = truth()
        for turn in self.assistant_turns(sample):
            for call in sample.data[turn][1]:
                expected.call(call["tool"], call["arguments"])
        output["final_state"] = {"same": env.state_hash() == expected.state_hash()}


class LampBenchmark(Benchmark):
    name = "lamps"
    description = "lamps"

    def samples(self) -> list[Sample]:
        return [Sample("evening", STEPS)]

    def serving(self) -> LampServing:
        return LampServing(self)

    def score(self, output: Any, sample: Sample) -> dict[str, Any]:
        return {"success": bool(output["final_state"]["same"])}

    def aggregate(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        return {}


def test_a_second_benchmark_is_served_through_its_own_serving() -> None:
    assert isinstance(LampServing(LampBenchmark()), Serving)
    world = ServedWorld("lamps", LampBenchmark())
    episodes = Episodes(world)
    episode = episodes.create("evening")
    assert episode.turn == 2 and episode.world.system_prompt == "You switch lamps (evening)."
    assert world.serving is not None
    assert world.serving.user_request(episode.world.sample, 2) == [
        "Good evening.", "Switch on the desk lamp."]
    episode.call("SwitchOn", {"name": "desk"})
    assert episode.advance() == 4
    output = episode.output()
    assert [t["turn"] for t in output["turns"]] == [2, 4]
    assert output["turns"][0]["ground_truth"] == [{"tool": "SwitchOn",
                                                   "arguments": {"name": "desk"}}]
    assert output["turns"][0]["predictions"] == [{"tool": "SwitchOn",
                                                  "arguments": {"name": "desk"}, "error": None}]
    assert output["turns"][1]["predictions"] == []
    assert output["final_state"] == {"same": True}
    assert episodes.record(episode).scores == {"success": True}


def test_a_benchmark_without_a_served_world_is_refused_in_one_line() -> None:
    class Plain(LampBenchmark):
        def serving(self) -> Any:
            return None

    with pytest.raises(OptionError, match="no tool world to serve"):
        ServedWorld("plain", Plain())
