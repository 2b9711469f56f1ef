"""``toolscore mcp serve BENCHMARK``: a benchmark's tool world served over MCP, so an agent that
runs its own loop (or a person at a desktop MCP client) can be evaluated on it. Parse, call the
library, print; stdout stays silent under ``--transport stdio`` (it carries the protocol).
"""

from __future__ import annotations

from pathlib import Path

import click

from toolscore.cli.common import UserErrors, err, fail

mcp_app = click.Group("mcp", help="Serve tool worlds over the Model Context Protocol.")


@mcp_app.command("serve")
@click.argument("benchmark")
@click.option("--conversation", default=None,
              help="Serve this conversation's world (its databases, clock, login and tools).")
@click.option("--plugins", multiple=True,
              help="Installed plugin sets to serve instead of the benchmark's own (repeat).")
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="The benchmark's data folder (default: $TOOLSCORE_DATA, the user cache, "
                   "a download). A desktop MCP client starts this server without your shell's "
                   "environment: give the folder here.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="stdio: one episode for the client that starts this "
              "process; http: episodes created over HTTP (POST /episodes).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="HTTP address (beyond loopback only with --token).")
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP port.")
@click.option("--token", envvar="TOOLSCORE_MCP_TOKEN", default=None,
              help="Bearer token every HTTP request must carry [env TOOLSCORE_MCP_TOKEN].")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Run directory: each ended episode's record and the scores go there.")
@click.option("--tools", type=click.Choice(["all", "exact", "suite"]), default=None,
              help="Tools offered for a conversation (as 'toolscore run tooltalk --tools').")
@click.option("--strict", is_flag=True, default=False,
              help="The benchmark's strict mode (corrected tool documentation, scorer fixes).")
@click.option("--embedder", default=None, help="Text similarity used to score (minilm | "
              "hashing).")
@click.option("--agent", default="mcp-client", show_default=True,
              help="What is being evaluated, as run.json names the model.")
def serve_command(benchmark: str, conversation: str | None, plugins: tuple[str, ...],
                  data: Path | None, transport: str, host: str, port: int, token: str | None,
                  out: Path | None, tools: str | None, strict: bool, embedder: str | None,
                  agent: str) -> None:
    """Serve BENCHMARK's tools over MCP: every call runs in toolscore's simulator, is logged
    with its episode, turn and time, and an ended episode is scored into --out.

    \b
    A desktop client plays the user with, in its mcpServers config (absolute paths: the
    client starts this server from its own folder, with a minimal environment):
      "command": "/path/to/.venv/bin/toolscore",
      "args": ["mcp", "serve", "tooltalk", "--conversation", "AddAlarm-easy",
               "--transport", "stdio", "--data", "/path/to/datasets",
               "--out", "/path/to/runs/me"]
    """
    from toolscore.serve.mcp_tools import MISSING_SDK, MissingSDK, require_sdk

    try:
        require_sdk()
    except MissingSDK:
        fail(MISSING_SDK)
    options: dict[str, object] = {}
    if tools is not None:
        options["tools"] = tools
    if strict:
        options["strict"] = True
    if embedder is not None:
        options["embedder"] = embedder
    from toolscore.data import DataNotFound

    with UserErrors():
        from toolscore.serve.episodes import Episodes
        from toolscore.serve.http import check_host
        from toolscore.serve.world import ServedWorld

        if transport == "http":
            check_host(host, token)
        try:
            world = ServedWorld.create(benchmark, conversation=conversation, plugins=plugins,
                                       data=data, **options)
        except DataNotFound as e:
            if data is not None:
                raise
            # A desktop client starts this server with a minimal environment: the shell's
            # TOOLSCORE_DATA does not reach it, so say where the folder must be given.
            fail(f"{e} An MCP client starts this server without your shell's environment: "
                 "put --data DIR in the server's args.")
        episodes = Episodes(world, out, agent=agent).__enter__()
    try:
        if transport == "stdio":
            import anyio

            from toolscore.serve.stdio import serve_stdio

            anyio.run(serve_stdio, episodes)
            return
        from toolscore.serve.http import serve_http

        err.print(f"toolscore: serving {benchmark} on http://{host}:{port} (create an episode: "
                  f"POST /episodes; its MCP endpoint: /episodes/<id>/mcp)", highlight=False)
        with UserErrors():
            serve_http(episodes, host=host, port=port, token=token)
    finally:
        episodes.__exit__(None, None, None)


COMMANDS = [mcp_app]
