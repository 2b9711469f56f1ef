"""The ACS LLM judge's prompt: one constraint of one response, answered with a JSON boolean.

The ACS paper asks an LLM whether a response satisfies one constraint, zero-shot or with a few
labelled examples, and finds most judges skewed towards "satisfied" and few-shot prompting
often harmful. This prompt is toolscore's own, written from the paper's description and the
dataset's labelling conventions (exact arithmetic, zero tolerance, the response's own claims
are not evidence), not copied from any released template. It runs on the one LLM judge
(:class:`~toolscore.judges.llm.LLMJudge`); :data:`TEMPLATE` says how ACS replies are read
(``"satisfied": true`` as a JSON boolean or a word, a cut-off object still read literally, the
re-ask naming the parse error). ``JUDGE`` is the ``acs-llm`` kind, declared as an entry point
of ``toolscore.judges``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.benchmarks.acs.judging import llm_plan
from toolscore.judges.llm import PromptTemplate
from toolscore.judges.registry import LLM, JudgeKind

SYSTEM_PROMPT = """\
You check whether an AI agent's response satisfies one constraint from a user's request.

The constraints are arithmetic: verifying one means finding the relevant numbers in the \
response and counting, adding, multiplying or computing durations between times. Work as \
follows:
1. Read the constraint and decide its scope (each day, each session, each meal, or the whole \
plan) from its wording; where the wording is ambiguous, use the user's request.
2. Extract every value the constraint depends on from the response itself, item by item.
3. Do the arithmetic exactly and show it. There is no tolerance: "exactly 2000 calories" is \
violated by 1990, "at least 150 g" is violated by 149 g.
4. Ignore the response's own claims about meeting the targets (e.g. "this plan meets your \
goals"); only the listed items count as evidence.
5. The constraint is satisfied only if it holds everywhere in its scope.

End your answer with one JSON object on its own line:
{"reasoning": "<short summary of the figures>", "satisfied": true or false}"""

USER_TEMPLATE = """\
## User request
{request}

## Agent response
{response}

## Constraint
{constraint}

Is the constraint satisfied by the agent response?"""

RETRY_PROMPT = ("I could not read a verdict from your answer ({error}). Reply with only the JSON "
                'object {{"reasoning": "...", "satisfied": true or false}}.')


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


TEMPLATE = PromptTemplate(
    name="acs-constraint",
    system=_literal(SYSTEM_PROMPT),
    user=USER_TEMPLATE,
    labels=("true", "false"),
    key="satisfied",
    aliases={"true": ("yes", "satisfied", "1"),
             "false": ("no", "unsatisfied", "not satisfied", "0")},
    other_keys=("is_constraint_satisfied", "verdict"),
    loose=True,
    correction=RETRY_PROMPT,
)

#: Names the prompt in run.json, so two runs with different prompts are never compared blindly.
PROMPT_SHA256 = hashlib.sha256("\0".join(
    (SYSTEM_PROMPT, USER_TEMPLATE, RETRY_PROMPT)).encode("utf-8")).hexdigest()

JUDGE = JudgeKind("acs-llm", LLM, "ACS constraint satisfied / not",
                  "LLM judge of arithmetic constraints, zero- or few-shot", llm_plan)


def variables(row: AcsRow) -> dict[str, str]:
    """The template's variables for one row."""
    return {"request": row.request.strip(), "response": row.response.strip(),
            "constraint": row.constraint.strip()}


def example_answer(label: bool, explain: str = "") -> str:
    """The assistant turn of a few-shot example: the human label, with an optional summary."""
    doc: dict[str, Any] = {"reasoning": explain} if explain else {}
    return json.dumps({**doc, "satisfied": label})


def as_bool(label: str | None) -> bool | None:
    """The template's label ("true"/"false") as the row's boolean; None stays an abstention."""
    return None if label is None else label == "true"
