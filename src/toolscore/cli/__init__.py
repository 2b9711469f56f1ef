"""The ``toolscore`` command: parse, call the library, print. No evaluation logic lives here.

One module per command group; :mod:`.common` holds what they share. Command modules import
only the library and :mod:`.common`, never each other.
"""

from __future__ import annotations

import click

from toolscore.cli import (
    autode,
    cache,
    export,
    judge,
    judges,
    leaderboard,
    listing,
    mcp,
    report,
    run,
    sweep,
    tooleval,
    tooltalk,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolscore")
def app() -> None:
    """Evaluate tool-calling assistants and agents: ToolTalk, AutoDE, ToolEval, ACS and your
    own benchmarks, with numbers you can trust and reproduce."""


for _command in (run.run_group, run.score_command, *report.COMMANDS, *export.COMMANDS,
                 *autode.COMMANDS, *tooleval.COMMANDS, *tooltalk.COMMANDS, *judge.COMMANDS,
                 *judges.COMMANDS, *mcp.COMMANDS,
                 listing.benchmarks_command, listing.models_command, listing.plugins_command,
                 listing.data_command, listing.schema_command):
    app.add_command(_command)
app.add_command(sweep.sweep_group)
app.add_command(cache.cache_group)
app.add_command(leaderboard.leaderboard_command)


def main() -> None:
    app(prog_name="toolscore")
