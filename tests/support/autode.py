"""A scripted AutoDE assistant and user agent behind the fake OpenAI server, shared by the AutoDE
run tests and the per-role token tests.

One responder plays both parties, told apart by their system prompts: as the assistant it asks
once for details, then calls the API with what the user said; as the user agent it answers with
the task and every fact of its script. So the whole loop runs without a model: initial query ->
question -> answer from the script -> call -> scored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from support.testing.openai_server import prompt_tokens, reply_to_completion
from toolscore.benchmarks.autode.prompts import ASSISTANT_PROMPT
from toolscore.types import Message, ToolCall
from toolscore.users.llm import USER_AGENT_PROMPT

ASSISTANT_HEAD = ASSISTANT_PROMPT.split("\n")[0]
USER_HEAD = USER_AGENT_PROMPT.split("\n")[0]
ASK = "Could you tell me the details I need?"
Handler = Callable[[dict[str, Any]], Message]


def completion(request: dict[str, Any], msg: Message) -> dict[str, Any]:
    return reply_to_completion(msg, prompt_tokens=prompt_tokens(request))


def user_agent(request: dict[str, Any]) -> Message:
    """Answers with the task and every fact of its script, as ``Task: X; k=v; ...``."""
    system = request["messages"][0]["content"]
    task = re.search(r"^Task: (.+)$", system, re.M)
    facts = re.findall(r"^- ([A-Za-z_]\w*): (.*)$", system, re.M)
    parts = [f"Task: {task.group(1) if task else ''}", *(f"{k}={v}" for k, v in facts)]
    return Message(role="assistant", content="; ".join(parts))


def asking_assistant(request: dict[str, Any]) -> Message:
    """Asks once, then calls the API the user named with the values the user gave."""
    last = request["messages"][-1]["content"] or ""
    if not last.startswith("Task: "):
        return Message(role="assistant", content=ASK)
    parts = last.split("; ")
    args: dict[str, Any] = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        args[key] = {"yes": True, "no": False}.get(value, value)
    call = ToolCall(id="call_1", name=parts[0][len("Task: "):], arguments=json.dumps(args))
    return Message(role="assistant", tool_calls=[call])


def responder(assistant: Handler, requests: list[dict[str, Any]] | None = None
              ) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The fake server's responder: the user agent's requests go to :func:`user_agent`, the
    assistant's to ``assistant``; every request is appended to ``requests`` when given."""
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        if requests is not None:
            requests.append(request)
        system = request["messages"][0]["content"]
        if system.startswith(USER_HEAD):
            return completion(request, user_agent(request))
        assert system.startswith(ASSISTANT_HEAD), system[:80]
        return completion(request, assistant(request))
    return respond
