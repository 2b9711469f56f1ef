"""BFCL's multi-turn worlds served to an agent (``toolscore mcp serve bfcl --conversation
multi_turn_base_0``), labelled as the free-running protocol: the agent runs its own loop, so
what it sees and does is not what BFCL's handler would have sent, and its figures are not
comparable with the reference mode's.

The world of an entry is the one the reference mode plays on: the entry's backends as BFCL's
executor loads them (:class:`~toolscore.benchmarks.bfcl.multiturn.execute.World`), each call
run as that executor runs it and answered with its result text (BFCL's "Error during
execution: ..." texts included; the server writes a response as JSON, so a result that BFCL
writes as a JSON object reads as BFCL's text, any other text as a JSON string). The tools are
the entry's documents in the OpenAI rendering, those a ``miss_func`` entry holds out included
from the start (a served tool set does not grow mid-conversation). The user's words are the
entry's turns, BFCL's message for the turn that adds functions included; there is no system
prompt, as in BFCL. The world left at the end is compared with the ground truth's (every
public attribute of every instance, as BFCL's state check compares them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from toolscore.benchmarks.bfcl import episode, prompting
from toolscore.benchmarks.bfcl.categories import MULTI_TURN
from toolscore.benchmarks.options import OptionError
from toolscore.env.environment import PARSE_FAILED, Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ToolSpec

#: the rule of the final-state check
END_OF_CONVERSATION = "end of conversation (BFCL's state check on every involved instance)"


def _public(value: Any, depth: int = 0) -> Any:
    """A backend's state as JSON-able data: public attributes only (a node's ``parent`` left
    out, as it points back up the tree)."""
    if depth > 64:
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _public(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_public(v, depth + 1) for v in value]
    if isinstance(value, set):
        return sorted((_public(v, depth + 1) for v in value), key=repr)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: _public(v, depth + 1) for k, v in vars(value).items()
                if not k.startswith("_") and k != "parent"}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _as_served(text: str) -> Any:
    """A result text as the server answers it: the server writes a response as JSON, so a
    text that is a JSON object written as BFCL writes one is handed over as that object (the
    agent reads BFCL's very text); any other text stays a string (the agent reads it quoted)."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict) and json.dumps(value) == text:
            return value
    return text


def result_text(response: Any) -> Any:
    """A served response as BFCL's result text again."""
    return json.dumps(response) if isinstance(response, dict) else response


class BFCLEnvironment(Environment):
    """An entry's backends behind the interface the server drives: a call runs on the entry's
    :class:`World`, a reset builds the world afresh, the state hash covers every instance's
    public state."""

    def __init__(self, entry: dict[str, Any], tools: list[Tool]) -> None:
        from toolscore.benchmarks.bfcl.multiturn.execute import World

        self._entry = entry
        self.world = World(entry)
        super().__init__([Plugin("bfcl", tools)])

    def reset(self) -> None:
        from toolscore.benchmarks.bfcl.multiturn.execute import World

        super().reset()
        self.world = World(self._entry)

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallRecord:
        from toolscore.benchmarks.bfcl.multiturn.execute import call_strings

        if arguments is None:
            return CallRecord(name, None, None, PARSE_FAILED)
        try:
            calls = call_strings([{name: arguments}])
        except Exception as e:  # arguments that are not an object: nothing to run
            return CallRecord(name, arguments, None, str(e))
        return CallRecord(name, arguments, _as_served(self.world.execute(calls)[0]), None)

    def state_hash(self, databases: dict[str, str] | None = None) -> str:
        state = {name: _public(instance) for name, instance in self.world.instances.items()}
        blob = json.dumps(state, sort_keys=True, default=repr, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


def _unused(env: Any, **arguments: Any) -> Any:  # calls go through BFCLEnvironment.call
    raise NotImplementedError


class BFCLServing:
    """The served worlds of a BFCL benchmark's multi-turn entries."""

    def __init__(self, benchmark: Any) -> None:
        self.benchmark = benchmark

    @property
    def plugins(self) -> Sequence[Plugin]:
        return []  # no world without an entry

    @property
    def databases(self) -> dict[str, Any]:
        return {}

    @property
    def replayable(self) -> bool:
        return True

    def _entry(self, sample: Any) -> dict[str, Any]:
        if sample.data["category"] not in MULTI_TURN:
            raise OptionError(f"bfcl: {sample.id} is a single-turn entry; only multi-turn "
                              "entries have a world to serve")
        return dict(sample.data["entry"])

    def _held(self, sample: Any) -> dict[int, list[dict[str, Any]]]:
        return dict(self.benchmark.documents(self._entry(sample))[1])

    def offered_tools(self, sample: Any) -> list[Tool]:
        documents, held = self.benchmark.documents(self._entry(sample))
        every = documents + [d for turn in sorted(held) for d in held[turn]]
        return [Tool(s.name, s.description, s.parameters, _unused)
                for s in prompting.multi_turn_tools(every)]

    def environment(self, sample: Any) -> Environment:
        return BFCLEnvironment(self._entry(sample), self.offered_tools(sample))

    def shown_spec(self, tool: Tool) -> ToolSpec:
        return ToolSpec(tool.name, tool.description, tool.parameters)

    def system_prompt(self, sample: Any) -> str:
        return ""

    def assistant_turns(self, sample: Any) -> list[int]:
        return list(range(len(self._entry(sample)["question"])))

    def user_request(self, sample: Any, turn: int) -> list[str]:
        if turn in self._held(sample):
            return [episode.added_functions_prompt()]
        return [str(m.get("content") or "") for m in self._entry(sample)["question"][turn]]

    def ground_truth(self, sample: Any, turn: int) -> list[dict[str, Any]]:
        return [{"call": call} for call in sample.data["answer"]["ground_truth"][turn]]

    def stored_call(self, record: CallRecord, raw_arguments: str) -> dict[str, Any]:
        return {"name": record.name, "arguments": raw_arguments,
                "result": result_text(record.response), "exception": record.exception}

    def check_final_state(self, sample: Any, env: Environment,
                          truth: Callable[[], Environment], output: dict[str, Any]) -> None:
        """The world the agent left against the ground truth's after every turn's calls."""
        from toolscore.benchmarks.bfcl.multiturn.checker import state_mismatch

        expected = truth()
        assert isinstance(expected, BFCLEnvironment) and isinstance(env, BFCLEnvironment)
        for calls in sample.data["answer"]["ground_truth"]:
            expected.world.execute(list(calls))
        differs = state_mismatch(env.world, expected.world)
        output["final_state"] = {"rule": END_OF_CONVERSATION, "match": differs is None,
                                 "differs": differs, "expected_hash": expected.state_hash()}


def as_played(output: dict[str, Any]) -> dict[str, Any]:
    """A free-running output with what the reference mode keeps: BFCL's raw result (a turn's
    calls as one step, a turn without calls as no step) and each call's result text; BFCL's
    checker judges it as it judges a model's result."""
    turns = output.get("turns") or []
    result = [[[{p["name"]: p["arguments"]} for p in t["predictions"]]] if t["predictions"]
              else [] for t in turns]
    executions = [[[result_text(p["result"]) for p in t["predictions"]]] if t["predictions"]
                  else [] for t in turns]
    return {**output, "result": result, "executions": executions}
