"""How one AutoDE sample is run in ``--strict`` mode (toolscore's own protocol and wording; the
default mode runs the reference runner's loop, :mod:`.reference_protocol`): the dialogue loop
and the way it ends.

An AutoDE API is a recording tool: it has no effect and returns nothing, so the assistant's first
call ends the dialogue and is what gets scored. Three protocols share one ending logic:

- dynamic: the user side starts with the script's initial query; the assistant and a user
  simulator alternate for at most ``max_turns`` assistant turns. The dialogue ends at the first
  API call, an explicit give-up, an unparseable call (reason "Arguments parse failed: ..."), the
  user ending it, or the round limit;
- static: the whole recorded history is given and the assistant must call now
  (``tool_choice="required"``);
- human: the dynamic loop with a person as the user simulator.

The output keeps the released result files' fields (``content``, ``slots``, ``state``,
``reason``), so a run can be scored and compared exactly like the published runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from toolscore.benchmarks.autode.data import UserScript as AutoDEScript
from toolscore.benchmarks.autode.prompts import assistant_prompt, gave_up
from toolscore.benchmarks.autode.scoring import filter_arguments
from toolscore.models.base import ContextLengthExceeded
from toolscore.models.client import benchmark_prompt
from toolscore.types import ArgumentsError, GenerateConfig, Message, ToolCall, ToolSpec, Usage
from toolscore.users import UserScript, UserSimulator

MAX_TURNS = 8
ROUND_LIMIT = "Round limit reached"
CONTEXT_EXCEEDED = "Context length exceeded"
GAVE_UP = "Assistant gave up"
NO_CALL = "No API call"
PARSE_FAILED = "Arguments parse failed: "
# What to change when the prompt alone (instructions, history, API documents) does not fit.
TOO_LONG_ADVICE = ("offer only the gold API (--tools gold, the default) or use a model with a "
                   "longer context")


def user_script(script: AutoDEScript) -> UserScript:
    """The simulator's view of an AutoDE user script: background + API + slots."""
    return UserScript(
        profile={"Character": script.character, "Background": script.background,
                 "Purpose": script.purpose},
        facts=dict(script.slots), goal=script.api, first_message=script.initial_query)


def as_turns(dialogue: Sequence[Message]) -> list[dict[str, str]]:
    """Messages in the released files' shape: ``{"role": "User"|"Assistant", "message"}``."""
    return [{"role": "User" if m.role == "user" else "Assistant", "message": m.content or ""}
            for m in dialogue]


def call_outcome(call: ToolCall) -> dict[str, Any]:
    """The scored part of an ending with a call: filtered slots, or a parse failure."""
    try:
        arguments = call.parse_arguments()
    except ArgumentsError:
        return {"state": "failure", "reason": PARSE_FAILED + call.arguments, "slots": {},
                "called_api": call.name, "arguments": call.arguments}
    return {"state": "success", "reason": "", "slots": filter_arguments(arguments),
            "called_api": call.name, "arguments": call.arguments}


async def ask_assistant(model: Any, messages: list[Message], tools: list[ToolSpec],
                        config: GenerateConfig, first: bool) -> tuple[Any, dict[str, Any] | None]:
    """One assistant turn: its reply, and the dialogue's ending when the turn ends it (a call:
    the outcome scored, with any text beside it; a prompt over the context: no call)."""
    try:  # the first request holds nothing the model wrote (see benchmark_prompt)
        with benchmark_prompt(first, TOO_LONG_ADVICE):
            reply = await model.generate(messages, tools, config)
    except ContextLengthExceeded:
        return None, no_call(CONTEXT_EXCEEDED)
    if not reply.tool_calls:
        return reply, None
    ending = call_outcome(reply.tool_calls[0])
    if reply.text and reply.text.strip():
        ending["text"] = reply.text
    return reply, ending


def no_call(reason: str) -> dict[str, Any]:
    return {"state": "failure", "reason": reason, "slots": {}, "called_api": None,
            "arguments": None}


def _output(mode: str, script: AutoDEScript, dialogue: Sequence[Message], ending: dict[str, Any],
            assistant_turns: int, user_usage: Usage | None = None,
            user: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "mode": mode, "uuid": script.uuid,
        "background": (f"Character: {script.character}\nBackground: {script.background}\n"
                       f"Purpose: {script.purpose}"),
        "api": script.api, "content": as_turns(dialogue), **ending,
        "assistant_turns": assistant_turns,
    }
    if user is not None:
        out["user"] = user
        out["user_usage"] = (user_usage or Usage()).to_dict()
    return out


async def run_static(script: AutoDEScript, model: Any, tools: list[ToolSpec],
                     config: GenerateConfig) -> dict[str, Any]:
    """Give the whole recorded history and require a call now."""
    dialogue = [t.to_message() for t in script.content]
    messages = [Message(role="system", content=assistant_prompt(static=True)), *dialogue]
    try:  # the whole request is the recorded history: an overflow is never the model's
        with benchmark_prompt(advice=TOO_LONG_ADVICE):
            reply = await model.generate(messages, tools,
                                         replace(config, tool_choice="required"))
    except ContextLengthExceeded:
        return _output("static", script, dialogue, no_call(CONTEXT_EXCEEDED), 1)
    if reply.tool_calls:
        ending = call_outcome(reply.tool_calls[0])
    else:
        ending = no_call(NO_CALL)
        ending["text"] = reply.text
    return _output("static", script, dialogue, ending, 1)


async def run_dynamic(script: AutoDEScript, model: Any, tools: list[ToolSpec],
                      config: GenerateConfig, user: UserSimulator, *, mode: str = "dynamic",
                      max_turns: int = MAX_TURNS) -> dict[str, Any]:
    """Alternate assistant and ``user`` from the initial query until an ending (see module)."""
    sim_script = user_script(script)
    dialogue = [Message(role="user", content=script.initial_query)]
    system = Message(role="system", content=assistant_prompt())
    usage = Usage()
    turns = 0
    ending: dict[str, Any] | None = None
    while ending is None:
        if turns >= max_turns:
            ending = no_call(ROUND_LIMIT)
            break
        turns += 1
        reply, ending = await ask_assistant(model, [system, *dialogue], tools,
                                            replace(config, tool_choice="auto"), turns == 1)
        if ending is not None:
            break
        dialogue.append(Message(role="assistant", content=reply.text or ""))
        if gave_up(reply.text):
            ending = no_call(GAVE_UP)
            break
        if turns >= max_turns:
            continue  # no user turn after the last allowed assistant turn
        try:
            turn = await user.reply(sim_script, dialogue)
        except ContextLengthExceeded:
            ending = no_call(CONTEXT_EXCEEDED)
            break
        usage.add(turn.usage)
        if turn.done:
            ending = no_call(turn.reason or "User ended the dialogue")
            break
        dialogue.append(Message(role="user", content=turn.text))
    return _output(mode, script, dialogue, ending, turns, usage, user.identity())
