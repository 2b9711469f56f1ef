"""``toolscore judge RUN_DIR --judge KIND``: apply any installed judge kind to an existing run
(tooleval-pass to a ToolTalk, demo or AutoDE run's transcripts; acs-verify or acs-llm to an ACS
run's rows); a kind that cannot judge the run says why in one line.

The judgements are a run of their own beside the judged one, in
``RUN_DIR/judgements/<name>/`` (see :mod:`toolscore.runs.judging`): judging again with the
same settings finishes what is missing from cache, and ``toolscore report`` reads it like any
run. Parse, call, print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolscore.cli.common import (
    UserErrors,
    emit_json,
    exit_if_incomplete,
    progress_wanted,
    stdout,
    task_options,
)

# ToolEval's pass-rate flags, kept as they were: each is the -T option of the same name
ALIASES = ("mode", "votes", "seed", "strict", "temperature")


@click.command("judge")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--judge", "judge", default="tooleval-pass", show_default=True,
              help="Judge kind to apply (any installed one: toolscore judges); "
                   "tooleval-pass: did each transcript solve its task? acs-verify, acs-llm: "
                   "the rows of an ACS run judged again.")
@click.option("--model", "-m", "model", default=None,
              help="The judge's model, provider/model (default: --judge-config's).")
@click.option("--base-url", "base_url", default=None,
              help="OpenAI-compatible endpoint of the judge.")
@click.option("--judge-config", "judge_config", type=click.Path(path_type=Path), default=None,
              help="Judge configuration file (of the --judge kind): its model, template, "
                   "temperature and votes apply, its name names the judgements.")
@click.option("--name", "name", default=None,
              help="Folder under RUN_DIR/judgements/ (default: the judge config's name, else "
                   "the judge's).")
@click.option("--option", "-T", "kind_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the kind's judging benchmark (repeatable), e.g. -T shots=2 "
                   "for acs-llm; see toolscore run BENCHMARK --help.")
@click.option("--mode", "mode", type=click.Choice(["reference", "stable"]), default=None,
              help="tooleval-pass (-T mode=...): reference (default): asked and aggregated as "
                   "ToolEval's code; stable: toolscore's procedure (JSON verdicts, "
                   "StableToolBench score).")
@click.option("--votes", "votes", type=int, default=None,
              help="Judgements per sample (-T votes=N; tooleval-pass default 4).")
@click.option("--seed", "seed", type=int, default=None,
              help="Seed of the coin flips (unsure votes, tied labels) (-T seed=N; default 0).")
@click.option("--strict", "strict", is_flag=True, default=None,
              help="tooleval-pass (-T strict=true): a give-up answer fails (the reference lets "
                   "it pass when the judge calls the task unsolvable).")
@click.option("--temperature", "temperature", type=float, default=None,
              help="Judge sampling temperature (-T temperature=T; tooleval-pass default 0.2 "
                   "in the reference mode, 0.7 in the stable mode).")
@click.option("--max-concurrency", "max_concurrency", type=int, default=8, show_default=True,
              help="Samples judged at once.")
@click.option("--timeout", "timeout", type=float, default=120.0, show_default=True,
              help="Seconds per judge call before retrying.")
@click.option("--cache", "cache", type=click.Path(path_type=Path), default=None,
              help="Response cache file (SQLite; default ~/.cache/toolscore).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not cache judge responses.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def judge_command(run_dir: Path, judge: str, model: str | None, cache: Path | None,
                  no_cache: bool, json_out: bool, kind_options: tuple[str, ...],
                  **options: Any) -> None:
    """Judge every finished sample of the run in RUN_DIR with a judge kind and print the
    judgements' figures."""
    from toolscore.runs.judging import judge_run

    given = {k: options.pop(k) for k in ALIASES}
    options.update({k: v for k, v in given.items() if v not in (None, False)})
    try:
        options.update(task_options(kind_options))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="-T/--option") from None
    with UserErrors():
        run = judge_run(run_dir, judge, model, cache=None if no_cache else cache or "default",
                        progress=progress_wanted(json_out), **options)
    if json_out:
        emit_json(run.to_dict())
    else:
        from toolscore.report.tables import print_run_summary

        console = stdout()
        print_run_summary(console, run.config.to_dict(), run.metrics or {}, run.summary,
                          run_dir=run.path)
        console.print(f"judgements: {run.path}", highlight=False, soft_wrap=True)
    exit_if_incomplete(run, "judgements", "the same command again retries exactly those")


COMMANDS = [judge_command]
