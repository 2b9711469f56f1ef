"""The user side of AutoDE's default mode, as the reference runner plays it.

The user agent (:class:`ReferenceUser`) is sent the release's instruction followed by the user
script in the runner's words (background, ``API: ...``, ``Parameters: {json}``), then the
runner's opening cue as a user message, then the dialogue with the roles swapped (the initial
query is the agent's own first turn). No sampling field is sent, as the runner sends none to its
user agent. Its reply loses any ``[DONE]`` and its surrounding blanks, and nothing else (a
speaker label stays), as the runner keeps it.

In human mode (:class:`ReferenceHuman`) the runner still asks the user agent for a reply each
turn and offers it as the default: an empty line takes it, ``[fail]`` ends the dialogue as
failed, anything else is the user's turn as typed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.benchmarks.autode.release import DONE, Release
from toolscore.types import GenerateConfig, Message, Usage
from toolscore.users import UserScript, UserTurn

FAIL = "[fail]"
ANNOTATOR_FAILED = "Annotator thought the dialogue is failed"
ENDED = "User ended the dialogue"


@dataclass(frozen=True)
class RunnerScript(UserScript):
    """A user script that also keeps the released background text, which the runner shows its
    user agent verbatim."""

    background_text: str = ""


def agent_messages(release: Release, script: UserScript, dialogue: Sequence[Message]
                   ) -> list[Message]:
    """The user agent's request as the runner builds it."""
    background = getattr(script, "background_text", "") or "\n".join(
        f"{k}: {v}" for k, v in script.profile.items())
    content = release.user_content(background, script.goal, dict(script.facts))
    messages = [Message(role="system", content=release.user_prompt + content),
                Message(role="user", content=release.start_cue)]
    for m in dialogue:
        messages.append(Message(role="assistant" if m.role == "user" else "user",
                                content=m.content or ""))
    return messages


def agent_text(text: str | None) -> str:
    """The agent's reply as the runner keeps it."""
    return (text or "").replace(DONE, "").strip()


class ReferenceUser:
    """The reference's user agent on any chat model (no tools offered)."""

    def __init__(self, client: Any, release: Release, config: GenerateConfig) -> None:
        self.client = client
        self.release = release
        self.config = config
        self.usage = Usage()

    @property
    def name(self) -> str:
        return f"llm:{self.client.name}"

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn:
        reply = await self.client.generate(agent_messages(self.release, script, dialogue), [],
                                           self.config)
        self.usage.add(reply.usage)
        return UserTurn(agent_text(reply.text), usage=reply.usage)

    def identity(self) -> dict[str, Any]:
        return {"kind": "llm", "model": self.client.name,
                "prompt": self.release.source_label("prompts/prompt_eng_user_v3.txt"),
                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens}


class ReferenceHuman:
    """A person at the terminal, offered the user agent's reply as the default each turn."""

    name = "human"

    def __init__(self, agent: ReferenceUser, person: Any) -> None:
        self.agent = agent
        self.person = person  # a toolscore.users.HumanUser: its streams and script display

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn:
        suggestion = await self.agent.reply(script, dialogue)
        show = getattr(self.person, "show_script", None)
        if show is not None:
            show(script)
        out = getattr(self.person, "output", None) or sys.stderr
        if dialogue and dialogue[-1].role == "assistant":
            out.write(f"assistant> {dialogue[-1].content or ''}\n")
        out.write(f"User (default: {suggestion.text}):")
        out.flush()
        line = await asyncio.to_thread((getattr(self.person, "input", None)
                                        or sys.stdin).readline)
        if not line:  # the input closed: the person has left
            return UserTurn("", done=True, reason=ENDED, usage=suggestion.usage)
        text = line[:-1] if line.endswith("\n") else line
        if text.strip() == "":
            return UserTurn(suggestion.text, usage=suggestion.usage)
        if text.strip() == FAIL:
            return UserTurn("", done=True, reason=ANNOTATOR_FAILED, usage=suggestion.usage)
        return UserTurn(text, usage=suggestion.usage)

    def identity(self) -> dict[str, Any]:
        return {"kind": "human", "suggestions": self.agent.identity()}
