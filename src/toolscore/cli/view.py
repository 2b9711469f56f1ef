"""``toolscore view``: serve the runs under a folder to a browser on this machine."""

from __future__ import annotations

from pathlib import Path

import click

from toolscore.cli.common import UserErrors, fail, runs_root


@click.command("view")
@click.argument("folder", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--port", type=click.IntRange(min=0, max=65535), default=7878,
              show_default=True,
              help="Port to listen on (a free one when it is taken; 0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on: 127.0.0.1 or localhost unless --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow another --host: anyone who can reach it reads every transcript.")
def view_command(folder: Path | None, port: int, host: str, allow_remote: bool) -> None:
    """Browse runs in a local web page: the runs under FOLDER (default $TOOLSCORE_OUT or
    runs), filtered and sorted, each with its report, followed live while it runs.

    Serves until Ctrl-C. The first line printed is the address to open.
    """
    from toolscore.report.viewer import make_server

    with UserErrors():
        root = folder if folder is not None else runs_root()
        if not root.is_dir():
            fail(f"{root}: no such folder (give the folder that holds run directories)")
        server = make_server(str(root), host, port, allow_remote=allow_remote)
    click.echo(f"toolscore view: {server.url} (runs under {root}; Ctrl-C to stop)", err=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("toolscore view: stopped")
    finally:
        server.server_close()
