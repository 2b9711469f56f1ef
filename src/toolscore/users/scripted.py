"""The scripted user: replays the user turns of a recorded dialogue, in order.

It makes a static history usable wherever a simulator is expected (a protocol can run the same
loop with a recorded user instead of a live one) and makes dialogue loops testable without a
model. When the recording has no user turn left, the user ends the dialogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolscore.types import Message
from toolscore.users.base import UserScript, UserTurn

EXHAUSTED = "Scripted user has no turns left"


class ScriptedUser:
    """Turn k of the dialogue's user side is the k-th user message of ``script.history``."""

    name = "scripted"

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn:
        recorded = [m.content or "" for m in script.history if m.role == "user"]
        k = sum(1 for m in dialogue if m.role == "user")
        if k >= len(recorded):
            return UserTurn("", done=True, reason=EXHAUSTED)
        return UserTurn(recorded[k])

    def identity(self) -> dict[str, Any]:
        return {"kind": "scripted"}
