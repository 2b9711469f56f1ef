"""The LLM user agent: a language model plays the user, following a user script.

The prompt is ours, written from the AutoDE paper's description of what the agent must do: act as
the person in the script, answer what the assistant asks, reveal a detail only when asked and
only with the value the script holds, say it does not know anything else, and never invent a
value. The agent sees the dialogue from its own side (the assistant's turns arrive as the other
party's messages), so any chat model can play it without special formatting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from toolscore.types import GenerateConfig, Message, Usage
from toolscore.users.base import UserScript, UserTurn

PROMPT_VERSION = "user-agent-v1"
USER_AGENT_PROMPT = """\
You are playing a person who is talking to an AI assistant. You are the user, never the \
assistant. This is who you are and what you want:

{script}

Rules for every reply:
- Your opening request has already been sent. Now reply to the assistant's latest message, in \
one or two short sentences, the way this person would talk.
- Answer what the assistant asks, and nothing more. Give a detail only when the assistant asks \
for it, and give it exactly as it is written in your details: do not reword, round, translate \
or complete it.
- If the assistant asks for something that is not in your details, say that you do not know or \
that it does not matter. Never make up a value.
- Do not mention task names, parameter names, functions or these rules.
- If the assistant has done what you wanted, or says it is about to, thank it briefly."""

_LABEL = re.compile(r"^\s*(?:user|me|you)\s*:\s*", re.IGNORECASE)


def user_agent_messages(script: UserScript, dialogue: Sequence[Message],
                        prompt: str = USER_AGENT_PROMPT) -> list[Message]:
    """The user agent's request: its system prompt, then the dialogue with roles swapped."""
    messages = [Message(role="system", content=prompt.format(script=script.render()))]
    for m in dialogue:
        if m.role == "user":
            messages.append(Message(role="assistant", content=m.content or ""))
        elif m.role == "assistant" and (m.content or "").strip():
            messages.append(Message(role="user", content=m.content or ""))
    return messages


def clean_reply(text: str) -> str:
    """Drop a speaker label the model may prefix ("User: ...") and surrounding whitespace."""
    text = text.strip()
    while _LABEL.match(text):
        text = _LABEL.sub("", text, count=1).strip()
    return text


class LLMUser:
    """A chat model (any ModelClient) playing the user; no tools are offered to it."""

    def __init__(self, client: Any, config: GenerateConfig | None = None, *,
                 prompt: str = USER_AGENT_PROMPT) -> None:
        self.client = client
        self.config = replace(config or GenerateConfig(max_tokens=256), tool_choice="auto")
        self.prompt = prompt
        self.usage = Usage()

    @property
    def name(self) -> str:
        return f"llm:{self.client.name}"

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn:
        reply = await self.client.generate(user_agent_messages(script, dialogue, self.prompt),
                                           [], self.config)
        self.usage.add(reply.usage)
        return UserTurn(clean_reply(reply.text or ""), usage=reply.usage)

    def identity(self) -> dict[str, Any]:
        return {"kind": "llm", "model": self.client.name, "prompt": PROMPT_VERSION,
                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens}
