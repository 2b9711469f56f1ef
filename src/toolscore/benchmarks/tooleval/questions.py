"""What the judge is asked, and shown, in each ToolEval mode.

The *reference* mode asks what ToolBench's evaluator asks, in its words: the questions and the
function schemas are read at run time from the release's evaluator files
(:mod:`~toolscore.benchmarks.tooleval.release`), and the judge sees the answer as the answer
file holds it: first the raw ``final_answer`` string (the ``Finish`` arguments JSON), on a
second look the whole answer record as JSON, and for solvability the query with its tools as
JSON. The *stable* mode keeps toolscore's JSON-reply prompts (``prompts.py``) on the parsed
answer text and a readable rendering of the path. A :class:`Procedure` bundles one mode's
questions with the inputs it gives them and the way it asks, so the decision procedure
(``passrate.judge_once``) is written once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolscore.benchmarks.tooleval import prompts
from toolscore.benchmarks.tooleval.data import Answer, Sample
from toolscore.benchmarks.tooleval.release import ReleaseEvaluator, ask, default_evaluator
from toolscore.judges.llm import Verdict

STABLE_TEMPLATES = (prompts.ANSWER_STATUS, prompts.ANSWER_STATUS_PATH, prompts.TASK_SOLVABLE,
                    prompts.PREFERENCE)
Ask = Callable[[Any, Any, dict[str, Any], int], Awaitable[Verdict]]


@dataclass(frozen=True)
class Procedure:
    """One mode's three pass-rate questions, the inputs it shows the judge, how it asks."""

    name: str
    answer: Any  # is the answer solved?
    second_look: Any  # asked when the first says Unsure
    task: Any  # is the task solvable? (asked unless the answer is Solved)
    variables: Callable[[Sample], dict[str, Any]]
    second_variables: Callable[[Sample], dict[str, Any]]
    ask: Ask


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


async def _ask_stable(judge: Any, template: Any, variables: dict[str, Any],
                      vote: int) -> Verdict:
    return await judge.judge(template, variables, vote=vote)  # type: ignore[no-any-return]


STABLE = Procedure("stable", prompts.ANSWER_STATUS, prompts.ANSWER_STATUS_PATH,
                   prompts.TASK_SOLVABLE, stable_variables, stable_variables, _ask_stable)


def reference_procedure(evaluator: ReleaseEvaluator, reason: bool = True) -> Procedure:
    """The reference's pass-rate questions (``reason``: the pass rate asks for one; the win
    rate's status questions do not)."""
    async def asking(judge: Any, question: Any, variables: dict[str, Any],
                     vote: int) -> Verdict:
        return await ask(judge, question, variables, vote, reason=reason,
                         max_tokens=evaluator.max_tokens)

    return Procedure("reference", evaluator["check_answer_status"],
                     evaluator["parse_answer_status"], evaluator["check_task_solvable"],
                     reference_variables, reference_second_look, asking)


def procedure(mode: str, evaluator: ReleaseEvaluator | None) -> Procedure:
    """``mode``'s questions; the reference mode's from ``evaluator``, by default the release's
    found where the dataset is looked for (:func:`~.release.default_evaluator`)."""
    if mode == "stable":
        return STABLE
    return reference_procedure(evaluator or default_evaluator())


REFERENCE_TEMPERATURE = 0.2  # the reference evaluator's, when its config gives none
STABLE_TEMPERATURE = 0.7  # toolscore's: votes need variety
TEMPERATURE = {"reference": REFERENCE_TEMPERATURE, "stable": STABLE_TEMPERATURE}


def templates_sha256() -> str:
    """A short hash of the stable mode's question wording: reports name the prompts used."""
    text = "\0".join(t.system + "\0" + t.user for t in STABLE_TEMPLATES)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def prompts_label(mode: str, evaluator: ReleaseEvaluator | None = None) -> str:
    """How every report names the prompts: the release's evaluator, or toolscore's own."""
    if mode == "reference":
        if evaluator is None:
            return "ToolBench's evaluator, read from the release"
        return (f"ToolBench's evaluator, {evaluator.source} (sha256 {evaluator.digest}); "
                "function-calling verdicts as the reference asks")
    return (f"toolscore's own wording (sha256 {templates_sha256()}), not ToolEval's; "
            "JSON-reply verdicts on the parsed answer text (verdict distributions may differ "
            "from the paper's)")
