"""The tool world a server offers: which tools, over which state, for which conversation.

A served conversation must be the very world toolscore's own protocol builds for it (its
databases, clock, login session and offered tool set), or scores of an agent and of a model
could not be put side by side. So the world is asked of the benchmark itself, through the
:class:`~toolscore.benchmarks.serve.interface.Serving` its ``serving()`` returns (ToolTalk's
benchmark and every benchmark built on it, the demo and ``--plugins`` sets included), never
rebuilt here: nothing in this package knows a benchmark.

Without a conversation the world is the tool set alone: the benchmark's plugins over its
initial databases, nobody logged in (or installed plugin sets over empty databases). Such an
episode has no ground truth; its call log and final state are still recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Benchmark, OptionError, Sample
from toolscore.benchmarks.serve.interface import Serving
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import Tool
from toolscore.types import ToolSpec

PROTOCOL = "free-running"
HEADER_KEY = "x-mcp-header"  # MCP: a tool argument mirrored into an Mcp-Param-* header


@dataclass
class EpisodeWorld:
    """One episode's world: its environment, the tools listed to the agent (with the
    documentation shown for each) and, for a conversation, the sample it plays."""

    env: Environment
    tools: list[Tool]
    specs: dict[str, ToolSpec]
    sample: Sample | None = None
    system_prompt: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    # a fresh copy of the conversation's initial world, for the final-state check (None: no
    # ground truth, or a world whose state is not ours to replay)
    truth: Callable[[], Environment] | None = None
    # whether calls can be executed again to rebuild the state (not for tools of a remote
    # server: replaying there would act twice on a world that is not ours)
    replayable: bool = True
    # what the benchmark says about its samples (turns, user requests, stored calls)
    serving: Serving | None = None


class ServedWorld:
    """A benchmark's tool world (or installed plugin sets), ready to open episodes on."""

    def __init__(self, name: str, benchmark: Benchmark | None = None,
                 plugins: Sequence[Plugin] = (), default_sample: str | None = None,
                 options: dict[str, Any] | None = None, data: Path | None = None) -> None:
        self.name = name
        self.benchmark = benchmark
        self.serving: Serving | None = benchmark.serving() if benchmark is not None else None
        if benchmark is not None and self.serving is None:
            raise OptionError(f"benchmark {name!r} has no tool world to serve (its serving() "
                              "gives none)")
        self.plugins = (list(plugins) if plugins
                        else list(self.serving.plugins) if self.serving is not None else [])
        self.default_sample = default_sample
        self.options = options or {}
        self.data = data
        self._samples: dict[str, Sample] | None = None
        self._schemas: dict[str, dict[str, Any]] | None = None
        # how to build this world again (``create``'s arguments), for the recovery of
        # episodes a stopped server left open; None: a world built by hand
        self.origin: dict[str, Any] | None = None
        if default_sample is not None:
            self.sample(default_sample)  # an unknown conversation fails at start, not later

    @classmethod
    def create(cls, benchmark: str, *, conversation: str | None = None,
               plugins: Sequence[str] = (), data: str | Path | None = None,
               **options: Any) -> ServedWorld:
        """The world of ``benchmark`` (built with its own code and options); with ``plugins``
        and neither a conversation nor ``data``, those installed plugin sets alone."""
        origin = {"benchmark": benchmark, "conversation": conversation,
                  "plugins": list(plugins), "data": None if data is None else str(data),
                  "options": dict(options)}
        if plugins and conversation is None and data is None:
            from toolscore.env.registry import load_plugins

            world = cls(benchmark, plugins=[p for n in plugins for p in load_plugins(n)],
                        options={"plugins": list(plugins)})
            world.origin = origin
            return world
        from toolscore.benchmarks.registry import make_benchmark

        if plugins:
            options["plugins"] = list(plugins)
        bench = make_benchmark(benchmark, data, **options)
        world = cls(benchmark, bench, default_sample=conversation, options=options,
                    data=getattr(bench, "data_dir", None))
        world.origin = origin
        return world

    @classmethod
    def recreate(cls, origin: dict[str, Any], data: str | Path | None = None) -> ServedWorld:
        """The world ``origin`` (a :attr:`origin`) describes; ``data`` replaces its folder."""
        return cls.create(str(origin["benchmark"]), conversation=origin.get("conversation"),
                          plugins=tuple(origin.get("plugins") or ()),
                          data=data if data is not None else origin.get("data"),
                          **dict(origin.get("options") or {}))

    # -- samples ---------------------------------------------------------------------------
    def samples(self) -> dict[str, Sample]:
        if self._samples is None:
            self._samples = ({s.id: s for s in self.benchmark.samples()}
                             if self.benchmark is not None else {})
        return self._samples

    def sample(self, sample_id: str) -> Sample:
        if self.benchmark is None:
            raise OptionError(f"{self.name}: no conversations to play (serve a benchmark with "
                              "its data to name one)")
        found = self.samples().get(sample_id)
        if found is None:
            raise OptionError(f"benchmark {self.name!r}: no conversation {sample_id!r} (see "
                              f"'toolscore run {self.name} --help' for its data)")
        return found

    # -- worlds ----------------------------------------------------------------------------
    def open(self, sample_id: str | None = None) -> EpisodeWorld:
        """A fresh world for one episode: of ``sample_id`` (default: the served one)."""
        sample_id = sample_id if sample_id is not None else self.default_sample
        if sample_id is None:
            tools = [t for p in self.plugins for t in p.tools]
            databases = self._bare_databases()
            env = Environment(self.plugins, databases=databases)
            return EpisodeWorld(env, tools, {t.name: self._spec(t) for t in tools})
        sample = self.sample(sample_id)
        serving = self.serving
        assert serving is not None  # a sample is known only with a benchmark
        tools = serving.offered_tools(sample)
        replayable = serving.replayable
        truth = (lambda: serving.environment(sample)) if replayable else None
        return EpisodeWorld(serving.environment(sample), tools,
                            {t.name: serving.shown_spec(t) for t in tools}, sample,
                            serving.system_prompt(sample), dict(sample.meta), truth,
                            replayable=replayable, serving=serving)

    def _bare_databases(self) -> dict[str, Any]:
        return dict(self.serving.databases) if self.serving is not None else {}

    def _spec(self, tool: Tool) -> ToolSpec:
        return self.serving.shown_spec(tool) if self.serving is not None else tool.spec

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's input schema by name, for the SDK's check of ``Mcp-Param-*`` headers
        against the arguments (the same for every episode of this world).

        Only a schema that declares a header (an ``x-mcp-header`` key anywhere in it) is
        returned: for any other the check walks the whole schema on every call and can find
        nothing to compare, so None (the SDK's "nothing to check") gives the same answer
        without that per-call walk.
        """
        if self._schemas is None:
            schemas = {t.name: self._spec(t).parameters for p in self.plugins for t in p.tools}
            self._schemas = {n: s for n, s in schemas.items() if declares_header(s)}
        return self._schemas.get(name)

    def config(self) -> dict[str, Any]:
        """What run.json says about this world."""
        base = self.benchmark.config() if self.benchmark is not None else {
            "plugins": [p.name for p in self.plugins]}
        return {**base, "protocol": PROTOCOL, "served_over": "mcp",
                "conversation": self.default_sample}


def declares_header(schema: Any) -> bool:
    """Whether ``x-mcp-header`` appears anywhere in a JSON schema (as a key, at any depth)."""
    if isinstance(schema, dict):
        return HEADER_KEY in schema or any(declares_header(v) for v in schema.values())
    if isinstance(schema, list):
        return any(declares_header(v) for v in schema)
    return False
