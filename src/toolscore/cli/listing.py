"""``toolscore benchmarks | models | plugins | data | schema``: what is installed and where."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from toolscore.cli.common import UserErrors, emit_json, err, fail, stdout


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(escape(str(x)) for x in r))
    return table


@click.command("benchmarks")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def benchmarks_command(json_out: bool) -> None:
    """List installed benchmarks (toolscore's own and those of installed packages)."""
    from toolscore.benchmarks.registry import list_benchmarks
    from toolscore.entrypoints import BENCHMARKS

    found = list_benchmarks()
    where = BENCHMARKS.listing()
    if json_out:
        emit_json({"benchmarks": [{"name": n, "description": d, "source": where.get(n, "")}
                                  for n, d in found.items()]})
        return
    stdout().print(_table("benchmarks (toolscore run NAME --help)",
                          ["name", "description", "source"],
                          [[n, d, where.get(n, "")] for n, d in found.items()]))


@click.command("models")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--check", "check", default=None, metavar="local/NAME",
              help="Load this embedded model (local/smollm2, or local/PATH.gguf for a GGUF "
                   "file) in a child process exactly as a run does, "
                   "generate a few tokens, and say in one line whether it works here (exit 0) "
                   "or what crashed and what to do (exit 1).")
def models_command(json_out: bool, check: str | None) -> None:
    """List model providers and whether they are usable here."""
    from toolscore.models.providers import list_models

    if check is not None:
        _check_model(check)
        return

    rows = list_models()
    if json_out:
        emit_json({"models": rows})
        return
    cols = ["provider", "example", "usable", "requirements"]
    stdout().print(_table("model providers", cols, [[r.get(c, "") for c in cols] for r in rows]))


def _check_model(name: str) -> None:
    from toolscore.models.local.model import check

    provider, _, model = name.partition("/")
    if provider != "local" or not model:
        fail(f"--check {name}: only embedded models (local/NAME) can be checked offline")
    with UserErrors():
        ok, line = check(model=model)
    (stdout() if ok else err).print(line, highlight=False, soft_wrap=True, markup=False)
    if not ok:
        raise SystemExit(1)


@click.command("plugins")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def plugins_command(json_out: bool) -> None:
    """List installed plugin sets (tools and their databases), usable with --plugins."""
    from toolscore.env.registry import available_plugin_sets

    found = available_plugin_sets()
    if json_out:
        emit_json({"plugins": found})
        return
    stdout().print(_table("plugin sets", ["name", "source"], [[n, s] for n, s in found.items()]))


@click.command("data")
@click.argument("name")
@click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
              help="Dataset folder.")
@click.option("--download/--no-download", default=True, help="Download if not found.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def data_command(name: str, data_dir: Path | None, download: bool, json_out: bool) -> None:
    """Find (or download) a benchmark's released data and print where it is."""
    from toolscore.benchmarks.datasets import dataset_source
    from toolscore.data import find_dataset

    with UserErrors():
        path = find_dataset(dataset_source(name), data_dir, download=download)
    if json_out:
        emit_json({"dataset": name, "path": str(path)})
    else:
        stdout().print(f"{name}: {path}", highlight=False, soft_wrap=True)


@click.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of a run directory's files (run.json, samples.jsonl)."""
    from toolscore.records import json_schema

    emit_json(json_schema())
