"""A multi-turn entry played as BFCL's OpenAI function-calling handler plays it.

One conversation runs through the entry's turns. A turn adds its user messages (a turn that
adds held-out functions has none in the data: BFCL's fixed message for it is sent instead, with
the added documents among the tools from then on), then steps: the model is asked, its message
is kept in the conversation as it came, and its calls (the arguments parsed as JSON) are run on
the model's own :class:`~toolscore.benchmarks.bfcl.multiturn.execute.World`, one tool message
per call with its call id. A step without calls, or whose calls cannot be decoded, ends the
turn (its message kept, no tool message). After BFCL's step limit the turn ends and so does the
entry: the turns left are never played, which BFCL's evaluator scores as a forced quit.

What is kept is BFCL's result: per turn, per step, the model's raw output (the calls as
``{name: arguments text}``, or the text) -- and, for reading a record, the text of each call's
result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolscore.benchmarks.bfcl import prompting
from toolscore.benchmarks.bfcl.decode import raw_result
from toolscore.benchmarks.bfcl.release import constant
from toolscore.types import GenerateConfig, Message

PROMPTS = "constants/default_prompts.py"


def step_limit() -> int:
    """BFCL's MAXIMUM_STEP_LIMIT: a turn's steps beyond it force the entry to quit."""
    return int(constant(PROMPTS, "MAXIMUM_STEP_LIMIT"))


def added_functions_prompt() -> str:
    """The user message of a turn that adds held-out functions."""
    return str(constant(PROMPTS, "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC"))


@dataclass
class Played:
    """What an entry's play left: BFCL's raw result, each step's call results, and whether
    the step limit cut it short."""

    result: list[list[Any]] = field(default_factory=list)
    executions: list[list[list[str]]] = field(default_factory=list)
    forced_quit: bool = False


def _decoded(raw: Any) -> list[str] | None:
    """The step's calls as call strings, or None when the step ends the turn (a text, no
    call, or calls BFCL cannot decode)."""
    from toolscore.benchmarks.bfcl.multiturn.execute import call_strings

    if not isinstance(raw, list):
        return None
    try:
        calls = call_strings(raw)
    except Exception:  # undecodable arguments: BFCL ends the turn
        return None
    if not calls or (len(calls) == 1 and not calls[0]):
        return None
    return calls


async def play(entry: dict[str, Any], documents: list[dict[str, Any]],
               held: dict[int, list[dict[str, Any]]], model: Any, config: GenerateConfig,
               steps: list[list[dict[str, Any]]] | None = None, *, world: Any = None,
               turns: list[list[dict[str, Any]]] | None = None) -> Played:
    """Play ``entry`` with ``model``; ``steps`` (per turn) is what the ``oracle`` replays.
    ``world`` the entry's world when the caller built it (default: a new one); ``turns`` the
    messages each turn adds (default: the entry's questions)."""
    from toolscore.benchmarks.bfcl.multiturn.execute import World
    from toolscore.models.scripted.oracle import reference

    if world is None:
        world = World(entry)
    limit = step_limit()
    offered = list(documents)
    tools = prompting.multi_turn_tools(offered)
    messages: list[Message] = []
    played = Played()
    for turn, said in enumerate(entry["question"] if turns is None else turns):
        if turn in held:
            offered += held[turn]
            tools = prompting.multi_turn_tools(offered)
            said = [{"role": "user", "content": added_functions_prompt()}]
        messages += [Message(role=m["role"], content=m.get("content")) for m in said]
        outputs: list[Any] = []
        executions: list[list[str]] = []
        with reference(steps[turn] if steps is not None and turn < len(steps) else []):
            count = 0
            while True:
                reply = await model.generate(list(messages), tools, config)
                raw = raw_result(reply)
                messages.append(reply.message)
                outputs.append(raw)
                calls = _decoded(raw)
                if calls is None:
                    executions.append([])
                    break
                results = world.execute(calls)
                executions.append(results)
                messages += [Message(role="tool", content=text, tool_call_id=call.id)
                             for text, call in zip(results, reply.tool_calls, strict=False)]
                count += 1
                if count > limit:
                    played.forced_quit = True
                    break
        played.result.append(outputs)
        played.executions.append(executions)
        if played.forced_quit:
            break
    return played
