"""The ``toolscore`` command: parse, call the library, print. No evaluation logic lives here."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from toolscore.data import DataNotFound
from toolscore.runs.store import RunStoreError

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Evaluate tool-calling assistants (ToolTalk, demo, ...).")
err = Console(stderr=True)
# Mistakes in what the user asked for: one line on stderr and exit code 2, no traceback.
USER_ERRORS = (ValueError, FileNotFoundError, LookupError, DataNotFound, RunStoreError)


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _emit_json(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def _default_run_dir(benchmark: str, model: str) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{benchmark}-{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}-{stamp}"


def _benchmark_options(split: str, tools: str, strict: bool, embedder: str,
                       max_calls_per_turn: int | None = None) -> dict[str, Any]:
    return {"split": split, "tools_mode": tools, "strict": strict, "embedder": embedder,
            "max_calls_per_turn": max_calls_per_turn}


@app.command()
def run(
    benchmark: str = typer.Argument(..., help="Benchmark name: demo, tooltalk, autode."),
    model: str = typer.Option("local/smollm2", "--model", "-m",
                              help="provider/model, e.g. openai/gpt-4o, local/smollm2, oracle."),
    split: str = typer.Option("all", help="easy | hard | all (ToolTalk)."),
    tools: str = typer.Option("all", help="Tools offered: all | exact | suite."),
    strict: bool = typer.Option(False, help="Fix the reference scorer's known defects."),
    embedder: str = typer.Option("minilm", help="Text-similarity embedder: minilm | hashing."),
    limit: int | None = typer.Option(None, help="Run only the first N samples."),
    max_calls_per_turn: int | None = typer.Option(
        None, "--max-calls-per-turn",
        help="Stop a turn after this many tool calls (default: 30, strict 10, demo 4)."),
    epochs: int = typer.Option(1, help="Run each sample this many times."),
    max_concurrency: int = typer.Option(8, "--max-concurrency", help="Samples in flight."),
    out: Path | None = typer.Option(None, help="Run directory (default runs/<name>-<time>)."),
    resume: Path | None = typer.Option(None, help="Resume this run directory."),
    data: Path | None = typer.Option(None, "--data", help="Dataset folder."),
    download: bool = typer.Option(True, help="Download the dataset if it is not found."),
    cache: Path | None = typer.Option(None, help="Response cache file (SQLite)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not cache model responses."),
    base_url: str | None = typer.Option(None, "--base-url",
                                           help="OpenAI-compatible endpoint (openai/...)."),
    timeout: float = typer.Option(120.0, help="Seconds per model call before retrying."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Run BENCHMARK with a model and write a run directory."""
    from toolscore.runs.session import RunRequest, start_run

    request = RunRequest(
        benchmark=benchmark, model=model, data=data, epochs=epochs, limit=limit,
        max_concurrency=max_concurrency, cache=None if no_cache else (cache or "default"),
        base_url=base_url, timeout=timeout, progress=not json_out and sys.stderr.isatty(),
        options=_benchmark_options(split, tools, strict, embedder, max_calls_per_turn))
    try:
        if not download and resume is None:
            from toolscore.data import SOURCES, find_dataset

            if benchmark in SOURCES:
                request.data = find_dataset(benchmark, data, download=False)
        if resume is not None:
            result = start_run(request, resume, resume=True)
        else:
            result = start_run(request, out or _default_run_dir(benchmark, model))
    except USER_ERRORS as e:
        _fail(str(e))
        return
    _print_result(result, json_out)


def _print_result(result: dict[str, Any], json_out: bool) -> None:
    if json_out:
        _emit_json(result)
        return
    from toolscore.report.tables import print_run_summary

    console = Console()
    print_run_summary(console, result["config"], result["metrics"], result.get("summary"))
    console.print(f"run directory: {result['run_dir']}")


@app.command()
def score(
    target: str = typer.Argument(..., help="A run directory, or a benchmark name with "
                                           "--predictions."),
    predictions: Path | None = typer.Option(None, help="ToolTalk-format prediction folder."),
    strict: bool | None = typer.Option(None, "--strict/--reference",
                                          help="Override the run's scoring mode."),
    embedder: str | None = typer.Option(None, help="Override the run's embedder."),
    out: Path | None = typer.Option(None, help="With --predictions: write scored files."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Recompute scores from stored transcripts (no model calls)."""
    from toolscore.runs.session import rescore_predictions, rescore_run

    try:
        if predictions is not None:
            result = rescore_predictions(target, predictions, strict=bool(strict),
                                         embedder=embedder or "minilm", out=out)
        else:
            result = rescore_run(Path(target), strict=strict, embedder=embedder)
    except USER_ERRORS as e:
        _fail(str(e))
        return
    _print_result(result, json_out)


@app.command()
def models(json_out: bool = typer.Option(False, "--json")) -> None:
    """List model providers and whether they are usable here."""
    from toolscore.models import list_models

    rows = list_models()
    if json_out:
        _emit_json({"models": rows})
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="model providers")
    for col in ("provider", "example", "installed", "requirements"):
        table.add_column(col)
    for r in rows:
        table.add_row(*(escape(str(r.get(c, ""))) for c in ("provider", "example", "installed",
                                                            "requirements")))
    Console().print(table)


@app.command()
def data(
    name: str = typer.Argument(..., help="Dataset name, e.g. tooltalk."),
    data_dir: Path | None = typer.Option(None, "--data", help="Dataset folder."),
    download: bool = typer.Option(True, help="Download from the source if not found."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Find (or download) a benchmark's released data and print where it is."""
    from toolscore.data import DataNotFound, find_dataset

    try:
        path = find_dataset(name, data_dir, download=download)
    except DataNotFound as e:
        _fail(str(e))
        return
    if json_out:
        _emit_json({"dataset": name, "path": str(path)})
    else:
        Console().print(f"{name}: {path}")


__import__("toolscore.cli_report", fromlist=["register"]).register(app)  # compare, report, export
__import__("toolscore.cli_autode", fromlist=["register"]).register(app)  # autode, agree
__import__("toolscore.cli_tooleval", fromlist=["register"]).register(app)  # tooleval
__import__("toolscore.cli_judges", fromlist=["register"]).register(app)  # judge-agreement


def main() -> None:
    app()


if __name__ == "__main__":
    main()
