"""``toolscore leaderboard``: many finished runs (or a sweep plan) as one ranked table.

Like the rest of the CLI: parse, call the library, print; ``--json`` prints exactly one
document; a user mistake is one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from toolscore.cli.common import UserErrors, emit_json, err, fail
from toolscore.records.paths import check_output_path


def _metrics(values: tuple[str, ...]) -> str | dict[str, str] | None:
    """``--metric M`` for every benchmark, or ``--metric BENCH=M`` (repeatable) per benchmark."""
    if not values:
        return None
    plain = [v for v in values if "=" not in v]
    if plain and len(values) > 1:
        fail("--metric: give one metric for every benchmark, or BENCHMARK=METRIC pairs")
    if plain:
        return plain[0]
    return dict(v.split("=", 1) for v in values)


@click.command("leaderboard")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--metric", "metrics", multiple=True, metavar="M | BENCH=M",
              help="Headline metric to rank by (label or key; default: each benchmark's "
                   "first). BENCH=M chooses per benchmark; repeatable.")
@click.option("--split", default=None, help="Rank on this split of each run (default: all).")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "json"]), default="md",
              show_default=True, help="What is printed on stdout: a Markdown or CSV table, or "
              "one JSON document (the same as --json).")
@click.option("--json", "json_out", is_flag=True,
              help="Print one JSON document instead (--format json).")
@click.option("--html", "html_out", type=click.Path(path_type=Path), default=None,
              help="Also write a self-contained HTML page with sortable columns here.")
@click.option("--html-reports", is_flag=True,
              help="With --html: write each run's report.html if missing, so every cell links.")
@click.option("--prices", "prices_file", type=click.Path(path_type=Path), default=None,
              help="Price file (JSON/YAML, per million tokens) over the pinned price "
                   "table, for the cost column.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level of the paired test against the best model.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap and permutation tests.")
@click.option("--resamples", type=int, default=2000, show_default=True,
              help="Bootstrap and permutation resamples.")
@click.option("--no-index", is_flag=True,
              help="Read every run's files, not the results index a sweep writes beside its "
                   "runs (the table is the same; the index is only faster).")
def leaderboard_command(inputs: tuple[Path, ...], metrics: tuple[str, ...], split: str | None,
                        fmt: str, json_out: bool, html_out: Path | None, html_reports: bool,
                        prices_file: Path | None, alpha: float, seed: int,
                        resamples: int, no_index: bool) -> None:
    """Rank models per benchmark from INPUTS: run directories, folders of runs, or sweep plans
    (pending units show as missing cells). Headline metric with 95% CI, pass^k and noise floor
    (several epochs), tokens and cost, mode, and a mark where a model is not significantly
    worse than the best (paired test on shared samples)."""
    from toolscore.models.prices import price_table
    from toolscore.report.leaderboard.build import build_leaderboard
    from toolscore.report.leaderboard.html import write_leaderboard_html
    from toolscore.report.leaderboard.text import to_csv, to_markdown

    if html_reports and html_out is None:
        fail("--html-reports needs --html FILE")
    if resamples < 1:
        fail(f"--resamples {resamples}: must be at least 1")
    with UserErrors():
        check_output_path(html_out, "--html")
        prices = price_table(prices_file) if prices_file is not None else None
        doc = build_leaderboard(list(inputs), metric=_metrics(metrics), split=split,
                                prices=prices, alpha=alpha, seed=seed, n_resamples=resamples,
                                use_index=not no_index, on_note=_note)
        if html_out is not None:
            page = write_leaderboard_html(doc, html_out, html_reports=html_reports, seed=seed,
                                          prices=prices)
            err.print(f"wrote {page}", highlight=False, markup=False, soft_wrap=True)
    if json_out or fmt == "json":
        emit_json(doc)
    else:
        sys.stdout.write(to_markdown(doc) if fmt == "md" else to_csv(doc))


def _note(text: str) -> None:
    err.print(text, highlight=False, markup=False, soft_wrap=True)


COMMANDS = [leaderboard_command]
