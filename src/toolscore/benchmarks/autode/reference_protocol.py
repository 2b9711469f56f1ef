"""How one AutoDE sample runs in the default mode: the reference runner's own loop.

What the runner does, and so what this does (``--strict`` runs :mod:`.protocol` instead):

- the assistant is sent the release's system prompt, the dialogue and the gold API's document
  only (``--tools all`` offers all of them, a labelled variation), with ``tool_choice`` "auto"
  and no sampling field;
- dynamic and human: at most ``max_turns`` assistant turns, each answered by the user side,
  the last one too (a dialogue that reaches the round limit holds 1 + 2 x 8 messages);
- an assistant text holding ``[DONE]`` ends the dialogue: the text is recorded without the
  marker and stripped, the state is "failure" and the reason empty, as the runner records it;
- static: the recorded history, the gold API forced by name; a text reply is recorded and the
  trial ends with "Round limit reached" (the runner's loop never ran, so it says so), or as a
  give-up when it holds ``[DONE]``.

The output keeps the released result files' fields (``content``, ``slots``, ``state``,
``reason``), so a run is scored and compared exactly like the published runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolscore.benchmarks.autode.data import UserScript as AutoDEScript
from toolscore.benchmarks.autode.protocol import (
    CONTEXT_EXCEEDED,
    MAX_TURNS,
    ROUND_LIMIT,
    TOO_LONG_ADVICE,
    _output,
    ask_assistant,
    call_outcome,
    no_call,
)
from toolscore.benchmarks.autode.reference_user import RunnerScript
from toolscore.benchmarks.autode.release import DONE, Release
from toolscore.models.base import ContextLengthExceeded
from toolscore.models.client import benchmark_prompt
from toolscore.types import GenerateConfig, Message, ToolSpec, Usage
from toolscore.users import UserSimulator


def runner_script(script: AutoDEScript) -> RunnerScript:
    """The user side's view of a script: background, API and slots, as the runner shows them."""
    return RunnerScript(
        profile={"Character": script.character, "Background": script.background,
                 "Purpose": script.purpose},
        facts=dict(script.slots), goal=script.api, first_message=script.initial_query,
        background_text=script.background_text)


def gave_up(text: str) -> bool:
    return DONE in text


def given_up() -> dict[str, Any]:
    """A give-up as the runner records it: a failure with an empty reason."""
    return {**no_call(""), "gave_up": True}


async def run_static(script: AutoDEScript, model: Any, tools: list[ToolSpec],
                     config: GenerateConfig, release: Release) -> dict[str, Any]:
    """The recorded history, the gold API forced by name."""
    dialogue = [t.to_message() for t in script.content]
    messages = [Message(role="system", content=release.assistant_prompt), *dialogue]
    try:  # the whole request is the recorded history: an overflow is never the model's
        with benchmark_prompt(advice=TOO_LONG_ADVICE):
            reply = await model.generate(messages, tools, replace(config, tool_choice=script.api))
    except ContextLengthExceeded:
        return _output("static", script, dialogue, no_call(CONTEXT_EXCEEDED), 1)
    if reply.tool_calls:
        return _output("static", script, dialogue, call_outcome(reply.tool_calls[0]), 1)
    text = reply.text or ""
    if gave_up(text):
        dialogue.append(Message(role="assistant", content=text.replace(DONE, "").strip()))
        return _output("static", script, dialogue, given_up(), 1)
    dialogue.append(Message(role="assistant", content=text))
    return _output("static", script, dialogue, no_call(ROUND_LIMIT), 1)


async def run_dynamic(script: AutoDEScript, model: Any, tools: list[ToolSpec],
                      config: GenerateConfig, user: UserSimulator, release: Release, *,
                      mode: str = "dynamic", max_turns: int = MAX_TURNS) -> dict[str, Any]:
    """The runner's loop: an assistant turn, then a user turn, ``max_turns`` times."""
    sim_script = runner_script(script)
    dialogue = [Message(role="user", content=script.initial_query)]
    system = Message(role="system", content=release.assistant_prompt)
    usage = Usage()
    turns = 0
    ending: dict[str, Any] | None = None
    config = replace(config, tool_choice="auto")
    for _ in range(max_turns):
        turns += 1
        reply, ending = await ask_assistant(model, [system, *dialogue], tools, config,
                                            turns == 1)
        if ending is not None:
            break
        text = reply.text or ""
        if gave_up(text):
            dialogue.append(Message(role="assistant", content=text.replace(DONE, "").strip()))
            ending = given_up()
            break
        dialogue.append(Message(role="assistant", content=text))
        try:
            turn = await user.reply(sim_script, dialogue)
        except ContextLengthExceeded:
            ending = no_call(CONTEXT_EXCEEDED)
            break
        usage.add(turn.usage)
        if turn.done:
            ending = no_call(turn.reason)
            break
        dialogue.append(Message(role="user", content=turn.text))
    if ending is None:
        ending = no_call(ROUND_LIMIT)
    return _output(mode, script, dialogue, ending, turns, usage, user.identity())
