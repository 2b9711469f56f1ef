"""The ``toolscore`` command: parse, call the library, print. No evaluation logic lives here.

One module per command group; :mod:`.common` holds what they share. Command modules import
only the library and :mod:`.common`, never each other. This package imports none of them: a
command's module is imported when that command runs (:mod:`.lazy`), so ``toolscore report``
does not pay for ``toolscore autode``'s imports, and ``toolscore --help`` for none.
"""

from __future__ import annotations

import click

from toolscore.cli.lazy import LazyGroup

# name -> ("module:attribute", the first sentence of its help, as the command list shows it).
# tests/cli/test_lazy.py checks this table against the commands themselves.
COMMANDS: dict[str, tuple[str, str]] = {
    "agree": ("toolscore.cli.autode:agree",
              "Agreement of one evaluation method with another (AutoDE): system-level Pearson "
              "r and ICC3 across assistants, sample-level per assistant, with bootstrap CIs "
              "over cases."),
    "autode": ("toolscore.cli.autode:autode_app", "AutoDE analyses and user-script tools."),
    "benchmarks": ("toolscore.cli.listing:benchmarks_command",
                   "List installed benchmarks (toolscore's own and those of installed "
                   "packages)."),
    "cache": ("toolscore.cli.cache:cache_group",
              "The response cache: what it holds, merge caches from other nodes, prune it."),
    "compare": ("toolscore.cli.report:compare",
                "Paired comparison of two runs: the benchmark's headline metrics and the "
                "per-sample scores, with differences, CIs, tests, flipped samples and "
                "warnings."),
    "data": ("toolscore.cli.listing:data_command",
             "Find (or download) a benchmark's released data and print where it is."),
    "export": ("toolscore.cli.export:export",
               "Write one row per (sample, epoch): id, epoch, split, status, scalar scores, "
               "tokens, time; with --format inspect, the run as an Inspect log (transcripts, "
               "scores, usage); with another installed format, what it writes."),
    "judge": ("toolscore.cli.judge:judge_command",
              "Judge every finished sample of the run in RUN_DIR with a judge kind and print "
              "the judgements' figures."),
    "judge-agreement": ("toolscore.cli.judges:judge_agreement",
                        "Agreement of a judge with human labels (the ACS rows, or any "
                        "labelled set), with intervals."),
    "judges": ("toolscore.cli.judges:judges_command",
               "List judge kinds (toolscore.judges entry points), usable in a judge config's "
               "kind."),
    "leaderboard": ("toolscore.cli.leaderboard:leaderboard_command",
                    "Rank models per benchmark from INPUTS: run directories, folders of runs, "
                    "or sweep plans (pending units show as missing cells)."),
    "mcp": ("toolscore.cli.mcp:mcp_app", "Serve tool worlds over the Model Context Protocol."),
    "models": ("toolscore.cli.listing:models_command",
               "List model providers and whether they are usable here."),
    "plugins": ("toolscore.cli.listing:plugins_command",
                "List installed plugin sets (tools and their databases), usable with "
                "--plugins."),
    "report": ("toolscore.cli.report:report",
               "Summarise a run: headline metrics per split, repeats (pass@k, pass^k, noise), "
               "tokens and cost per model role."),
    "run": ("toolscore.cli.run:run_group",
            "Run a benchmark with a model and write a run directory."),
    "schema": ("toolscore.cli.listing:schema_command",
               "Print the JSON Schema of a run directory's files (run.json, samples.jsonl)."),
    "score": ("toolscore.cli.score:score_command",
              "Recompute scores from stored outputs (no model calls): a run directory, or "
              "with --predictions, another tool's output files scored by benchmark TARGET."),
    "sweep": ("toolscore.cli.sweep:sweep_group",
              "Run a matrix of models x benchmarks x settings x epochs (locally or on Ray)."),
    "tooleval": ("toolscore.cli.tooleval:tooleval_app",
                 "ToolEval: pass rate and win rate with an LLM judge."),
    "tooltalk": ("toolscore.cli.tooltalk:tooltalk_app",
                 "ToolTalk tools: check the simulator against ToolTalk's own runs."),
    "view": ("toolscore.cli.view:view_command",
             "Browse runs in a local web page: the runs under FOLDER (default $TOOLSCORE_OUT "
             "or runs), filtered and sorted, each with its report, followed live while it "
             "runs."),
}


def _print_version(ctx: click.Context, value: bool) -> None:
    """``--version``: toolscore.__version__, the one run.json records (read only when asked)."""
    if not value or ctx.resilient_parsing:
        return
    from toolscore import __version__

    click.echo(f"{ctx.find_root().info_name}, version {__version__}")
    ctx.exit()


@click.group(cls=LazyGroup, lazy=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, _param, value: _print_version(ctx, value),
              help="Show the version and exit.")
@click.option("--debug", is_flag=True,
              help="Also print the Python traceback behind a one-line error or a stopped run.")
@click.option("--verbose", "-v", is_flag=True,
              help="Say which .env file was read (the nearest from the working directory up to "
                   "the project's root; it never overrides a variable already set).")
def app(debug: bool, verbose: bool) -> None:
    """Evaluate tool-calling assistants and agents: ToolTalk, AutoDE, ToolEval, ACS and your
    own benchmarks, with numbers you can trust and reproduce."""
    from toolscore.cli import common

    common.DEBUG = debug
    with common.UserErrors():
        said = common.load_dotenv()  # before the command's options: they may default from it
    if verbose:
        common.err.print(said, highlight=False, soft_wrap=True, markup=False)
    common.hide_secrets_in_argv()


def main() -> None:
    app(prog_name="toolscore")
