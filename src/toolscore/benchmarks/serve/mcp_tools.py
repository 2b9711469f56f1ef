"""toolscore tools as MCP tools, and the MCP server that runs them in an episode's world.

The low-level server of the official SDK is used (not its decorator layer) so that each tool's
JSON schema goes out exactly as the model under toolscore's own protocol sees it, and so that
arguments reach the simulator unvalidated: a wrong call (an unknown or missing argument, a bad
date) must get the simulator's own exception text, as it does in-process, not the SDK's.

Mapping: name and description as they are; ``inputSchema`` is the documented schema, hidden
parameters (ToolTalk's ``session_token``) left out, since the environment injects them server
side; ``readOnlyHint`` for a tool without side effects and ``destructiveHint`` for an action.
A call's response is its JSON text; an exception is a tool error (``isError``) whose text is
the simulator's exact exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolscore.benchmarks.serve.episodes import EpisodeError
from toolscore.benchmarks.serve.world import ServedWorld
from toolscore.env.tool import CallRecord, Tool
from toolscore.types import ToolSpec

MISSING_SDK = "serving over MCP needs the mcp package: pip install 'toolscore[mcp]'"


class MissingSDK(ImportError):
    """The optional ``mcp`` package is not installed (one line: how to install it)."""


def require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingSDK(MISSING_SDK) from None


def listed_tool(tool: Tool, spec: ToolSpec) -> Any:
    """The MCP ``Tool`` listed for a toolscore tool (``spec``: the documentation shown)."""
    import mcp_types as types

    schema = {k: v for k, v in spec.parameters.items()}
    hidden = set(tool.hidden)
    if hidden and isinstance(schema.get("properties"), dict):
        schema["properties"] = {k: v for k, v in schema["properties"].items()
                                if k not in hidden}
        if "required" in schema:
            schema["required"] = [r for r in schema["required"] if r not in hidden]
    return types.Tool(name=spec.name, description=spec.description, input_schema=schema,
                      annotations=types.ToolAnnotations(read_only_hint=not tool.action,
                                                        destructive_hint=tool.action))


def call_result(record: CallRecord) -> Any:
    """An executed call as an MCP ``CallToolResult``."""
    import mcp_types as types

    if record.exception is not None:
        return types.CallToolResult(content=[types.TextContent(type="text",
                                                               text=record.exception)],
                                    is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text",
                                                           text=json.dumps(record.response))])


# Finds the episode a request is for: the only one (stdio, in-process) or the one in the URL.
EpisodeOf = Callable[[Any], Any]


def build_server(world: ServedWorld, episode_of: EpisodeOf, name: str = "toolscore") -> Any:
    """A low-level MCP server whose tools run in the episode ``episode_of(ctx)`` returns."""
    require_sdk()
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        episode = episode_of(ctx)
        specs = episode.world.specs
        return types.ListToolsResult(tools=[listed_tool(t, specs[t.name])
                                            for t in episode.world.tools])

    async def call_tool(ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return call_result(episode_of(ctx).call(params.name, dict(params.arguments or {})))
        except EpisodeError as e:  # ended or unknown: the protocol's error, not the tool's
            raise MCPError(types.INVALID_REQUEST, str(e)) from None

    server = Server(name, version=_version(), instructions=_instructions(world),
                    on_list_tools=list_tools, on_call_tool=call_tool,
                    get_tool_input_schema=world.input_schema)
    if not tracing():
        server.middleware = [m for m in server.middleware
                             if type(m).__name__ != "OpenTelemetryMiddleware"]
    return server


def tracing() -> bool:
    """Whether OpenTelemetry spans would go anywhere (a tracer provider is installed).

    The SDK wraps every request in a span by default; with no provider installed each one is
    a no-op that still costs about a tenth of the served app's time per tool call (profiled),
    so the span layer is kept only when something collects it. Decided when the server is
    built: install the provider before serving.
    """
    try:
        from opentelemetry import trace
    except ImportError:
        return False
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _version() -> str:
    from toolscore import __version__

    return __version__


def _instructions(world: ServedWorld) -> str | None:
    if world.default_sample is None:
        return None
    return world.open(world.default_sample).system_prompt or None

