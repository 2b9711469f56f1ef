"""A scripted ToolEval pass-rate judge for the fake OpenAI server, shared by the tests that
judge runs (ToolEval's own and `toolscore judge`)."""

from __future__ import annotations

from typing import Any

from support.testing.openai_server import reply_to_completion
from toolscore.types import Message


def judge_server(seen: list[dict[str, Any]]) -> Any:
    """Answer status: Unsolved when the answer mentions "Deleted", else Solved; every task is
    solvable. Requests are kept in ``seen``."""
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        user = request["messages"][1]["content"]
        if '"task_status"' in user:
            text = '{"reason": "r", "task_status": "Solvable"}'
        else:
            answer = user.split("Final answer given to the user:")[1]
            status = "Unsolved" if "Deleted" in answer else "Solved"
            text = f'{{"reason": "r", "answer_status": "{status}"}}'
        return reply_to_completion(Message(role="assistant", content=text), prompt_tokens=3)
    return responder
