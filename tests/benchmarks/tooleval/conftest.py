"""A scripted ToolEval judge that answers the reference mode's function calls over HTTP.

Its verdicts follow markers written into the answers and queries, so every branch of the
reference decision procedure can be reached on purpose and its outcome derived by hand:

- first look at an answer (``check_answer_status``, shown the raw ``final_answer`` string):
  "#solved" -> Solved, "#unsure" -> Unsure, "#broken" -> a value outside the enum (every time),
  else Unsolved;
- second look (``parse_answer_status``, shown the whole answer record as JSON): "#later-solved"
  -> Solved, "#still-unsure" -> Unsure, else Unsolved;
- task (``check_task_solvable``, shown ``{"query", "available_tools"}`` as JSON): "#unsolvable"
  -> Unsolvable, "#unsure-task" -> Unsure, else Solvable;
- preference (``select_better_answer``): the attempt holding "#best" (alone), else "A" (a judge
  that always picks the first shown).

Every request is kept, so a test can count judge calls and read what the judge was shown.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolscore.benchmarks.tooleval.data import Answer, Sample, Step
from toolscore.testing.openai_server import reply_to_completion
from toolscore.types import Message, ToolCall


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


class ScriptedFC:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def calls(self, function: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests
                if function is None or r["tools"][0]["function"]["name"] == function]

    def label(self, function: str, user: str) -> tuple[str, str]:
        if function == "check_answer_status":
            answer = between(user, "finished with):\n", "\n\nSolved:")
            return "answer_status", ("Maybe" if "#broken" in answer else
                                     "Solved" if "#solved" in answer else
                                     "Unsure" if "#unsure" in answer else "Unsolved")
        if function == "parse_answer_status":
            record = between(user, "Attempt (JSON):\n", "\n\nSolved:")
            return "answer_status", ("Solved" if "#later-solved" in record else
                                     "Unsure" if "#still-unsure" in record else "Unsolved")
        if function == "check_task_solvable":
            task = between(user, "JSON):\n", "\n\nSolvable:")
            return "task_status", ("Unsolvable" if "#unsolvable" in task else
                                   "Unsure" if "#unsure-task" in task else "Solvable")
        a = between(user, "Attempt A (JSON):\n", "\n\nAttempt B")
        b = between(user, "Attempt B (JSON):\n", "\n\nWeigh")
        return "preference", "B" if "#best" in b and "#best" not in a else "A"

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        function = request["tools"][0]["function"]["name"]
        key, label = self.label(function, request["messages"][1]["content"])
        call = ToolCall(id="call_1", name=function,
                        arguments=json.dumps({"reason": "scripted", key: label}))
        return reply_to_completion(Message(role="assistant", tool_calls=[call]),
                                   prompt_tokens=5)


def make_sample(qid: str, text: str | None, query: str = "", subset: str = "S",
                finish: bool = True, give_up: bool = False) -> Sample:
    """A query whose answer finishes with ``text`` (None: no answer at all)."""
    query = query or f"query {qid}"
    tools = [{"type": "function", "function": {"name": "get", "description": "Gets.",
                                               "parameters": {}}}]
    if text is None:
        return Sample(qid, query, tools, None, subset)
    final = json.dumps({"return_type": "give_up_and_restart"} if give_up else
                       {"return_type": "give_answer", "final_answer": text})
    path = [Step("system", "sys"), Step("user", query), Step("tool", "ok", name="get",
                                                             arguments="{}")]
    if finish:
        path.append(Step("tool", "", name="Finish", arguments=final))
    return Sample(qid, query, tools, Answer("m", final if finish else "", path, len(path)),
                  subset)


def converted_file(samples: list[Sample]) -> dict[str, Any]:
    """The samples as one converted answer file ({query_id: record})."""
    return {s.query_id: {"query": s.query, "available_tools": s.available_tools,
                         "answer": None if s.answer is None else s.answer.as_record()}
            for s in samples}


@pytest.fixture
def scripted() -> ScriptedFC:
    return ScriptedFC()


@pytest.fixture
def sample_of() -> Any:
    return make_sample


@pytest.fixture
def to_converted() -> Any:
    return converted_file
