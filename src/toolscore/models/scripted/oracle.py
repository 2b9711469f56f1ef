"""``oracle``: a model that replays the ground truth, so protocols and scorers can be checked
end to end without any model.

A protocol hands the reference behaviour for the current assistant turn to the oracle with
``with reference(steps): ...``: a list of steps ``{"tool_calls": [{"name", "arguments"}],
"content"}``. It travels in a context variable (each asyncio task has its own), not in the
request, so a real model's requests and cache keys never carry the ground truth. The oracle
works out which step it is at from the transcript alone (the number of assistant
messages since the last user message), so it is stateless, and therefore safe to share and to
run concurrently. Running a benchmark with the oracle should give a perfect score; when it does
not, the protocol or the scorer is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from toolscore.models.base import InfraError, Model
from toolscore.types import GenerateConfig, Message, Reply, ToolCall, ToolSpec, Usage

_REFERENCE: ContextVar[list[dict[str, Any]] | None] = ContextVar("toolscore_oracle_reference",
                                                                 default=None)


@contextmanager
def reference(steps: list[dict[str, Any]]) -> Iterator[None]:
    """Make ``steps`` what the oracle replays for model calls made inside this block."""
    token = _REFERENCE.set(steps)
    try:
        yield
    finally:
        _REFERENCE.reset(token)


def current_step(messages: list[Message]) -> int:
    """How many assistant messages follow the last user message."""
    step = 0
    for m in reversed(messages):
        if m.role == "user":
            break
        if m.role == "assistant":
            step += 1
    return step


def _arguments(value: Any) -> str:
    if isinstance(value, str):  # already a JSON text (possibly deliberately malformed)
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def step_message(step: dict[str, Any], k: int) -> Message:
    """One script step as an assistant message with deterministic call ids ``call_<k>_<i>``."""
    calls = [
        ToolCall(id=f"call_{k}_{i}", name=c["name"], arguments=_arguments(c.get("arguments")))
        for i, c in enumerate(step.get("tool_calls") or [])
    ]
    return Message(role="assistant", content=step.get("content"), tool_calls=calls)


class OracleModel(Model):
    """Replays the current :func:`reference`; past its end, answers with the last step's text
    (or "")."""

    name = "oracle"
    cacheable = False  # free and exact: caching would only fill the cache
    empty_is_error = False  # an empty final answer is what the script says, not an infra fault

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "oracle"}

    async def generate(
        self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
    ) -> Reply:
        script = _REFERENCE.get()
        if script is None:
            raise InfraError("this benchmark gives the oracle no reference steps (the "
                             "oracle replays ToolTalk-style ground truth)", retryable=False)
        k = current_step(messages)
        if k < len(script):
            msg = step_message(script[k], k)
        else:
            last = script[-1].get("content") if script else None
            msg = Message(role="assistant", content=last or "")
        return Reply(message=msg, usage=Usage(),
                     finish_reason="tool_calls" if msg.tool_calls else "stop", model=self.name)
