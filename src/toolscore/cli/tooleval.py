"""``toolscore tooleval passrate|winrate``: ToolEval's LLM-judged metrics over answer files.

Parse, call the library, print; every verdict with its raw judge output goes to ``--out``
(JSON lines, one query per line) so a score can be audited and re-derived.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from toolscore.cli.common import USER_ERRORS, fail

tooleval_app = click.Group("tooleval", help="ToolEval: pass rate and win rate with an LLM judge.")


def _judge(
    model: str,
    base_url: str | None,
    temperature: float,
    timeout: float,
    no_cache: bool,
    concurrency: int,
) -> Any:
    from toolscore.judges.llm import make_judge
    from toolscore.types import GenerateConfig

    cache = None if no_cache else _judge_cache()
    config = GenerateConfig(temperature=temperature, max_tokens=512, seed=0)
    return make_judge(
        model,
        base_url=base_url,
        cache=cache,
        timeout=timeout,
        max_concurrency=concurrency,
        config=config,
    )


def _configured(
    judge: str | None,
    base_url: str | None,
    judge_config: Path | None,
    kinds: tuple[str, ...],
    temperature: float,
    timeout: float,
    no_cache: bool,
    concurrency: int,
    votes: int,
) -> tuple[Any, dict[str, Any] | None, int]:
    """(judge, its configuration's identity or None, votes) from --judge or --judge-config."""
    if judge_config is None:
        if not judge:
            raise ValueError("give --judge provider/model or --judge-config FILE")
        return _judge(judge, base_url, temperature, timeout, no_cache, concurrency), None, votes
    from toolscore.judges.registry import load_judge_config, make_llm_judge

    cfg = load_judge_config(judge_config).require(*kinds)
    j = make_llm_judge(
        cfg,
        cache=None if no_cache else _judge_cache(),
        timeout=timeout,
        max_concurrency=concurrency,
        temperature=temperature,
    )
    return j, cfg.identity(), cfg.votes or votes


def _judge_cache() -> Any:
    from toolscore.data import cache_root
    from toolscore.models.cache import ResponseCache

    path = cache_root() / "responses.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return ResponseCache(path)


def _write(out: Path | None, rows: list[dict[str, Any]]) -> None:
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _print(doc: dict[str, Any], json_out: bool, columns: list[tuple[str, Any]]) -> None:
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")
        return
    table = Table(title=f"{doc['metric']}  judge={doc['judge']}  votes={doc['votes']}")
    table.add_column("subset")
    for name, _ in columns:
        table.add_column(name, justify="right")
    for subset, row in [*doc["subsets"].items(), ("all", doc["overall"])]:
        table.add_row(subset, *(_fmt(get(row)) for _, get in columns))
    console = Console()
    console.print(table)
    for name, rule in (doc.get("rules") or {}).items():
        console.print(f"{name}: {rule}", highlight=False)
    if "mode" in doc:
        console.print(f"mode: {doc['mode']}, seed {doc['seed']}", highlight=False)
    usage = doc.get("usage") or {}
    console.print(
        f"judge tokens: {usage.get('input_tokens', 0)} in, "
        f"{usage.get('output_tokens', 0)} out; calls {usage.get('calls', 0)}, "
        f"cached {usage.get('cached_calls', 0)}"
    )


def _load(directory: Path, subset: list[str] | None, limit: int | None) -> list[Any]:
    from toolscore.benchmarks.tooleval.data import load_answers
    from toolscore.benchmarks.tooleval.from_runs import is_run_dir, load_run_report

    if is_run_dir(directory):  # a toolscore run: its transcripts as solution paths
        samples, notes = load_run_report(directory)
        if notes["skipped_errors"]:
            Console(stderr=True).print(
                f"{directory}: {len(notes['skipped_errors'])} sample(s) "
                "with infrastructure errors left out",
                highlight=False,
            )
        return samples[:limit] if limit is not None else samples
    return load_answers(directory, subset or None, limit)


@tooleval_app.command("passrate")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--judge", "judge", default=None, help="Judge model, provider/model (e.g. openai/gpt-4o-mini)."
)
@click.option(
    "--base-url", "base_url", default=None, help="OpenAI-compatible endpoint of the judge."
)
@click.option(
    "--votes", "votes", type=int, default=4, help="Judgements per query (odd counts avoid ties)."
)
@click.option(
    "--judge-config",
    "judge_config",
    type=click.Path(path_type=Path),
    default=None,
    help="Judge configuration file (JSON/YAML: name, kind, model, base_url, template, temperature, votes); its settings replace --judge, --base-url, --temperature, --votes.",
)
@click.option(
    "--seed", "seed", type=int, default=0, help="Seed of the reference rule's coin flips."
)
@click.option(
    "--strict",
    "strict",
    is_flag=True,
    help="A give-up answer fails (the reference lets it pass when the judge calls the task unsolvable).",
)
@click.option(
    "--subset", "subset", multiple=True, help="Only these subsets (repeatable), e.g. G1_tool."
)
@click.option(
    "--limit", "limit", type=int, default=None, help="Only the first N queries of each subset."
)
@click.option(
    "--temperature",
    "temperature",
    type=float,
    default=0.7,
    help="Judge sampling temperature (votes need variety).",
)
@click.option(
    "--max-concurrency", "max_concurrency", type=int, default=8, help="Queries judged at once."
)
@click.option(
    "--timeout",
    "timeout",
    type=float,
    default=120.0,
    help="Seconds per judge call before retrying.",
)
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not cache judge responses.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write every query's verdicts (raw outputs included) here.",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def passrate(
    directory: Path,
    judge: str | None,
    base_url: str | None,
    votes: int,
    judge_config: Path | None,
    seed: int,
    strict: bool,
    subset: list[str] | None,
    limit: int | None,
    temperature: float,
    max_concurrency: int,
    timeout: float,
    no_cache: bool,
    out: Path | None,
    json_out: bool,
) -> None:
    """Pass rate of the answers in DIRECTORY (reference and stable rules).

    DIRECTORY may also be a toolscore run directory (run.json): its transcripts are judged.
    """
    from toolscore.benchmarks.tooleval.passrate import pass_rate

    try:
        samples = _load(directory, subset, limit)
        j, ident, votes = _configured(
            judge,
            base_url,
            judge_config,
            ("tooleval-pass",),
            temperature,
            timeout,
            no_cache,
            max_concurrency,
            votes,
        )
        result = asyncio.run(
            pass_rate(
                j, samples, votes=votes, seed=seed, strict=strict, max_concurrency=max_concurrency
            )
        )
    except USER_ERRORS as e:
        fail(str(e))
        return
    _write(out, [{**r.to_dict(), "judge": j.name} for r in result.results])
    doc = result.report()
    if ident is not None:
        doc["judge_config"] = ident
    _print(
        doc,
        json_out,
        [
            ("queries", lambda r: r["queries"]),
            ("errors", lambda r: r["errors"]),
            ("pass rate", lambda r: r["pass_rate"]),
            ("stable mean", lambda r: r["stable"]["mean"]),
            ("stable std", lambda r: r["stable"]["std"]),
        ],
    )


@tooleval_app.command("winrate")
@click.argument("candidate", type=click.Path(path_type=Path))
@click.argument("reference", type=click.Path(path_type=Path))
@click.option(
    "--judge", "judge", default=None, help="Judge model, provider/model (e.g. openai/gpt-4o-mini)."
)
@click.option(
    "--base-url", "base_url", default=None, help="OpenAI-compatible endpoint of the judge."
)
@click.option(
    "--votes", "votes", type=int, default=4, help="Judgements per query (odd counts avoid ties)."
)
@click.option(
    "--judge-config",
    "judge_config",
    type=click.Path(path_type=Path),
    default=None,
    help="Judge configuration file (JSON/YAML: name, kind, model, base_url, template, temperature, votes); its settings replace --judge, --base-url, --temperature, --votes.",
)
@click.option(
    "--pref-votes",
    "pref_votes",
    type=int,
    default=1,
    help="Votes per order for solved status and preference.",
)
@click.option(
    "--seed", "seed", type=int, default=0, help="Seed of the reference rule's coin flips."
)
@click.option(
    "--strict",
    "strict",
    is_flag=True,
    help="A give-up answer fails (the reference lets it pass when the judge calls the task unsolvable).",
)
@click.option(
    "--subset", "subset", multiple=True, help="Only these subsets (repeatable), e.g. G1_tool."
)
@click.option(
    "--limit", "limit", type=int, default=None, help="Only the first N queries of each subset."
)
@click.option(
    "--temperature",
    "temperature",
    type=float,
    default=0.7,
    help="Judge sampling temperature (votes need variety).",
)
@click.option(
    "--max-concurrency", "max_concurrency", type=int, default=8, help="Queries judged at once."
)
@click.option(
    "--timeout",
    "timeout",
    type=float,
    default=120.0,
    help="Seconds per judge call before retrying.",
)
@click.option("--no-cache", "no_cache", is_flag=True, help="Do not cache judge responses.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write every query's verdicts (raw outputs included) here.",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
def winrate(
    candidate: Path,
    reference: Path,
    judge: str | None,
    base_url: str | None,
    votes: int,
    judge_config: Path | None,
    pref_votes: int,
    seed: int,
    strict: bool,
    subset: list[str] | None,
    limit: int | None,
    temperature: float,
    max_concurrency: int,
    timeout: float,
    no_cache: bool,
    out: Path | None,
    json_out: bool,
) -> None:
    """Win rate of CANDIDATE against REFERENCE (both answer orders judged)."""
    from toolscore.benchmarks.tooleval.passrate import pass_rate
    from toolscore.benchmarks.tooleval.winrate import report, win_rate

    async def go(j: Any, cand: list[Any], ref: list[Any]) -> tuple[Any, Any, Any]:
        pc = await pass_rate(
            j, cand, votes=votes, seed=seed, strict=strict, max_concurrency=max_concurrency
        )
        pr = await pass_rate(
            j, ref, votes=votes, seed=seed, strict=strict, max_concurrency=max_concurrency
        )
        comps = await win_rate(
            j,
            cand,
            ref,
            pc.passed(),
            pr.passed(),
            votes=pref_votes,
            max_concurrency=max_concurrency,
        )
        return pc, pr, comps

    try:
        cand, ref = _load(candidate, subset, limit), _load(reference, subset, limit)
        j, ident, votes = _configured(
            judge,
            base_url,
            judge_config,
            ("tooleval-pref", "tooleval-pass"),
            temperature,
            timeout,
            no_cache,
            max_concurrency,
            votes,
        )
        pc, pr, comps = asyncio.run(go(j, cand, ref))
    except USER_ERRORS as e:
        fail(str(e))
        return
    _write(out, [{**c.to_dict(), "judge": j.name} for c in comps])
    doc = report(comps, j.name, pref_votes)
    if ident is not None:
        doc["judge_config"] = ident
    doc["pass_rate"] = {
        "candidate": pc.report()["overall"],
        "reference": pr.report()["overall"],
        "votes": votes,
        "seed": seed,
    }
    doc["usage"] = j.usage.to_dict()
    _print(
        doc,
        json_out,
        [
            ("queries", lambda r: r["queries"]),
            ("errors", lambda r: r["errors"]),
            ("wins", lambda r: r["wins"]),
            ("ties", lambda r: r["ties"]),
            ("losses", lambda r: r["losses"]),
            ("win rate", lambda r: r["win_rate"]),
            ("first-shown picks", lambda r: r["position_bias"]["first_shown_pick_rate"]),
        ],
    )


COMMANDS = [tooleval_app]
