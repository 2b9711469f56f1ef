"""BFCL's agentic entries (memory, web search) judged as its evaluator judges them.

An agentic entry is one user question the model may answer after any number of steps of tool
calls; only its last text reply counts. The result BFCL's file holds is a list of one turn, a
list of the model's raw outputs per step. Each step is decoded as calls (for an OpenAI
function-calling model, :func:`~toolscore.benchmarks.bfcl.multiturn.execute.call_strings`);
a step that does not decode, or decodes to no call, is a text reply, and the last such reply is
the answer. The answer is right when one of the possible answers appears in it as a whole word
sequence once both are normalised: lower case, single quotes made double, and the characters
``, . / - _ * ^ ( )`` removed (whitespace is kept: the ``\\b`` word boundaries need it).

Error types and messages are BFCL's, verbatim: ``agentic:inference_error`` (the result is not a
list of one turn), ``agentic:no_last_message`` (every step was a call, or the last text reply
is empty) and ``agentic:answer_not_found``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from toolscore.benchmarks.bfcl.checker.verdict import VALID, Verdict, invalid
from toolscore.benchmarks.bfcl.multiturn.execute import call_strings

#: decodes one step of a model's raw output into call strings (raising when it cannot)
Decoder = Callable[[Any], list[str]]

_DROPPED = re.compile(r"[,./\-_*^()]")


def normalise(text: str) -> str:
    """BFCL's normal form of an answer and of a reply."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


def _no_calls(calls: list[Any]) -> bool:
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)


def last_reply(steps: list[Any], decode: Decoder = call_strings) -> Any:
    """The last step that is not a call (None when there is none)."""
    reply = None
    for step in steps:
        try:
            calls = decode(step)
        except Exception:  # a text reply, or arguments that do not parse
            reply = step
            continue
        if _no_calls(calls):
            reply = step
    return reply


def check_answer(reply: Any, possible_answers: list[str]) -> Verdict:
    """Whether one of ``possible_answers`` is in ``reply`` (BFCL's agentic checker)."""
    if type(reply) is list:
        reply = reply[0]
    if type(reply) is not str:
        reply = str(reply)
    text = normalise(reply)
    for answer in possible_answers:
        if re.search(rf"\b{re.escape(normalise(answer))}\b", text):
            return VALID
    return invalid("agentic:answer_not_found",
                   "None of the expected answers were found in the model response.")


def check_agentic(entry: dict[str, Any], answer: dict[str, Any], result: Any, *,
                  decode: Decoder = call_strings) -> Verdict:
    """One memory or web search question as BFCL's evaluator judges it.

    ``entry`` the question record (unused: BFCL judges the reply alone); ``answer`` the
    possible-answer record (``ground_truth``: the accepted answers); ``result`` the model's
    raw result as BFCL's result file holds it (one turn of steps)."""
    del entry
    if type(result) is not list or len(result) != 1:
        return invalid("agentic:inference_error",
                       "Error during inference phase. Model did not output a list of model "
                       "responses.")
    reply = last_reply(result[0], decode)
    if not reply:
        return invalid("agentic:no_last_message",
                       "Cannot find the last chat message that is not a function call.")
    return check_answer(reply, answer["ground_truth"])
