"""``toolscore tooltalk replay DIR``: check our simulator against runs of ToolTalk's own runner.

A prediction folder written by ToolTalk records what its simulator answered to every call a model
made; replaying those calls through ours shows, call by call, whether a model under test would
read the same thing here. Parse, call the library, print.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from toolscore.cli.common import UserErrors, emit_json

tooltalk_app = click.Group("tooltalk", help="ToolTalk tools: check the simulator against "
                                            "ToolTalk's own runs.")


def _short(outcome: dict[str, Any], width: int = 80) -> str:
    """A recorded or replayed outcome in one cell: the exception, else the response's JSON."""
    if outcome.get("exception") is not None:
        text = f"exception: {outcome['exception']}"
    else:
        text = json.dumps(outcome.get("response"), ensure_ascii=False, sort_keys=True)
    return text if len(text) <= width else text[:width - 1] + "…"


def _dataset(data_dir: Path | None) -> Path:
    """The dataset the recorded calls are replayed against.

    A prediction folder holds no databases, so a replay needs the dataset it was run on. A
    folder found locally is used; nothing is downloaded behind the user's back, and a missing
    dataset is one line that names ``--data`` first, then the other ways to provide it.
    """
    from toolscore.benchmarks.tooltalk.dataset import SOURCE
    from toolscore.data import DataNotFound, find_dataset

    if data_dir is not None:
        return find_dataset(SOURCE, data_dir)
    try:
        return find_dataset(SOURCE, download=False)
    except DataNotFound:
        raise DataNotFound(
            "no ToolTalk dataset to replay against: pass --data DIR with the ToolTalk dataset "
            "folder (the one holding databases/); or download it once with `toolscore data "
            "tooltalk` (into the user cache), or set TOOLSCORE_DATA to a folder holding "
            "tooltalk/") from None


@tooltalk_app.command("replay")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
              help="ToolTalk dataset folder (holds databases/); default: $TOOLSCORE_DATA/"
                   "tooltalk or the user cache (never downloaded here).")
@click.option("--show", "show", type=int, default=20, show_default=True,
              help="Differences listed in the table (--json lists all).")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def replay_command(directory: Path, data_dir: Path | None, show: int, json_out: bool) -> None:
    """Replay a folder of ToolTalk prediction files (and its sub-folders, e.g. easy/ and hard/)
    through the simulator; report how many calls give back exactly the recorded response and
    exception, and which do not.

    Each turn starts as ToolTalk starts it: reset, the earlier turns' ground truth replayed,
    then the turn's recorded predictions executed in order.
    """
    from toolscore.benchmarks.tooltalk.replay import replay_directory

    with UserErrors():
        root = _dataset(data_dir)
        report = replay_directory(directory, root)
    if json_out:
        emit_json(report.to_dict())
        return
    console = Console()
    share = f" ({report.identical / report.calls:.1%})" if report.calls else ""
    console.print(f"{report.calls} calls replayed from {report.files} files: "
                  f"{report.identical} identical{share}, {len(report.differences)} different",
                  highlight=False)
    if report.skipped:
        console.print(f"skipped (not conversations): {', '.join(report.skipped)}",
                      highlight=False)
    if not report.differences or show <= 0:
        return
    table = Table(title=f"first {min(show, len(report.differences))} differences",
                  title_justify="left")
    for column in ("file", "turn", "call", "api", "recorded", "replayed"):
        table.add_column(column, overflow="fold")
    for d in report.differences[:show]:
        table.add_row(d.file, str(d.turn), str(d.index), d.api, _short(d.expected),
                      _short(d.got))
    console.print(table)


COMMANDS = [tooltalk_app]
