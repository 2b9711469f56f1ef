"""``toolscore score``: scores recomputed from stored outputs, or another tool's output files
scored by a benchmark (no model calls)."""

from __future__ import annotations

from pathlib import Path

import click

from toolscore.cli.common import UserErrors, emit_json, print_run, stdout, task_options


@click.command("score")
@click.argument("target")
@click.option("--predictions", type=click.Path(path_type=Path), default=None,
              help="Files written by the method's own code (TARGET is then the benchmark).")
@click.option("-T", "--option", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Score under another value of a benchmark option (e.g. -T strict=true); "
                   "the run's own scores are then left as they are.")
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="Dataset folder (with --predictions).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="With --predictions: write the scored files here.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--allow-run-commands", is_flag=True,
              help="Let the run directory's options start what they name (an MCP server "
                   "command, a plugin set) if scoring needs it; without it, the run's "
                   "recorded tools are used, or repeat the option with -T.")
def score_command(target: str, predictions: Path | None, overrides: tuple[str, ...],
                  data: Path | None, out: Path | None, json_out: bool,
                  allow_run_commands: bool) -> None:
    """Recompute scores from stored outputs (no model calls): a run directory, or with
    --predictions, another tool's output files scored by benchmark TARGET."""
    from toolscore.runs.api import score, score_files

    with UserErrors():
        options = task_options(overrides)
    with UserErrors():
        if predictions is not None:
            doc = score_files(target, predictions, data=data, out=out, **options)
            if "metrics" in doc and not json_out:
                print_run(doc, False)
                return
            # one result per scored file (AutoDE's recorded runs: its Table 1) as a table
            from toolscore.report.tables import print_file_scores

            if json_out or not print_file_scores(stdout(), doc):
                emit_json(doc)
            return
        run = score(Path(target), allow_run_commands=allow_run_commands, **options)
        doc = run.to_dict()
        if options:
            # The header and --json say how these scores were computed: the run's options
            # with the overrides in, as the benchmark read them (-T strict=true is True).
            from toolscore.benchmarks.base import option_fields, options_to_json, parse_options
            from toolscore.benchmarks.registry import benchmark_class

            cls = benchmark_class(run.config.benchmark)
            stored = dict(run.config.options)
            known = {f.name for f in option_fields(cls.Options)}
            used = options_to_json(parse_options(
                cls.Options, {k: v for k, v in {**stored, **options}.items() if k in known},
                f"benchmark {cls.name!r}"))
            doc["config"]["options"] = {**stored, **{k: used[k] for k in options if k in used}}
    print_run(doc, json_out)
