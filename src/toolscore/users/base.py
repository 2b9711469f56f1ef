"""What every user simulator shares: the user script it follows and the turn it produces.

A user simulator plays the person an assistant talks to. It is given a :class:`UserScript` (who
the user is, what they want, and the exact values they are allowed to reveal) and the dialogue so
far, and returns the user's next turn. Simulators differ only in who writes that turn: a language
model (:class:`~toolscore.users.llm.LLMUser`) or a person at the terminal
(:class:`~toolscore.users.human.HumanUser`), so a protocol can swap one for another and compare
evaluation methods on the same samples. (A recorded history needs no simulator: AutoDE's static
protocol hands the whole history to the assistant at once.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolscore.types import Message, Usage


@dataclass(frozen=True)
class UserScript:
    """Everything the simulated user knows.

    ``profile`` holds labelled lines shown as is (AutoDE: Character, Background, Purpose);
    ``facts`` are the only concrete values the user may give (AutoDE: the gold slots), keyed by
    name; ``goal`` names the task in a word or two (AutoDE: the gold API).
    """

    profile: Mapping[str, str] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    goal: str = ""
    first_message: str | None = None

    def render(self) -> str:
        """The script as plain text, the same for a model and for a person."""
        lines = [f"{label}: {text}" for label, text in self.profile.items()]
        if self.goal:
            lines.append(f"Task: {self.goal}")
        if self.facts:
            lines.append("Details you know (the only values you may give):")
            lines += [f"- {name}: {format_value(value)}" for name, value in self.facts.items()]
        else:
            lines.append("Details you know: none beyond the above.")
        return "\n".join(lines)


def format_value(value: Any) -> str:
    """A fact as the user would say it: booleans as yes/no, everything else as its text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass
class UserTurn:
    """The user's next turn. ``done`` means the user ends the dialogue (``text`` may then be
    empty); ``reason`` says why, for the record."""

    text: str
    done: bool = False
    reason: str = ""
    usage: Usage = field(default_factory=Usage)


class UserSimulator(Protocol):
    """Produces the next user turn from the script and the dialogue so far.

    ``dialogue`` holds only user and assistant text turns, in order, seen from the assistant's
    side (role "user" is the simulated user). Infrastructure failures propagate as InfraError.
    """

    name: str

    async def reply(self, script: UserScript, dialogue: Sequence[Message]) -> UserTurn: ...

    def identity(self) -> dict[str, Any]:
        """What determines this simulator's behaviour (model id, prompt version): for run.json."""
        ...
