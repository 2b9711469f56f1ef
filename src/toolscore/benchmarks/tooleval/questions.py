"""What the judge is asked, and shown, in each ToolEval mode.

The *reference* mode asks as ToolEval's own evaluator does: every verdict is a function call
whose label argument is an enum (answer Solved / Unsolved / Unsure, task Solvable /
Unsolvable / Unsure, preference A / B), and the judge sees the answer as the answer file holds
it: first the raw ``final_answer`` string (the ``Finish`` arguments JSON), on a second look
the whole answer record as JSON, and for solvability the query with its tools as JSON. The
questions' wording is toolscore's own (written from the paper's criteria, not the
reference's text), so verdict distributions can differ from the reference's; every report
says so. The *stable* mode keeps toolscore's JSON-reply prompts (``prompts.py``) on the parsed
answer text and a readable rendering of the path. A :class:`Procedure` bundles one mode's
questions with the inputs it gives them, so the decision procedure (``passrate.judge_once``)
is written once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolscore.benchmarks.tooleval import prompts
from toolscore.benchmarks.tooleval.data import Answer, Sample
from toolscore.judges.llm import PromptTemplate

_SYSTEM = ("You evaluate AI assistants that use tools (APIs) to carry out a user's request. "
           "Judge only from the evidence given, and give your verdict by calling the function "
           "provided.")

CHECK_ANSWER = PromptTemplate(
    name="check_answer_status",
    system=_SYSTEM,
    user="""Does this final answer solve the user's request?

Request:
{query}

Final answer (the arguments the assistant finished with):
{answer}

Solved: every part of the request is answered with concrete, relevant content, or the answer
explains convincingly why a part cannot be done while delivering the rest. Unsolved: a part is
missing, the answer is generic, only apologises or restates the request. Unsure: it looks
plausible but you cannot tell from the answer alone whether it rests on real tool results.""",
    labels=("Solved", "Unsolved", "Unsure"),
    key="answer_status",
    function="check_answer_status",
    function_doc="Record whether the final answer solves the request.",
)

PARSE_ANSWER = PromptTemplate(
    name="parse_answer_status",
    system=_SYSTEM,
    user="""Does this attempt solve the user's request? It is given whole: every step the
assistant took, the tools it called with what they returned, and its final answer.

Request:
{query}

Attempt (JSON):
{answer}

Solved: the final answer covers every part of the request and is supported by what the tools
returned. Unsolved: a part is missing, or the answer states things the tool results do not
support. Unsure: the evidence allows no decision either way.""",
    labels=("Solved", "Unsolved", "Unsure"),
    key="answer_status",
    function="parse_answer_status",
    function_doc="Record whether the attempt solves the request, judged from all its steps.",
)

CHECK_TASK = PromptTemplate(
    name="check_task_solvable",
    system=_SYSTEM,
    user="""Can this task be carried out with the tools it comes with?

Task (the request and its available tools, JSON):
{task}

Solvable: the tools provide what each part of the request needs, and the request gives the
information they require. Unsolvable: some part needs a capability no tool offers, or
information that is missing and cannot be obtained. Unsure: the descriptions do not tell.""",
    labels=("Solvable", "Unsolvable", "Unsure"),
    key="task_status",
    function="check_task_solvable",
    function_doc="Record whether the task can be solved with its tools.",
)

PREFER = PromptTemplate(
    name="select_better_answer",
    system=_SYSTEM,
    user="""Two attempts at the same request, with the same tools. Which one is better?

Request:
{query}

Attempt A (JSON):
{answer_a}

Attempt B (JSON):
{answer_b}

Weigh, in this order: whether the final answer fulfils the request; whether it is correct and
grounded in the tool results; how informative it is; whether the steps were sensible; last,
economy. Position and length alone are no reason to prefer an attempt.""",
    labels=("A", "B"),
    key="preference",
    function="select_better_answer",
    function_doc="Record which attempt is better.",
)

REFERENCE_TEMPLATES = (CHECK_ANSWER, PARSE_ANSWER, CHECK_TASK, PREFER)
STABLE_TEMPLATES = (prompts.ANSWER_STATUS, prompts.ANSWER_STATUS_PATH, prompts.TASK_SOLVABLE,
                    prompts.PREFERENCE)


@dataclass(frozen=True)
class Procedure:
    """One mode's three pass-rate questions and the inputs it shows the judge."""

    name: str
    answer: PromptTemplate  # is the answer solved?
    second_look: PromptTemplate  # asked when the first says Unsure
    task: PromptTemplate  # is the task solvable? (asked unless the answer is Solved)
    variables: Callable[[Sample], dict[str, Any]]
    second_variables: Callable[[Sample], dict[str, Any]]


def stable_variables(sample: Sample) -> dict[str, Any]:
    """The stable prompts' inputs: parsed answer text, a readable path, a tool list."""
    answer = sample.answer
    return {"query": sample.query, "answer": prompts.answer_text(answer),
            "path": prompts.render_path(answer.path if answer else []),
            "tools": prompts.render_tools(sample.available_tools)}


def reference_variables(sample: Sample) -> dict[str, Any]:
    """The reference's inputs: the raw ``final_answer`` string and the task as JSON."""
    answer = sample.answer
    return {"query": sample.query, "answer": answer.final_answer if answer else "",
            "task": json.dumps({"query": sample.query,
                                "available_tools": sample.available_tools})}


def reference_second_look(sample: Sample) -> dict[str, Any]:
    """The reference's second look: the whole answer record as JSON."""
    return {**reference_variables(sample), "answer": answer_json(sample.answer)}


def answer_json(answer: Answer | None) -> str:
    return json.dumps(answer.as_record() if answer is not None else {})


STABLE = Procedure("stable", prompts.ANSWER_STATUS, prompts.ANSWER_STATUS_PATH,
                   prompts.TASK_SOLVABLE, stable_variables, stable_variables)
REFERENCE = Procedure("reference", CHECK_ANSWER, PARSE_ANSWER, CHECK_TASK, reference_variables,
                      reference_second_look)
PROCEDURES = {p.name: p for p in (REFERENCE, STABLE)}
REFERENCE_TEMPERATURE = 0.2  # the reference evaluator's sampling temperature
STABLE_TEMPERATURE = 0.7  # toolscore's: votes need variety
TEMPERATURE = {"reference": REFERENCE_TEMPERATURE, "stable": STABLE_TEMPERATURE}


def templates_sha256(mode: str) -> str:
    """A short hash of one mode's question wording: reports name the prompts they used."""
    templates = REFERENCE_TEMPLATES if mode == "reference" else STABLE_TEMPLATES
    text = "\0".join(t.system + "\0" + t.user + (f"\0{t.function}" if t.function else "")
                     for t in templates)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def prompts_label(mode: str) -> str:
    """How every report names the prompts: toolscore's own wording, never ToolEval's."""
    how = ("function-calling verdicts with enum arguments on the raw final answer, as the "
           "reference asks" if mode == "reference" else "JSON-reply verdicts on the parsed "
           "answer text")
    return (f"toolscore's own wording (sha256 {templates_sha256(mode)}), not ToolEval's; "
            f"{how} (verdict distributions may differ from the paper's)")
