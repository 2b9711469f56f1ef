"""``toolscore mcp serve BENCHMARK``: a benchmark's tool world served over MCP, so an agent that
runs its own loop (or a person at a desktop MCP client) can be evaluated on it. Parse, call the
library, print; stdout stays silent under ``--transport stdio`` (it carries the protocol).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolscore.cli.common import EXIT_INCOMPLETE, UserErrors, err, fail

if TYPE_CHECKING:
    from toolscore.benchmarks.serve.episodes import Episodes

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
              help="Bearer token every MCP request must carry: give it to the agents "
                   "[env TOOLSCORE_MCP_TOKEN].")
@click.option("--control-token", envvar="TOOLSCORE_MCP_CONTROL_TOKEN", default=None,
              help="Bearer token of the control API (POST /episodes ...), never given to an "
                   "agent; default: a new one, printed at start [env "
                   "TOOLSCORE_MCP_CONTROL_TOKEN].")
@click.option("--allow-host", "allow_hosts", multiple=True,
              help="Another Host header name to answer to (NAME or NAME:PORT; repeat), e.g. "
                   "a reverse proxy's. Default: only the names the server is bound under.")
@click.option("--allow-origin", "allow_origins", multiple=True,
              help="A browser origin (scheme://host[:port]) whose requests are not refused "
                   "(repeat). Default: none.")
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
                  control_token: str | None, allow_hosts: tuple[str, ...],
                  allow_origins: tuple[str, ...], out: Path | None, tools: str | None,
                  strict: bool, embedder: str | None, agent: str) -> None:
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
    from toolscore.benchmarks.serve.mcp_tools import MISSING_SDK, MissingSDK, require_sdk

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
        from toolscore.benchmarks.serve.episodes import Episodes
        from toolscore.benchmarks.serve.http import check_host
        from toolscore.benchmarks.serve.world import ServedWorld

        if transport == "http":
            check_host(host, token, control_token)
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
        _say_recovered(episodes)
        if transport == "stdio":
            import anyio

            from toolscore.benchmarks.serve.stdio import serve_stdio

            if conversation is None and episodes.needs_conversation:
                fail(f"--out {out}: its episodes are scored against a conversation: name one "
                     "with --conversation")
            anyio.run(serve_stdio, episodes)
            return
        import secrets

        from toolscore.benchmarks.serve.http import serve_http

        if not control_token:
            control_token = secrets.token_urlsafe(24)
            shown = f"control token (new): {control_token}"
        else:
            shown = "control token: the one given"
        err.print(f"toolscore: serving {benchmark} on http://{host}:{port}; control API "
                  f"(POST /episodes ...) with 'Authorization: Bearer <control token>', "
                  f"{shown}; each episode's agent gets its own MCP address (mcp_url)",
                  highlight=False, soft_wrap=True)
        with UserErrors():
            try:
                serve_http(episodes, host=host, port=port, token=token,
                           control_token=control_token, hosts=allow_hosts,
                           origins=allow_origins)
            except KeyboardInterrupt:  # the open episodes are recorded by now
                err.print(f"toolscore: stopped (Ctrl-C); episodes still open were recorded as "
                          f"unfinished in {out}", highlight=False, soft_wrap=True, markup=False)
                raise SystemExit(130) from None
    finally:
        episodes.__exit__(None, None, None)


@mcp_app.command("recover")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="The benchmark's data folder, when it is not where the server found it.")
def recover_command(out: Path, data: Path | None) -> None:
    """Record the episodes a stopped 'toolscore mcp serve --out OUT' left open (killed before
    it could end them), from OUT's journal: each is scored as it stood, marked unfinished.
    Starting the server again with the same --out does the same."""
    from toolscore.benchmarks.serve.mcp_tools import MISSING_SDK, MissingSDK, require_sdk

    try:
        require_sdk()
    except MissingSDK:
        fail(MISSING_SDK)
    with UserErrors():
        from toolscore.benchmarks.serve.episodes import recover_directory

        episodes = recover_directory(out, data)
    _say_recovered(episodes, quiet=False)
    if episodes.recovery_failures:
        raise SystemExit(EXIT_INCOMPLETE)


def _say_recovered(episodes: Episodes, quiet: bool = True) -> None:
    """What the recovery of a run directory's open episodes did (stderr: under stdio, stdout
    carries the protocol)."""
    if episodes.store is None:
        return
    if episodes.recovered or not quiet:
        err.print(f"toolscore: {len(episodes.recovered)} unfinished episode(s) recorded from "
                  f"the journal of {episodes.store.path}", highlight=False, soft_wrap=True)
    for failure in episodes.recovery_failures:
        err.print(f"[yellow]warning:[/yellow] {failure}", highlight=False, soft_wrap=True)


COMMANDS = [mcp_app]
