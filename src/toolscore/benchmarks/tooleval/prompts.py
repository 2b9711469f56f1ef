"""toolscore's own judge prompts for ToolEval's questions (written from the paper's criteria).

Three questions decide a pass (is the answer solved? on a second look at the whole path? can
the task be solved with these tools?) and one decides a preference (which of two solution paths
is better?). Each reply is a JSON object ``{"reason": ..., "<key>": <label>}``; the labels are
the vocabulary of the decision table in ``passrate.py``.
"""

from __future__ import annotations

import json
from typing import Any

from toolscore.benchmarks.tooleval.data import Answer, Step
from toolscore.judges.llm import PromptTemplate

_SYSTEM = ("You are a careful, impartial evaluator of AI assistants that use tools (APIs) to "
           "carry out a user's request. Judge only from the evidence given. Reply with one JSON "
           "object and nothing else.")

ANSWER_STATUS = PromptTemplate(
    name="answer_status",
    system=_SYSTEM,
    user="""Decide whether the assistant's final answer solves the user's request.

Request:
{query}

Final answer given to the user:
{answer}

Rules:
- "Solved": the answer addresses every part of the request with concrete, relevant content
  (or explains convincingly why a part cannot be done while delivering the rest).
- "Unsolved": the answer misses a part of the request, is generic, contradicts itself,
  only apologises, or only restates the request.
- "Unsure": the answer looks plausible but you cannot tell from the answer alone whether it
  is grounded in real tool results.

Reply as JSON: {{"reason": "<one or two sentences>", "answer_status": "Solved" | "Unsolved" |
"Unsure"}}""",
    labels=("Solved", "Unsolved", "Unsure"),
    key="answer_status",
)

ANSWER_STATUS_PATH = PromptTemplate(
    name="answer_status_path",
    system=_SYSTEM,
    user="""Decide whether the assistant solved the user's request, now looking at every step
it took: the tools it called, what they returned and its final answer.

Request:
{query}

Steps:
{path}

Final answer given to the user:
{answer}

Rules:
- "Solved": the final answer covers every part of the request and is supported by the tool
  results (no invented facts).
- "Unsolved": a part is missing, or the answer states things the tool results do not support.
- "Unsure": the evidence does not allow a decision either way.

Reply as JSON: {{"reason": "<one or two sentences>", "answer_status": "Solved" | "Unsolved" |
"Unsure"}}""",
    labels=("Solved", "Unsolved", "Unsure"),
    key="answer_status",
)

TASK_SOLVABLE = PromptTemplate(
    name="task_solvable",
    system=_SYSTEM,
    user="""Decide whether the user's request can be carried out with the tools below.

Request:
{query}

Available tools:
{tools}

Rules:
- "Solvable": the tools provide what each part of the request needs, and the request gives
  the information they require.
- "Unsolvable": some part needs a capability no tool offers, or information that is missing
  and cannot be obtained with the tools.
- "Unsure": you cannot tell from the descriptions.

Reply as JSON: {{"reason": "<one or two sentences>", "task_status": "Solvable" | "Unsolvable" |
"Unsure"}}""",
    labels=("Solvable", "Unsolvable", "Unsure"),
    key="task_status",
)

PREFERENCE = PromptTemplate(
    name="preference",
    system=_SYSTEM,
    user="""Two assistants attempted the same request with the same tools. Decide which
attempt is better.

Request:
{query}

=== Attempt A ===
{path_a}
Final answer A:
{answer_a}

=== Attempt B ===
{path_b}
Final answer B:
{answer_b}

Weigh, in this order: whether the final answer fulfils the request; whether it is correct
and grounded in the tool results; how informative and useful it is; whether the steps were
sensible (right tools, sensible arguments, recovered from errors); and, last, economy (fewer
wasted calls). Do not prefer an answer for its position or its length alone.

Reply as JSON: {{"reason": "<one or two sentences>", "preference": "A" | "B"}}""",
    labels=("A", "B"),
    key="preference",
)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …[cut]"


def render_path(steps: list[Step], limit: int = 800) -> str:
    """A solution path as numbered lines (system prompt and user query left out)."""
    lines: list[str] = []
    for step in steps:
        if step.role == "tool":
            lines.append(f"{len(lines) + 1}. call {step.name}({_clip(step.arguments or '', limit)})"
                         f" -> {_clip(step.content, limit)}")
        elif step.role == "assistant" and step.content:
            lines.append(f"{len(lines) + 1}. assistant: {_clip(step.content, limit)}")
    return "\n".join(lines) or "(no steps)"


def render_tools(tools: list[dict[str, Any]], limit: int = 400) -> str:
    lines = []
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = fn.get("name") or fn.get("api_name") or "?"
        desc = fn.get("description") or fn.get("api_description") or ""
        params = fn.get("parameters") or {}
        props = ", ".join(params.get("properties", {})) if isinstance(params, dict) else ""
        lines.append(f"- {name}({props}): {_clip(str(desc).strip(), limit)}")
    return "\n".join(lines) or "(no tools)"


def answer_text(answer: Answer | None) -> str:
    if answer is None:
        return "(no answer)"
    return answer.text.strip() or json.dumps(answer.final_answer or "") or "(empty)"
