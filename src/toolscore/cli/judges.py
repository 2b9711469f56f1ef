"""``toolscore judge-agreement`` and ``toolscore judges``: how well a judge agrees with human
labels, and which judge kinds are installed.

``judge-agreement`` is the ACS benchmark under its older name: it runs ``acs`` through
:func:`toolscore.runs.api.evaluate` (into ``--out`` or a temporary run directory) and prints the
agreement table; ``toolscore run acs`` does the same and keeps the run. With ``--labels`` and
``--verdicts`` it measures any recorded verdicts against any human-labelled set instead. No
evaluation logic here: parse, call the library, print.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from toolscore.cli.common import UserErrors, emit_json, fail, progress_wanted, stdout

COLUMNS = (
    ("coverage", "cov"),
    ("accuracy", "acc"),
    ("accuracy_all", "acc_all"),
    ("balanced_accuracy", "bal_acc"),
    ("accuracy_pos", "acc_sat"),
    ("accuracy_neg", "acc_unsat"),
    ("predicted_pos_rate", "pred_sat"),
    ("kappa", "kappa"),
)


@click.command("judge-agreement")
@click.option(
    "--judge",
    "judge",
    default="acs-verify",
    help="acs-verify, or a model (provider/model) as LLM judge.",
)
@click.option(
    "--base-url", "base_url", default=None, help="OpenAI-compatible endpoint (openai/...)."
)
@click.option(
    "--shots",
    "shots",
    type=int,
    default=0,
    help="LLM judge: few-shot examples per prompt (drawn from the other half of the requests).",
)
@click.option(
    "--shot-reasons",
    "shot_reasons",
    is_flag=True,
    help="LLM judge: show acs-verify's figures with each example's label.",
)
@click.option(
    "--votes", "votes", type=int, default=1, help="LLM judge: samples per row (majority)."
)
@click.option(
    "--temperature", "temperature", type=float, default=0.0, help="LLM judge temperature."
)
@click.option("--limit", "limit", type=int, default=None, help="Judge only the first N rows.")
@click.option(
    "--group",
    "group",
    default="domain",
    help="Per-group table: domain | kind (constraint kind as acs-verify reads it) | none.",
)
@click.option(
    "--data", "data", type=click.Path(path_type=Path), default=None, help="ACS csv or folder."
)
@click.option(
    "--resamples", "resamples", type=int, default=2000, help="Bootstrap resamples (0: none)."
)
@click.option(
    "--seed", "seed", type=int, default=0, help="Seed for the bootstrap and the example draw."
)
@click.option(
    "--max-concurrency", "max_concurrency", type=int, default=8, help="LLM calls in flight."
)
@click.option("--timeout", "timeout", type=float, default=120.0, help="Seconds per model call.")
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not cache model responses.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    default=None,
    help="Run directory to keep (run.json, samples.jsonl with every verdict, its votes and "
    "raw model output, scores.json); default: a temporary one.",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option(
    "--judge-config",
    "judge_config",
    type=click.Path(path_type=Path),
    default=None,
    help="Judge configuration file (JSON/YAML; kind acs-verify or acs-llm); replaces --judge, "
    "--base-url, --votes, --temperature.",
)
@click.option(
    "--labels",
    "labels",
    type=click.Path(path_type=Path),
    default=None,
    help="Any human-labelled set (JSONL or CSV: id, label[, group, cluster]); with --verdicts, "
    "measures those verdicts instead of ACS.",
)
@click.option(
    "--verdicts",
    "verdicts",
    type=click.Path(path_type=Path),
    default=None,
    help="A judge's verdicts (JSONL or CSV: id, label; empty = abstained).",
)
@click.option("--id-field", "id_field", default="id", help="With --labels: the id field.")
@click.option(
    "--label-field", "label_field", default="label", help="With --labels: the human label field."
)
@click.option(
    "--verdict-field",
    "verdict_field",
    default="label",
    help="With --verdicts: the judge's label field.",
)
@click.option(
    "--group-field", "group_field", default=None, help="With --labels: report per value of this."
)
@click.option(
    "--cluster-field",
    "cluster_field",
    default=None,
    help="With --labels: items resampled together by the bootstrap.",
)
def judge_agreement(
    judge: str,
    base_url: str | None,
    shots: int,
    shot_reasons: bool,
    votes: int,
    temperature: float,
    limit: int | None,
    group: str,
    data: Path | None,
    resamples: int,
    seed: int,
    max_concurrency: int,
    timeout: float,
    no_cache: bool,
    out: Path | None,
    json_out: bool,
    judge_config: Path | None,
    labels: Path | None,
    verdicts: Path | None,
    id_field: str,
    label_field: str,
    verdict_field: str,
    group_field: str | None,
    cluster_field: str | None,
) -> None:
    """Agreement of a judge with human labels (the ACS rows, or any labelled set), with
    intervals."""
    if labels is not None or verdicts is not None:
        if labels is None or verdicts is None:
            fail("--labels and --verdicts go together")
        from toolscore.judges.labels import agreement_from_files

        with UserErrors():
            doc = agreement_from_files(
                labels, verdicts, id_field=id_field, label_field=label_field,
                verdict_field=verdict_field, group_field=group_field,
                cluster_field=cluster_field, resamples=resamples, seed=seed)
        show(doc, json_out)
        return
    if limit is not None and limit < 1:
        fail("--limit must be >= 1")
    options: dict[str, Any] = {"shots": shots, "shot_reasons": shot_reasons, "votes": votes,
                               "temperature": temperature, "group": group,
                               "resamples": resamples, "seed": seed}
    model = None
    if judge_config is not None:
        options["judge_config"] = judge_config
        options["judge_base_url"] = base_url
    elif judge != "acs-verify":
        options["judge"], model = "llm", judge
    if data is not None and data.is_file():  # a csv: the release's own file, or another
        from toolscore.benchmarks.acs.data import DEV_FILE

        if data.name != DEV_FILE:
            options["csv"] = data
        data = None if data.name != DEV_FILE else data.parent
    from toolscore.runs.api import evaluate

    with UserErrors(), tempfile.TemporaryDirectory(prefix="toolscore-acs-") as tmp:
        run = evaluate("acs", model, data=data, out=out or Path(tmp) / "run", limit=limit,
                       max_concurrency=max_concurrency, cache=None if no_cache else "default",
                       base_url=base_url if model else None, timeout=timeout,
                       progress=progress_wanted(json_out), **options)
    show(run.metrics or {}, json_out)


def show(doc: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json(doc)
    else:
        print_summary(doc)


@click.command("judges")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def judges_command(json_out: bool) -> None:
    """List judge kinds (toolscore.judges entry points), usable in a judge config's kind."""
    from rich.markup import escape
    from rich.table import Table

    from toolscore.entrypoints import JUDGES
    from toolscore.judges.registry import list_judges

    where = JUDGES.listing()
    kinds = [{"name": k.name, "kind": k.kind, "labels": k.labels,
              "description": k.description, "source": where.get(k.name, "")}
             for k in list_judges()]
    if json_out:
        emit_json({"judges": kinds})
        return
    table = Table(title="judge kinds (kind: in a judge config)", title_justify="left")
    for c in ("name", "kind", "labels", "description", "source"):
        table.add_column(c, overflow="fold")
    for k in kinds:
        table.add_row(*(escape(str(k[c])) for c in ("name", "kind", "labels", "description",
                                                     "source")))
    stdout().print(table)


# -- printing --------------------------------------------------------------------------------
def _missing(x: float | None) -> bool:
    return x is None or x != x  # null in a stored document, nan when computed here


def _cell(m: dict[str, float | None], name: str) -> tuple[str, str]:
    v, lo, hi = m["value"], m["low"], m["high"]
    if v is None or _missing(v):
        return "-", ""
    none = _missing(lo) or _missing(hi)
    if name == "kappa":
        return f"{v:.3f}", ("" if none else f"{lo:.2f}-{hi:.2f}")
    return f"{v:.1%}", ("" if none else f"{lo:.0%}-{hi:.0%}")


def print_summary(doc: dict[str, Any], file: Any = None) -> None:
    file = file or sys.stdout
    rep = doc["report"]
    boot = rep["bootstrap"]
    from toolscore.benchmarks.acs.agreement import how as how_judged

    how = how_judged(doc)
    items, clusters = doc.get("items_name", "ACS rows"), doc.get("clusters_name", "requests")
    print(
        f"judge {doc['judge']} ({how}) on {doc['rows']} {items} from {doc['requests']} "
        f"{clusters}; {doc['abstentions']} abstained, {doc['errors']} infrastructure errors "
        f"(left out)",
        file=file,
    )
    print(
        f"{boot['confidence']:.0%} bootstrap intervals ({boot['n_resamples']} resamples of "
        f"whole {clusters}, seed {boot['seed']}); accuracy_all counts abstentions as wrong, "
        "the other metrics use the decided rows",
        file=file,
    )
    sections = [("overall", {"all": rep["overall"]})]
    if rep["groups"]:
        sections.append((doc["group"], rep["groups"]))
    for title, groups in sections:
        width = max(len(title), *(len(k) for k in groups)) + 2
        print(file=file)
        print(f"{title:<{width}}{'n':>5}" + "".join(f"{h:>11}" for _, h in COLUMNS), file=file)
        for key, g in groups.items():
            cells = [_cell(g["metrics"][name], name) for name, _ in COLUMNS]
            print(f"{key:<{width}}{g['n']:>5}" + "".join(f"{c[0]:>11}" for c in cells), file=file)
            print(f"{'':<{width}}{'':>5}" + "".join(f"{c[1]:>11}" for c in cells), file=file)
    if doc["baseline_always_satisfied"] is not None:
        print(
            f"\nbaseline: always 'satisfied' (positive) {doc['baseline_always_satisfied']:.1%}",
            file=file,
        )


COMMANDS = [judge_agreement, judges_command]
