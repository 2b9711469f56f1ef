"""A Plugin groups tools around one purpose and names the databases they share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from toolscore.env.tool import Tool


@dataclass
class Plugin:
    name: str
    tools: list[Tool]
    databases: tuple[str, ...] = ()
    description: str = ""
    _by_name: dict[str, Tool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for t in self.tools:
            t.plugin = self.name
        self._by_name = {t.name: t for t in self.tools}

    def __getitem__(self, name: str) -> Tool:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @classmethod
    def from_tools(cls, name: str, tools: Iterable[Tool], databases: Iterable[str] = (),
                   description: str = "") -> Plugin:
        return cls(name=name, tools=list(tools), databases=tuple(databases),
                   description=description)
