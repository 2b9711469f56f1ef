"""A multi-turn record read as its conversation: each turn's user messages, each step's calls
(or text) and the result of each call, and where BFCL's step limit cut the entry short."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _step_messages(raw: Any, results: list[str], tag: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return [{"role": "assistant", "content": raw}]
    calls = [{"id": f"{tag}_{i}", "type": "function",
              "function": {"name": next(iter(c), ""), "arguments": next(iter(c.values()), "")}}
             for i, c in enumerate(raw) if isinstance(c, dict)]
    out: list[dict[str, Any]] = [{"role": "assistant", "content": None, "tool_calls": calls}]
    out += [{"role": "tool", "tool_call_id": call["id"], "content": text}
            for call, text in zip(calls, results, strict=False)]
    return out


def multi_turn_view(entry: dict[str, Any], held: dict[int, list[dict[str, Any]]],
                    output: dict[str, Any], added_prompt: Callable[[], str]
                    ) -> dict[str, Any]:
    """The record's transcript (``messages``) and, in ``details``, the turns played and the
    functions added on the way."""
    result = output.get("result")
    executions = output.get("executions") or []
    messages: list[dict[str, Any]] = []
    turns = result if isinstance(result, list) else []
    for t, steps in enumerate(turns):
        said = entry["question"][t] if t < len(entry["question"]) else []
        if t in held:
            said = [{"role": "user", "content": added_prompt()}]
        messages += [{"role": m["role"], "content": m.get("content")} for m in said]
        ran = executions[t] if t < len(executions) else []
        for k, raw in enumerate(steps if isinstance(steps, list) else []):
            messages += _step_messages(raw, ran[k] if k < len(ran) else [], f"call_{t}_{k}")
    details = {"turns": f"{len(turns)} of {len(entry['question'])} played"
               + (" (forced to quit at the step limit)" if output.get("forced_quit") else "")}
    if held:
        details["functions added"] = "; ".join(
            f"turn {t}: {', '.join(d['name'] for d in docs)}" for t, docs in sorted(held.items()))
    return {"messages": messages, "details": details}
