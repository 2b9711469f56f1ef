"""``toolscore judge-agreement``: how well a judge agrees with the ACS human labels.

The judge is acs-verify (the deterministic verifier) or any model name (an LLM judge, zero- or
few-shot). Every metric comes with a bootstrap interval that resamples whole requests, since
the 3-6 constraints of one request are judged against one shared response. Rows where the
infrastructure failed are reported and left out; rows where the judge gave no readable verdict
are abstentions and lower ``coverage`` and ``accuracy_all``. No evaluation logic here: parse,
call the library, print.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from toolscore.benchmarks.acs.data import AcsRow
from toolscore.cli.common import USER_ERRORS, emit_json, fail

GROUPS = ("domain", "kind", "none")
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
    help="Write one JSON line per row (verdict, votes, raw model output).",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option(
    "--judge-config",
    "judge_config",
    type=click.Path(path_type=Path),
    default=None,
    help="Judge configuration file (JSON/YAML; kind acs-verify or acs-llm); replaces --judge, --base-url, --votes, --temperature.",
)
@click.option(
    "--labels",
    "labels",
    type=click.Path(path_type=Path),
    default=None,
    help="Any human-labelled set (JSONL or CSV: id, label[, group, cluster]); with --verdicts, measures those verdicts instead of ACS.",
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
    from toolscore.benchmarks.acs.data import DataError, load_rows

    if labels is not None or verdicts is not None:
        if labels is None or verdicts is None:
            fail("--labels and --verdicts go together")
            return
        from toolscore.judges.labels import join_labels
        from toolscore.stats.classification import classification_report

        try:
            items, unjudged = join_labels(
                labels,
                verdicts,
                id_field=id_field,
                label_field=label_field,
                verdict_field=verdict_field,
                group_field=group_field,
                cluster_field=cluster_field,
            )
        except DataError as e:
            fail(str(e))
            return
        rep = classification_report(
            [i.human for i in items],
            [i.label for i in items],
            groups=[i.group for i in items] if group_field else None,
            clusters=[i.cluster for i in items],
            n_resamples=resamples,
            seed=seed,
        )
        doc = {
            "judge": str(verdicts),
            "labels": str(labels),
            "rows": len(items),
            "how": "recorded verdicts",
            "items_name": "labelled items",
            "clusters_name": "clusters",
            "unjudged": unjudged,
            "errors": 0,
            "shots": 0,
            "votes": 1,
            "group": group_field or "none",
            "requests": len({i.cluster for i in items}),
            "abstentions": sum(i.label is None for i in items),
            "baseline_always_satisfied": (
                sum(i.human for i in items) / len(items) if items else None
            ),
            "report": rep.to_dict(),
        }
        if json_out:
            emit_json(doc)
        else:
            print_summary(doc)
        return

    ident: dict[str, Any] | None = None
    system: str | None = None
    if judge_config is not None:
        from toolscore.judges.registry import JudgeConfigError, load_judge_config

        try:
            cfg = load_judge_config(judge_config).require("acs-verify", "acs-llm")
        except JudgeConfigError as e:
            fail(str(e))
            return
        ident, system = cfg.identity(), cfg.template
        judge = cfg.model or "acs-verify"
        base_url = cfg.base_url or base_url
        votes = cfg.votes or votes
        temperature = temperature if cfg.temperature is None else cfg.temperature
    if group not in GROUPS:
        fail(f"--group: expected one of {', '.join(GROUPS)}, got {group!r}")
    if shots < 0 or votes < 1 or (limit is not None and limit < 1) or resamples < 0:
        fail("--shots and --resamples must be >= 0; --votes and --limit >= 1")
    if judge == "acs-verify" and (shots or votes != 1 or shot_reasons):
        fail("--shots, --votes and --shot-reasons apply to LLM judges, not acs-verify")
    try:
        rows = load_rows(data)
    except DataError as e:
        fail(str(e))
        return
    try:
        if judge == "acs-verify":
            judged = _run_verifier(rows[:limit])
        else:
            judged = asyncio.run(
                _run_llm(
                    rows,
                    limit,
                    judge,
                    base_url=base_url,
                    shots=shots,
                    shot_reasons=shot_reasons,
                    votes=votes,
                    temperature=temperature,
                    seed=seed,
                    timeout=timeout,
                    max_concurrency=max_concurrency,
                    cache=not no_cache,
                    system=system,
                )
            )
    except USER_ERRORS as e:
        fail(str(e))
        return
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as f:
            for rec in judged:
                rec = {**rec, "judge": ident["id"]} if ident else rec
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    doc = summarise(
        judged, judge=judge, group=group, shots=shots, votes=votes, resamples=resamples, seed=seed
    )
    if ident is not None:
        doc["judge"], doc["judge_config"] = ident["id"], ident
    if json_out:
        emit_json(doc)
    else:
        print_summary(doc)


# -- running the judges ---------------------------------------------------------------------
def _record(
    row: AcsRow, label: bool | None, reason: str, error: str = "", **extra: Any
) -> dict[str, Any]:
    from toolscore.judges.acs.constraints import Abstain, parse_constraint

    parsed = parse_constraint(row.constraint, row.request, row.domain)
    return {
        "row_id": row.row_id,
        "domain": row.domain,
        "kind": "unparsed" if isinstance(parsed, Abstain) else parsed.kind,
        "request": _request_id(row),
        "constraint": row.constraint,
        "human": row.label,
        "label": label,
        "reason": reason,
        "error": error,
        **extra,
    }


def _request_id(row: AcsRow) -> str:
    from toolscore.models.cache import sha256_json

    return sha256_json([row.request, row.response])[:12]


def _run_verifier(rows: list[AcsRow]) -> list[dict[str, Any]]:
    from toolscore.judges.acs import verify

    out = []
    for r in rows:
        v = verify(r.request, r.response, r.constraint, r.domain)
        out.append(_record(r, v.label, v.reason))
    return out


async def _run_llm(
    rows: list[AcsRow],
    limit: int | None,
    judge: str,
    *,
    base_url: str | None,
    shots: int,
    shot_reasons: bool,
    votes: int,
    temperature: float,
    seed: int,
    timeout: float,
    max_concurrency: int,
    cache: bool,
    system: str | None = None,
) -> list[dict[str, Any]]:
    from toolscore.judges.acs_llm import few_shot_plan
    from toolscore.judges.registry import acs_llm_judge_class
    from toolscore.models import ModelClient, get_model

    model = get_model(judge, **({"base_url": base_url} if base_url else {}))
    client = ModelClient(
        model,
        cache=_cache() if cache else None,
        timeout=timeout,
        max_concurrency=max_concurrency,
        role="judge",
    )
    plan = few_shot_plan(rows, shots, seed)[:limit]  # examples drawn from all requests
    explanations: dict[str, str] = {}
    if shot_reasons:
        from toolscore.judges.acs import verify

        for s in {s.row_id: s for _, ex in plan for s in ex}.values():
            v = verify(s.request, s.response, s.constraint, s.domain)
            if v.label == s.label:
                explanations[s.row_id] = v.reason
    llm = acs_llm_judge_class(system)(
        client, votes=votes, temperature=temperature, seed=seed, explanations=explanations
    )
    verdicts = await llm.judge_all(plan)
    return [
        _record(
            r,
            v.label,
            v.reason,
            v.error,
            shots=[s.row_id for s in ex],
            votes=[{"label": x.label, "error": x.error, "raw": x.raw} for x in v.votes],
        )
        for (r, ex), v in zip(plan, verdicts, strict=True)
    ]


def _cache() -> Any:
    from toolscore.data import cache_root
    from toolscore.models.cache import ResponseCache

    path = cache_root() / "responses.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return ResponseCache(path)


# -- summarising and printing ---------------------------------------------------------------
def summarise(
    judged: list[dict[str, Any]],
    *,
    judge: str,
    group: str,
    shots: int,
    votes: int,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Metrics over the rows without infrastructure errors, overall and per ``group``."""
    from toolscore.stats.classification import classification_report

    scored = [r for r in judged if not r["error"]]
    rep = classification_report(
        [r["human"] for r in scored],
        [r["label"] for r in scored],
        groups=None if group == "none" else [r[group] for r in scored],
        clusters=[r["request"] for r in scored],
        n_resamples=resamples,
        seed=seed,
    )
    n = len(scored)
    return {
        "judge": judge,
        "shots": shots,
        "votes": votes,
        "group": group,
        "rows": len(judged),
        "requests": len({r["request"] for r in judged}),
        "errors": len(judged) - n,
        "abstentions": sum(r["label"] is None for r in scored),
        "baseline_always_satisfied": sum(r["human"] for r in scored) / n if n else None,
        "report": rep.to_dict(),
    }


def _cell(m: dict[str, float], name: str) -> tuple[str, str]:
    v, lo, hi = m["value"], m["low"], m["high"]
    if v != v:
        return "-", ""
    if name == "kappa":
        return f"{v:.3f}", ("" if lo != lo else f"{lo:.2f}-{hi:.2f}")
    return f"{v:.1%}", ("" if lo != lo else f"{lo:.0%}-{hi:.0%}")


def print_summary(doc: dict[str, Any], file: Any = None) -> None:
    file = file or sys.stdout
    rep = doc["report"]
    boot = rep["bootstrap"]
    kind = (doc.get("judge_config") or {}).get("kind", doc["judge"])
    how = doc.get("how") or (f"{doc['shots']}-shot" if kind != "acs-verify" else "deterministic")
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


COMMANDS = [judge_agreement]
