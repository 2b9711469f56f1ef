"""Scripted replies for the reference agent: the fake OpenAI server answering each request with
the next ground-truth call of the conversation and turn it belongs to (then the turn's text),
so that an agent that runs its own loop replays the ground truth, or, where a test says so,
makes a chosen wrong call instead."""

from __future__ import annotations

import json
from typing import Any

from support.testing.openai_server import reply_to_completion

from toolscore.benchmarks.tooltalk.protocol import assistant_turns, system_prompt, user_request
from toolscore.types import Message, ToolCall


class GroundTruthResponder:
    """Finds the conversation from the system prompt and the user messages so far (the agent
    keeps its own history, so these are exactly what toolscore sent), and the step within the
    turn from the tool results since the last user message."""

    def __init__(self, samples: list[Any], tools: dict[str, Any]) -> None:
        self.tools = tools
        self.index: dict[tuple[str, ...], tuple[Any, int]] = {}
        # (conversation id, turn, call number) -> arguments that replace the ground truth's
        self.wrong: dict[tuple[str, int, int], dict[str, Any]] = {}
        for sample in samples:
            conv = sample.data
            said: list[str] = [system_prompt(conv.metadata)]
            for i in assistant_turns(conv.turns):
                said.append("\n".join(user_request(conv.turns, i)))
                key = tuple(said)
                assert key not in self.index, f"ambiguous script: {sample.id}"
                self.index[key] = (sample, i)

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        key = tuple(str(m.get("content")) for m in messages if m["role"] in ("system", "user"))
        sample, turn = self.index[key]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user + 1:] if m["role"] == "tool")
        apis = sample.data.turns[turn].apis
        if step < len(apis):
            call = apis[step]
            hidden = self.tools[call.name].hidden
            arguments = {k: v for k, v in (call.arguments or {}).items() if k not in hidden}
            arguments = self.wrong.get((sample.id, turn, step), arguments)
            msg = Message(role="assistant", tool_calls=[ToolCall(
                f"call_{turn}_{step}", call.name, json.dumps(arguments))])
        else:
            msg = Message(role="assistant", content=sample.data.turns[turn].text)
        return reply_to_completion(msg, model=request.get("model", "fake-model"))
