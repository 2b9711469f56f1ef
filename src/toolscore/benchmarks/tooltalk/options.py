"""ToolTalk's declared options, and where its tools come from: the benchmark's own plugins, an
installed plugin set, an external MCP server, or (for a stored run whose options are withheld,
see :mod:`toolscore.benchmarks.trust`) what the run recorded."""

from __future__ import annotations

import sys
from dataclasses import MISSING, Field, dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from toolscore.benchmarks.base import StoredRun, option
from toolscore.benchmarks.options import CallApi, call_api_option

ToolsMode = Literal["all", "exact", "suite"]
Split = Literal["easy", "hard", "all"]
Protocol = Literal["reference", "free-running"]
FREE_RUNNING = "free-running"
NOT_COMPARABLE = ("free-running protocol: the agent keeps its own history (no ground-truth "
                  "re-injection per turn); figures are not comparable with the reference "
                  "protocol's")


@dataclass
class ToolTalkOptions:
    split: Split = option("all", "Conversations: easy | hard | all.")
    tools: ToolsMode = option("all", "Tools offered: all 28 (as in the paper) | exact (those "
                              "the conversation uses) | suite (those of its plugins).")
    strict: bool = option(False, "Fix the reference scorer's and simulator's known defects "
                          "(labelled): error types follow the intent of ToolTalk's comment, "
                          "per turn; the tools check argument types and use a reset code "
                          "once.")
    embedder: str = option("minilm", "Text similarity for free-text arguments: minilm "
                           "(numpy, no torch) | minilm-st (sentence-transformers) | "
                           "sent2vec-distilbert[:DIR] (the reference's DistilBERT, numpy; "
                           "weights from DIR, $TOOLSCORE_DISTILBERT_DIR or a pinned download) "
                           "| hashing.")
    max_calls_per_turn: int | None = option(
        None, "Stop a turn after this many tool calls (default: a safety cap of 100, "
        "reported when hit, as ToolTalk's runner has no limit; strict mode 10).")
    plugins: list[str] = option(list, "Installed plugin sets to run over instead of the "
                                "benchmark's own (data from --data, in ToolTalk's format).",
                                runs_code="imports the installed plugin sets it names")
    mcp_server: str | None = option(None, "Take the tools from this MCP server (a command "
                                    "line, or an http(s) URL) instead of the benchmark's own; "
                                    "conversations from --data, in ToolTalk's format.",
                                    runs_code="starts this command as an MCP server (or "
                                              "connects to this URL)")
    max_tokens: int | None = option(
        None, "Token limit of each model reply (default: none sent, as ToolTalk's runner; "
        "strict mode 512). Set, the run is labelled as deviating from the reference.")
    seed: int | None = option(
        None, "Sampling seed sent to the model (default: none sent, as ToolTalk's runner; "
        "strict mode 0). Set, the run is labelled as deviating from the reference.")
    call_api: CallApi = call_api_option(
        "ToolTalk's runner", "One call per reply either way; each turn records the shape.")
    protocol: Protocol = option(
        "reference", "reference: toolscore drives the model turn by turn from the ground truth "
        "(the paper's protocol) | free-running: an agent (--model agent-http:URL) runs its "
        "own loop over the tools served over MCP; labelled, not comparable.",
        runs_code="serves the tools over MCP to the agent the run names (--model "
                  "agent-http:URL), which acts on them", runs_code_when="run")


class ToolSources:
    """How a ToolTalk-format benchmark gets its tools and conversations (mixed into the
    benchmark class, which defines ``build``), and the variants of that class: the same
    benchmark over other data and tools."""

    Options: ClassVar[type]
    dataset: ClassVar[str | None]
    # a variant's own conversations and tools (see :meth:`variant`); None: ToolTalk's
    own_data: ClassVar[Path | None] = None
    own_plugins: ClassVar[list[Any] | None] = None

    @classmethod
    def variant(cls, name: str, description: str, *, options: type | None = None,
                data: Path | None = None, plugins: list[Any] | None = None,
                default_model: str | None = None,
                reference_requests: bool = True) -> type[Any]:
        """A benchmark registered under ``name`` that is this class over other defaults
        (``options``, a subclass of its ``Options``), its own conversations (``data``, in
        ToolTalk's layout; ``--data`` with ``--plugins``/``--mcp-server``) and its own tools
        (``plugins``): every option, protocol and scorer are this class's, nothing copied.
        ``reference_requests=False``: its prompt, documents and sampling are toolscore's."""
        attrs = {"name": name, "description": description, "__doc__": description,
                 "Options": options or cls.Options, "dataset": None if data else cls.dataset,
                 "own_data": data, "own_plugins": plugins, "default_model": default_model,
                 "reference_requests": reference_requests,
                 "__module__": _caller_module()}
        return type(_class_name(name), (cls,), attrs)

    @classmethod
    def runs_code(cls, options: dict[str, Any]) -> dict[str, str]:
        """As declared, except that a plugin set of toolscore's own imports no foreign code."""
        from toolscore.benchmarks.trust import plugin_origins

        found = super().runs_code(options)  # type: ignore[misc]
        if "plugins" in found and not plugin_origins(options.get("plugins") or []):
            del found["plugins"]
        return found

    @classmethod
    def create(cls, data_dir: Path | None, options: Any) -> Any:
        return cls.build(data_dir, options, cls.tool_sources(options))

    @classmethod
    def tool_sources(cls, options: Any) -> dict[str, Any]:
        """The tools to run over (``plugins``, ``remote``): those the options name (plugin
        sets are imported, the MCP server is started and listed), else the benchmark's own."""
        kwargs: dict[str, Any] = {}
        if options.plugins:
            from toolscore.env.registry import load_plugins

            kwargs["plugins"] = [p for name in options.plugins for p in load_plugins(name)]
        if options.mcp_server:
            from toolscore.env.mcp_remote import RemoteTools

            kwargs["remote"] = RemoteTools.connect(options.mcp_server)
            kwargs["plugins"] = [kwargs["remote"].plugin]
        return kwargs

    @classmethod
    def create_stored(cls, data_dir: Path | None, options: Any,
                      stored: StoredRun) -> Any:
        """A stored run, without acting on its withheld options: an MCP server's tools come
        from the listing the run recorded (all scoring needs: names and which are actions);
        a foreign plugin set is not imported (a report shows its tools as unknown; scoring
        needs the plugins' own matching rules, so it is refused); the free-running protocol
        acts only when samples run, which the runner refuses for such a benchmark."""
        withheld = stored.withheld
        if not withheld:
            return cls.create(data_dir, options)
        if "plugins" in withheld and stored.exact:
            raise stored.refusal("plugins")
        defaults = {f.name: _default(f) for f in fields(options) if f.name in withheld}
        sources = cls.tool_sources(replace(options, **defaults))
        if "plugins" in withheld:
            sources["plugins"] = []
        if "mcp_server" in withheld:
            from toolscore.env.mcp_remote import RemoteTools

            described = stored.benchmark_config.get("mcp_server")
            if stored.exact and not (isinstance(described, dict) and "listing" in described):
                raise stored.refusal("mcp_server", doing="scoring this run, whose run.json "
                                     "does not record the server's tool listing,")
            remote = RemoteTools.from_record(options.mcp_server, described, exact=stored.exact)
            sources.update(remote=remote, plugins=[remote.plugin])
        bench = cls.build(data_dir, options, sources)
        bench.withheld = dict(withheld)
        return bench

    @classmethod
    def build(cls, data_dir: Path | None, options: Any, sources: dict[str, Any]) -> Any:
        raise NotImplementedError


def _default(f: Field[Any]) -> Any:
    if f.default is MISSING and f.default_factory is not MISSING:
        return f.default_factory()
    return f.default


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("_", "-").split("-")) + \
        "Benchmark"


def _caller_module() -> str:
    """The module that declares a variant (where its class is said to live)."""
    return str(sys._getframe(2).f_globals.get("__name__", __name__))
