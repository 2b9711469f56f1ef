"""AutoDE's own commands: ``agree`` (agreement between evaluation methods) and the ``autode``
group (``gap`` between two runs, ``generate-scripts`` for new APIs). ``run autode`` and
``score autode --predictions`` are the generic commands. Parse, call the library, print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from toolscore.cli.common import USER_ERRORS, emit_json, fail


def _questions(row: dict[str, Any]) -> str:
    from toolscore.benchmarks.autode.benchmark import questions_line

    return questions_line(row)


def _scripts(data_dir: Path | None) -> Any:
    from toolscore.benchmarks.autode import load_scripts
    from toolscore.benchmarks.autode.dataset import SOURCE
    from toolscore.data import find_dataset

    return load_scripts(find_dataset(SOURCE, data_dir, download=False))


# -- agree -------------------------------------------------------------------------------------
# The AutoDE dataset folder, for the commands that read the released scripts.
DATA_OPTION = click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
                           help="AutoDE dataset folder.")


@click.command("agree")
@click.argument("runs", type=click.Path(path_type=Path), nargs=-1, required=True)
@click.option(
    "--against",
    "against",
    type=click.Path(path_type=Path),
    required=True,
    multiple=True,
    help="Reference runs (e.g. human), one per assistant, in the same order.",
)
@DATA_OPTION
@click.option(
    "--resamples", "resamples", type=int, default=2000, help="Bootstrap resamples (over cases)."
)
@click.option(
    "--confidence",
    "confidence",
    type=float,
    default=0.95,
    help="Confidence level of the intervals.",
)
@click.option("--seed", "seed", type=int, default=0, help="Bootstrap seed.")
@click.option(
    "--sample-pearson",
    "sample_pearson",
    type=click.Choice(["trials", "means"]),
    default="trials",
    show_default=True,
    help="Sample-level Pearson pairing: trials = every (trial, case) F1 against the "
    "reference's case F1 repeated per trial (the reference code's); means = trial means.",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def agree(
    runs: list[Path],
    against: list[Path],
    data_dir: Path | None,
    resamples: int,
    confidence: float,
    seed: int,
    sample_pearson: str,
    json_out: bool,
) -> None:
    """Agreement of one evaluation method with another (AutoDE): system-level Pearson r and
    ICC3 across assistants, sample-level per assistant, with bootstrap CIs over cases."""
    from toolscore.benchmarks.autode.compare import compare, load_case_scores

    try:
        scripts = _scripts(data_dir)
        result = compare(
            [load_case_scores(p, scripts) for p in runs],
            [load_case_scores(p, scripts) for p in against],
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            sample_pearson=sample_pearson,  # type: ignore[arg-type]
        )
    except USER_ERRORS as e:
        fail(str(e))
        return
    if json_out:
        emit_json(result)
        return
    console = Console()
    s = result["system"]

    def ci(row: dict[str, Any], key: str) -> str:
        low, high = row.get(f"{key}_ci", (None, None))
        return "" if low is None else f" [{low:.4f}, {high:.4f}]"

    console.print(
        f"system level ({s['n']} assistants, {result['n_cases']} cases, "
        f"{confidence:.0%} bootstrap CI): Pearson r {s['pearson']:.4f}"
        f"{ci(s, 'pearson')} · ICC3 {s['icc3']:.4f}{ci(s, 'icc3')}"
    )
    table = Table(
        title="sample level: ICC3 over per-case F1 (trial means); Pearson r over "
        + result["sample_pearson_pairing"],
        title_justify="left",
    )
    for col in ("run", "against", "Pearson r", "ICC3"):
        table.add_column(col)
    for row in result["sample"]:
        table.add_row(
            row["method"],
            row["reference"],
            f"{row['pearson']:.4f}{ci(row, 'pearson')}",
            f"{row['icc3']:.4f}{ci(row, 'icc3')}",
        )
    console.print(table)


# -- autode gap / generate-scripts -------------------------------------------------------------
autode_app = click.Group("autode", help="AutoDE analyses and user-script tools.")


def _gold(
    runs: list[Path], data_dir: Path | str | None, scripts: Path | None, apis: Path | None
) -> tuple[Any, Any]:
    """Scripts and API documents: as given, else a run directory's own, else the dataset's."""
    from toolscore.benchmarks.autode import load_api_docs, load_scripts
    from toolscore.benchmarks.autode.dataset import SOURCE
    from toolscore.data import find_dataset
    from toolscore.records import RunStore

    for run in runs:
        if RunStore(run).exists():
            saved = RunStore(run).config()
            scripts = scripts or saved.options.get("scripts")
            apis = apis or saved.options.get("apis")
            data_dir = data_dir or saved.data
            break
    if scripts is None or apis is None:
        root = find_dataset(SOURCE, data_dir, download=False)
    return (
        load_scripts(Path(scripts) if scripts else root),
        load_api_docs(Path(apis) if apis else root),
    )


@autode_app.command("gap")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@DATA_OPTION
@click.option(
    "--scripts",
    "scripts",
    type=click.Path(path_type=Path),
    default=None,
    help="User scripts (JSONL).",
)
@click.option(
    "--apis", "apis", type=click.Path(path_type=Path), default=None, help="API documents."
)
@click.option("--top", "top", type=int, default=10, help="Cases with the largest gaps to list.")
@click.option(
    "--resamples", "resamples", type=int, default=2000, help="Bootstrap resamples (over cases)."
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def gap_command(
    run_a: Path,
    run_b: Path,
    data_dir: Path | None,
    scripts: Path | None,
    apis: Path | None,
    top: int,
    resamples: int,
    json_out: bool,
) -> None:
    """F1 gap between two runs of one assistant (A - B, per case and overall) and each run's
    redundant questions (asking for a value the user already gave)."""
    from toolscore.benchmarks.autode.analysis import gap, load_run_dialogues

    try:
        gold, docs = _gold([run_a, run_b], data_dir, scripts, apis)
        result = gap(
            load_run_dialogues(run_a, gold),
            load_run_dialogues(run_b, gold),
            gold,
            docs,
            n_resamples=resamples,
        )
    except USER_ERRORS as e:
        fail(str(e))
        return
    if json_out:
        emit_json(result)
        return
    console = Console()
    low, high = result["gap_ci"]
    ci = "" if low is None else f" [{low:.2f}, {high:.2f}]"
    for side in ("a", "b"):
        row = result[side]
        console.print(
            f"{side.upper()}: {row['label']} · F1 {row['f1']:.2f} · redundant "
            f"questions {_questions(row)}",
            highlight=False,
        )
    console.print(
        f"gap A - B over {result['n_cases']} cases: {result['gap']:+.2f} F1 points"
        f"{ci} ({result['confidence']:.0%} bootstrap CI) · A better "
        f"{result['a_better']} · B better {result['b_better']} · ties "
        f"{result['ties']}",
        highlight=False,
    )
    if top <= 0:
        return
    table = Table(title=f"largest gaps (top {top})", title_justify="left")
    for col in ("uuid", "api", "F1 A", "F1 B", "gap"):
        table.add_column(col, justify="left" if col in ("uuid", "api") else "right")
    for row in sorted(result["cases"], key=lambda r: -abs(r["gap"]))[:top]:
        table.add_row(
            row["uuid"],
            str(row["api"]),
            f"{row['f1_a']:.2f}",
            f"{row['f1_b']:.2f}",
            f"{row['gap']:+.2f}",
        )
    console.print(table)


@autode_app.command("generate-scripts")
@click.option(
    "--apis",
    "apis",
    type=click.Path(path_type=Path),
    required=True,
    help="API documents (.xlsx, .json, .yaml).",
)
@click.option("--model", "-m", "model", required=True, help="provider/model writing the scripts.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help="Output JSONL file (released shape).",
)
@click.option("--base-url", "base_url", default=None, help="OpenAI-compatible endpoint.")
@click.option(
    "--per-api",
    "per_api",
    type=click.IntRange(min=1),
    default=1,
    help="Scripts to request per API.",
)
@click.option("--temperature", "temperature", type=float, default=0.7, help="Sampling temperature.")
@click.option("--seed", "seed", type=int, default=0, help="Generation seed.")
@click.option(
    "--cache",
    "cache",
    type=click.Path(path_type=Path),
    default=None,
    help="Response cache file (SQLite).",
)
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not cache model responses.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def generate_scripts_command(
    apis: Path,
    model: str,
    out: Path,
    base_url: str | None,
    per_api: int,
    temperature: float,
    seed: int,
    cache: Path | None,
    no_cache: bool,
    json_out: bool,
) -> None:
    """Write AutoDE user scripts for API documents with a model; every script is validated
    against its API, and rejected ones are counted and explained."""
    from toolscore.benchmarks.autode import load_api_docs
    from toolscore.benchmarks.autode.generate import generate_scripts, write_scripts
    from toolscore.models.factory import make_client
    from toolscore.runs.api import run_sync

    try:
        docs = load_api_docs(apis)
        client = make_client(
            model,
            role="generator",
            base_url=base_url,
            cache=None if no_cache else (cache or "default"),
        )
        report = run_sync(lambda: generate_scripts(client, docs, per_api=per_api,
                                                   temperature=temperature, seed=seed))
    except USER_ERRORS as e:
        fail(str(e))
        return
    write_scripts(report.scripts, out)
    doc = {**report.to_dict(), "out": str(out), "model": model}
    if json_out:
        emit_json(doc)
        return
    err = Console(stderr=True)
    for r in report.rejected:
        err.print(f"rejected: {r['message']}", highlight=False, markup=False)
    Console().print(
        f"{doc['valid']} of {doc['requested']} scripts valid, written to {out}; "
        f"rejected {doc['rejected']} {doc['rejected_by_kind'] or ''}",
        highlight=False,
        markup=False,
    )


COMMANDS = [agree, autode_app]
