"""The ToolTalk simulation protocol for one conversation.

For every assistant turn: reset the world, replay the ground-truth calls of all earlier turns,
show the model the ground-truth history so far, and let it call tools (each executed and fed back)
until it answers in text. Predictions of earlier turns are forgotten: every turn starts from the
ground truth, so one early mistake does not cascade.

What a turn stores is bounded (:mod:`toolscore.env.limits`): a model decides how long the names,
arguments and texts it sends are, and a record must stay loadable. Values longer than the limit
(16 KiB, over ten times the longest call of the released data) are stored cut, with a marker
giving their full length, and are not kept in full anywhere: the scorer reads the stored record,
during the run and on every rescore alike, so a cut value scores the same both times (a
ground-truth value is never that long, so a cut one could not have matched exactly anyway).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from toolscore.env.environment import Environment
from toolscore.env.limits import NAME_LIMIT, bounded, bounded_message, bounded_text
from toolscore.env.tool import CallRecord
from toolscore.models.base import ContextLengthExceeded
from toolscore.models.client import benchmark_prompt
from toolscore.models.scripted.oracle import reference
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolResult, ToolSpec

# The reference puts no limit on calls per turn; a model looping forever would never finish, so
# the default mode stops a turn after this many calls (a safety cap far above any ground-truth
# turn, recorded as the turn's ``stop`` reason and counted in the report), strict mode after
# fewer. ``--max-calls-per-turn`` overrides both.
DEFAULT_MAX_CALLS = 100
STRICT_MAX_CALLS = 10
OWN_MAX_CALLS = 30  # toolscore's own requests (the demo, other tool sets)


@dataclass(frozen=True)
class TurnRules:
    """How a turn runs. ``as_reference``: as ToolTalk's runner runs it, whose legacy API gives
    one call per reply: only a reply's first call is executed (any others are counted in the
    turn's ``dropped_calls``), arguments that are blank are unparsable, and the call goes back
    to the model as the runner rebuilds it (:func:`reference_echo`). Otherwise every call of a
    reply is executed and the reply is sent back as the model wrote it."""

    max_calls: int
    as_reference: bool = False
# What to change when the prompt alone (system prompt, ground-truth history, tools) does not fit.
TOO_LONG_ADVICE = "offer fewer tools (--tools exact)"


class Generator(Protocol):
    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply: ...


def system_prompt(metadata: dict[str, Any]) -> str:
    """Toolscore's own wording (strict mode, the demo, other tool sets; the default mode sends
    the reference's, :mod:`.reference_mode`); carries the location, the current time and
    the logged-in user."""
    user = metadata.get("username") or "not logged in"
    return (
        "You are a helpful assistant that completes the user's requests by calling the tools "
        "you are given. Call a tool only when it is needed; ask the user for anything you "
        "need that you do not know. Once you have the results, answer the user briefly.\n"
        f"Location: {metadata.get('location', 'unknown')}\n"
        f"Current time: {metadata.get('timestamp', 'unknown')}\n"
        f"Username: {user}"
    )


def history_messages(turns: list[Any], upto: int) -> list[Message]:
    """The ground-truth dialogue before turn ``upto``: user texts, calls with results, replies."""
    out: list[Message] = []
    for i, turn in enumerate(turns[:upto]):
        if turn.role == "user":
            out.append(Message(role="user", content=turn.text))
            continue
        for j, call in enumerate(turn.apis):
            call_id = f"gt_{i}_{j}"
            out.append(Message(role="assistant", tool_calls=[
                ToolCall(call_id, call.name, json.dumps(call.arguments or {}))]))
            out.append(Message(role="tool", tool_call_id=call_id, name=call.name,
                               content=json.dumps({"response": call.response,
                                                   "exception": call.exception})))
        out.append(Message(role="assistant", content=turn.text))
    return out


def oracle_script(turn: Any) -> list[dict[str, Any]]:
    """What the ``oracle`` model replays for this turn: each ground-truth call, then the text."""
    steps: list[dict[str, Any]] = [
        {"tool_calls": [{"name": c.name, "arguments": c.arguments or {}}], "content": None}
        for c in turn.apis]
    steps.append({"tool_calls": [], "content": turn.text})
    return steps


def start_turn(env: Environment, turns: list[Any], index: int) -> None:
    """Put the world where turn ``index`` starts: reset, then every earlier ground-truth call."""
    env.reset()
    for earlier in turns[:index]:
        if earlier.role == "assistant":
            for call in earlier.apis:
                env.call(call.name, call.arguments)


async def simulate_turn(
    env: Environment,
    turns: list[Any],
    index: int,
    model: Generator,
    tools: list[ToolSpec],
    prompt: str,
    config: GenerateConfig,
    rules: TurnRules,
    start: Any = None,
    expect: Any = None,
) -> dict[str, Any]:
    """Run the model on assistant turn ``index``; returns the stored turn output.
    ``start``: the ground truth's world after the previous assistant turn, when known (a
    ``final_state.TruthState``): restored rather than replayed, with its database hashes
    known, so that only what the model changes is hashed again. ``expect``: the ground truth's
    world after this turn, when known: a database the model leaves as the ground truth does
    is recognised by its pickle instead of hashed (``Environment.expect``)."""
    if start is None:
        start_turn(env, turns, index)
    else:
        env.restore(start.checkpoint)
        env.assume_hashes(start.databases)
    if expect is not None:
        env.expect(expect.checkpoint.blobs, expect.databases)
    messages = [Message(role="system", content=prompt), *history_messages(turns, index)]
    # the turn as stored: each reply as the model wrote it, then the results it was shown
    # (the reference mode sends its calls back rebuilt, :func:`reference_echo`)
    transcript: list[Message] = []
    start = len(messages)
    truth = oracle_script(turns[index])
    predictions: list[dict[str, Any]] = []
    text: str | None = None
    stop = "answer"
    dropped = 0
    apis: set[str] = set()
    while stop == "answer":
        try:
            # the turn's first request holds only the benchmark's prompt and ground truth: if
            # that does not fit, the sample cannot be run (an infrastructure error, not scored)
            with reference(truth), benchmark_prompt(len(messages) == start, TOO_LONG_ADVICE):
                reply = await model.generate(messages, tools, config)
        except ContextLengthExceeded:
            stop = "context_length"  # the model's own loop filled its context: score what it did
            break
        if reply.api is not None:  # a provider that chose the request's shape says which
            apis.add(reply.api)
        transcript.append(reply.message)
        if not reply.tool_calls:
            messages.append(reply.message)
            text = reply.text
            break
        calls = reply.tool_calls
        if rules.as_reference:
            dropped += len(calls) - 1
            calls = calls[:1]
        else:
            messages.append(reply.message)
        for call in calls:
            if len(predictions) >= rules.max_calls:
                stop = "max_calls"
                break
            record, result = (execute_as_reference(env, call) if rules.as_reference
                              else env.execute(call))
            predictions.append(stored_call(record, call.arguments))
            if rules.as_reference:  # a reasoning model's signed thinking goes back with it
                messages.append(reference_echo(call, record, reply.message.reasoning_items))
            messages.append(result.to_message())
            transcript.append(messages[-1])
    extra: dict[str, Any] = {}
    if apis:
        extra["api"] = sorted(apis)
    if dropped:
        extra["dropped_calls"] = dropped
    return {
        "turn": index,
        "user": user_request(turns, index),
        "ground_truth": [c.to_dict() for c in turns[index].apis],
        "predictions": predictions,
        "text": bounded_text(text),
        "stop": stop,
        "state_hash": env.state_hash(),
        "transcript": [bounded_message(m.to_dict()) for m in transcript],
        **extra,
    }


def execute_as_reference(env: Environment, call: ToolCall) -> tuple[CallRecord, ToolResult]:
    """Execute ``call`` as ToolTalk's runner does: blank arguments do not parse there (``""``
    is not JSON), where toolscore's own protocol reads them as no arguments."""
    if isinstance(call.arguments, str) and not call.arguments.strip():
        record = env.call(call.name, None)
        return record, ToolResult(call.id, call.name, record.response, record.exception)
    return env.execute(call)


def reference_echo(call: ToolCall, record: CallRecord,
                   reasoning_items: list[dict[str, Any]] | None = None) -> Message:
    """The model's call as ToolTalk's runner sends it back in later requests: no text beside
    it, and the arguments as it parsed them, serialised again (``json.dumps``) with the
    session token the executor added, or ``null`` when they did not parse. A reasoning
    model's ``reasoning_items`` (a provider's blocks that must come back with the call, as
    Anthropic's signed thinking) are kept on it; they are not text the runner sends."""
    arguments = "null" if record.arguments is None else json.dumps(record.arguments)
    return Message(role="assistant", content=None,
                   tool_calls=[ToolCall(call.id, call.name, arguments)],
                   reasoning_items=list(reasoning_items or []))


def user_request(turns: list[Any], index: int) -> list[str]:
    """What the user said since the previous assistant turn: the request this turn answers,
    stored so that a reader sees it next to the model's reply (the transcript holds only the
    messages of the turn itself)."""
    said: list[str] = []
    for turn in reversed(turns[:index]):
        if turn.role != "user":
            break
        said.insert(0, bounded_text(turn.text) or "")
    return said


def stored_call(record: CallRecord, raw_arguments: str) -> dict[str, Any]:
    """One executed call as a turn stores it: the request, response and exception (ToolTalk's
    shape) plus the argument text as the model wrote it, each bounded."""
    return {"request": {"api_name": bounded_text(record.name, NAME_LIMIT),
                        "parameters": bounded(record.arguments)},
            "response": bounded(record.response),
            "exception": bounded_text(record.exception),
            "raw_arguments": bounded_text(raw_arguments)}


def assistant_turns(turns: list[Any]) -> list[int]:
    """Indices of the assistant turns that are evaluated (trailing user turns are not)."""
    return [i for i, t in enumerate(turns) if t.role == "assistant"]
