"""A scripted ToolEval judge for the fake OpenAI server: the same replies to ToolBench's own
evaluator and to toolscore's, so their requests and decisions can be compared one by one.

Its verdicts depend only on what a request shows the judge, never on the wording around it:
markers written into the answers and queries (whole: "#unsure" is not "#unsure-task")
reach every branch on purpose, and an ordinary
input (no marker) gets a verdict drawn from a hash of the request's user text, so inputs that
differ by one byte can get different verdicts. It answers in the shape it was asked in: a legacy
``function_call`` to a ``functions`` request, a ``tool_calls`` reply to a ``tools`` request.

- ``check_answer_status`` / ``parse_answer_status``: "#solved" -> Solved, "#unsure" -> Unsure
  (first look only), "#later-solved" -> Solved and "#still-unsure" -> Unsure (second look),
  "#unsolved" -> Unsolved;
- ``check_task_solvable``: "#unsolvable" -> Unsolvable, "#unsure-task" -> Unsure,
  "#solvable" -> Solvable;
- ``select_better_answer``: the answer holding "#best" (counted by the answers' JSON
  ``"final_answer"`` keys before it); with none, or both, a hash;
- "#broken" anywhere: a label outside the enum (every time).

With ``draw=False`` an input without a marker gets a fixed verdict instead of a hash
(Unsolved, Solvable, the first answer shown), for tests that derive outcomes by hand.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from support.testing.responders import reply_to_completion
from toolscore.types import Message, ToolCall

ANSWER = {"check_answer_status": (("#solved", "Solved"), ("#unsure", "Unsure"),
                                  ("#unsolved", "Unsolved")),
          "parse_answer_status": (("#later-solved", "Solved"), ("#still-unsure", "Unsure"),
                                  ("#unsolved", "Unsolved")),
          "check_task_solvable": (("#unsolvable", "Unsolvable"), ("#unsure-task", "Unsure"),
                                  ("#solvable", "Solvable"))}
LABELS = {"check_answer_status": ("answer_status", ("Solved", "Unsolved", "Unsure")),
          "parse_answer_status": ("answer_status", ("Solved", "Unsolved", "Unsure")),
          "check_task_solvable": ("task_status", ("Solvable", "Unsolvable", "Unsure"))}


def asked_function(request: dict[str, Any]) -> str:
    """The function a judge request forces (either API shape)."""
    if "functions" in request:
        choice = request.get("function_call") or {}
        return str(choice.get("name") if isinstance(choice, dict) else
                   request["functions"][0]["name"])
    return str(request["tools"][0]["function"]["name"])


def user_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"]
                     if m.get("role") == "user")


def _draw(text: str, n: int) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % n


def preferred_index(text: str, draw: bool = True) -> int:
    """Which shown answer holds "#best" (0 or 1); a hash when neither or both do."""
    starts = [i for i in range(len(text)) if text.startswith('"final_answer": ', i)]
    marks = [i for i in range(len(text)) if text.startswith("#best", i)]
    holders = {sum(1 for s in starts if s < m) - 1 for m in marks}
    holders.discard(-1)
    if len(holders) == 1:
        return holders.pop()
    return _draw(text, 2) if draw else 0


def verdict(function: str, text: str, draw: bool = True) -> dict[str, Any]:
    """The arguments the scripted judge calls ``function`` with, given the user text."""
    if function == "select_better_answer":
        return {"reason": "scripted", "index": preferred_index(text, draw)}
    key, labels = LABELS[function]
    if "#broken" in text:
        return {"reason": "scripted", key: "Maybe"}
    for marker, label in ANSWER[function]:
        if re.search(re.escape(marker) + r"(?![\w-])", text):
            return {"reason": "scripted", key: label}
    if not draw:
        return {"reason": "scripted", key: "Solvable" if key == "task_status" else "Unsolved"}
    return {"reason": "scripted", key: labels[_draw(text, len(labels))]}


class ScriptedToolEvalJudge:
    """The responder; ``requests`` keeps every request body in arrival order."""

    def __init__(self, draw: bool = True) -> None:
        self.requests: list[dict[str, Any]] = []
        self.draw = draw

    def calls(self, function: str | None = None) -> list[dict[str, Any]]:
        """The requests that asked ``function`` (all of them when None)."""
        return [r for r in self.requests if function is None or asked_function(r) == function]

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        function = asked_function(request)
        arguments = json.dumps(verdict(function, user_text(request), self.draw))
        if "functions" in request:
            body = reply_to_completion(Message(role="assistant", content=None), prompt_tokens=5)
            choice = body["choices"][0]
            choice["message"]["function_call"] = {"name": function, "arguments": arguments}
            choice["finish_reason"] = "function_call"
            return body
        call = ToolCall(id="call_1", name=function, arguments=arguments)
        return reply_to_completion(Message(role="assistant", tool_calls=[call]), prompt_tokens=5)


CATEGORIES = ("messages", "functions", "sampling", "api shape")


def legacy_body(request: dict[str, Any]) -> dict[str, Any]:
    """A judge request in the legacy ``functions`` shape, its model name left out (the judge is
    the user's choice; the reference names its own)."""
    out = {k: v for k, v in request.items() if k != "model"}
    if "tools" in out:
        out["functions"] = [t.get("function", t) for t in out.pop("tools")]
    choice = out.pop("tool_choice", None)
    if isinstance(choice, dict):
        out["function_call"] = {"name": choice.get("function", {}).get("name")}
    elif choice is not None:
        out["function_call"] = choice
    return out


def differences(reference: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """The categories in which two judge requests differ."""
    a, b = legacy_body(reference), legacy_body(ours)
    found = []
    if a.get("messages") != b.get("messages"):
        found.append("messages")
    if a.get("functions") != b.get("functions") or a.get("function_call") != \
            b.get("function_call"):
        found.append("functions")
    fields = ("messages", "functions", "function_call")
    if {k: v for k, v in a.items() if k not in fields} != \
            {k: v for k, v in b.items() if k not in fields}:
        found.append("sampling")
    if ("functions" in reference) != ("functions" in ours):
        found.append("api shape")
    return found
