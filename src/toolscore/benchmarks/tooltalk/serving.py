"""ToolTalk's tool world as a server offers it (:class:`~toolscore.benchmarks.serve.interface
.Serving`): the world of a conversation is the very one the reference protocol builds (its
databases, clock, login session and offered tool set), so an agent's and a model's scores can
be put side by side. The agent is given toolscore's own system prompt, the user's words of each
turn are sent in order, calls are stored in ToolTalk's per-turn shape and the world left at the
end is checked against the ground truth's (:mod:`.final_state`, rule "end of conversation")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolscore.benchmarks.tooltalk import final_state, protocol
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ToolSpec


class ToolTalkServing:
    """The served world of a ToolTalk benchmark (and of every benchmark built on it)."""

    def __init__(self, benchmark: Any) -> None:
        self.benchmark = benchmark

    @property
    def plugins(self) -> Sequence[Plugin]:
        return list(self.benchmark.plugins)

    @property
    def databases(self) -> dict[str, Any]:
        return dict(self.benchmark.databases)

    @property
    def replayable(self) -> bool:
        return getattr(self.benchmark, "remote", None) is None

    def environment(self, sample: Any) -> Environment:
        return self.benchmark.environment(sample.data)

    def offered_tools(self, sample: Any) -> list[Tool]:
        return list(self.benchmark.offered_tools(sample.data))

    def shown_spec(self, tool: Tool) -> ToolSpec:
        return self.benchmark.shown_spec(tool)

    def system_prompt(self, sample: Any) -> str:
        return protocol.system_prompt(sample.data.metadata)

    def assistant_turns(self, sample: Any) -> list[int]:
        return protocol.assistant_turns(sample.data.turns)

    def user_request(self, sample: Any, turn: int) -> list[str]:
        return protocol.user_request(sample.data.turns, turn)

    def ground_truth(self, sample: Any, turn: int) -> list[dict[str, Any]]:
        return [g.to_dict() for g in sample.data.turns[turn].apis]

    def stored_call(self, record: CallRecord, raw_arguments: str) -> dict[str, Any]:
        return protocol.stored_call(record, raw_arguments)

    def check_final_state(self, sample: Any, env: Environment,
                          truth: Callable[[], Environment], output: dict[str, Any]) -> None:
        """The world at the end against reset + every ground-truth call; per turn, the hash
        the ground truth reaches by then, as a diagnostic."""
        expected = truth()
        turns = sample.data.turns
        for stored in output["turns"]:
            final_state.replay(expected, turns[stored["turn"]].apis)
            stored["expected_state_hash"] = expected.state_hash()
        check = final_state.compare(env, expected)
        output["final_state"] = {"rule": final_state.END_OF_CONVERSATION, **check}
