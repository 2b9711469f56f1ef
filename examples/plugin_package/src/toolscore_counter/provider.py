"""A model provider of our own, registered through the ``toolscore.providers`` entry point:
``parrot/<anything>`` repeats the user's last message and never calls a tool, a floor that any
real model should beat. ``toolscore run counter --model parrot/x`` uses it."""

from __future__ import annotations

from toolscore.models import Model
from toolscore.types import GenerateConfig, Message, Reply, ToolSpec, Usage


class ParrotModel(Model):
    """A :class:`~toolscore.models.Model`: subclassing it gives the defaults of the members
    this provider does not set (``empty_is_error``, ``max_concurrency``, ``base_url``)."""

    cacheable = False  # free and deterministic

    def __init__(self, variant: str = "plain", **options: object) -> None:
        self.name = f"parrot/{variant}"

    def secrets(self) -> list[str]:
        return []  # it holds no key and calls no endpoint: nothing to keep out of records

    def cache_identity(self) -> dict[str, object]:
        return {"provider": "parrot", "variant": self.name}

    async def generate(self, messages: list[Message], tools: list[ToolSpec],
                       config: GenerateConfig) -> Reply:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        return Reply(Message(role="assistant", content=f"You said: {last}"), Usage(),
                     finish_reason="stop", model=self.name)
