"""What a benchmark tells the server about its tool world, so that serving knows no method.

A benchmark whose samples are played in a tool world returns a :class:`Serving` from
:meth:`~toolscore.benchmarks.base.Benchmark.serving`; ``toolscore mcp serve`` and the
free-running protocol then serve it with no code of their own about that benchmark: the world
of a sample (its environment, the tools offered and the documentation shown for each), the
system prompt an agent is given, what the user says before each assistant turn, how an
executed call is stored, the ground truth of a turn and the check of the world left at the end.
ToolTalk's implementation is :mod:`toolscore.benchmarks.tooltalk.serving`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ToolSpec


@runtime_checkable
class Serving(Protocol):
    """A benchmark's tool world, served to an agent (one episode per sample)."""

    @property
    def plugins(self) -> Sequence[Plugin]:
        """The tool set of a world without a sample (every tool the benchmark has)."""

    @property
    def databases(self) -> dict[str, Any]:
        """The initial databases of a world without a sample."""

    @property
    def replayable(self) -> bool:
        """Whether calls can be executed again to rebuild a state (False for the tools of a
        remote server: replaying there would act twice on a world that is not ours)."""

    def environment(self, sample: Any) -> Environment:
        """A fresh world of ``sample`` (a :class:`~toolscore.benchmarks.base.Sample`), as the
        benchmark's own protocol builds it."""

    def offered_tools(self, sample: Any) -> list[Tool]:
        """The tools listed to the agent for ``sample``."""

    def shown_spec(self, tool: Tool) -> ToolSpec:
        """The documentation shown for ``tool``."""

    def system_prompt(self, sample: Any) -> str:
        """The system prompt an agent is given for ``sample``."""

    def assistant_turns(self, sample: Any) -> list[int]:
        """The indices of the turns the agent answers, in order (the episode's turn counter
        takes these values)."""

    def user_request(self, sample: Any, turn: int) -> list[str]:
        """What the user says before assistant turn ``turn`` (one string per message)."""

    def ground_truth(self, sample: Any, turn: int) -> list[dict[str, Any]]:
        """The expected calls of assistant turn ``turn``, as stored."""

    def stored_call(self, record: CallRecord, raw_arguments: str) -> dict[str, Any]:
        """One executed call as the benchmark's scorer reads it in a stored turn."""

    def check_final_state(self, sample: Any, env: Environment,
                          truth: Callable[[], Environment], output: dict[str, Any]) -> None:
        """Add to ``output`` the check of the world ``env`` an episode left against the
        ground truth's (``truth``: a fresh copy of the sample's initial world)."""
