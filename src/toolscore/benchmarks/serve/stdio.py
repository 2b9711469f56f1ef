"""One episode over stdio: what a desktop MCP client starts as a subprocess.

A desktop client (or any agent that launches its tools as a command) talks to exactly one
world per process, so the process serves one episode, opened at start and ended (its record
written) when the client closes the connection. There is no control API: the turn counter
stays on the first assistant turn (see :mod:`toolscore.benchmarks.serve.episodes`).
"""

from __future__ import annotations

from typing import Any

from toolscore.benchmarks.serve.episodes import Episode, Episodes
from toolscore.benchmarks.serve.mcp_tools import build_server
from toolscore.records import SampleRecord


def episode_server(episodes: Episodes, sample_id: str | None = None) -> tuple[Any, Episode]:
    """An MCP server bound to one new episode (also what tests drive in-process)."""
    episode = episodes.create(sample_id)
    return build_server(episodes.world, lambda ctx: episode), episode


async def serve_stdio(episodes: Episodes, sample_id: str | None = None) -> SampleRecord:
    """Serve one episode on stdin/stdout until the client disconnects; then end it."""
    from mcp.server.stdio import stdio_server

    server, episode = episode_server(episodes, sample_id)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        record = episodes.end(episode.id)
    return record
