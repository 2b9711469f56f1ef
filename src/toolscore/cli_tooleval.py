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

import typer
from rich.console import Console
from rich.table import Table

tooleval_app = typer.Typer(no_args_is_help=True, add_completion=False,
                           help="ToolEval: pass rate and win rate with an LLM judge.")

JUDGE = typer.Option(None, "--judge", help="Judge model, provider/model (e.g. openai/gpt-4o-mini).")
JUDGE_CONFIG = typer.Option(None, "--judge-config", help="Judge configuration file (JSON/YAML: "
                            "name, kind, model, base_url, template, temperature, votes); its "
                            "settings replace --judge, --base-url, --temperature, --votes.")
BASE_URL = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint of the judge.")
VOTES = typer.Option(4, "--votes", help="Judgements per query (odd counts avoid ties).")
SEED = typer.Option(0, help="Seed of the reference rule's coin flips.")
STRICT = typer.Option(False, help="A give-up answer fails (the reference lets it pass when "
                                  "the judge calls the task unsolvable).")
SUBSET = typer.Option(None, "--subset", help="Only these subsets (repeatable), e.g. G1_tool.")
LIMIT = typer.Option(None, help="Only the first N queries of each subset.")
TEMPERATURE = typer.Option(0.7, help="Judge sampling temperature (votes need variety).")
CONCURRENCY = typer.Option(8, "--max-concurrency", help="Queries judged at once.")
TIMEOUT = typer.Option(120.0, help="Seconds per judge call before retrying.")
NO_CACHE = typer.Option(False, "--no-cache", help="Do not cache judge responses.")
OUT = typer.Option(None, help="Write every query's verdicts (raw outputs included) here.")
JSON_OUT = typer.Option(False, "--json", help="Print one JSON document on stdout.")


def _judge(model: str, base_url: str | None, temperature: float, timeout: float,
           no_cache: bool, concurrency: int) -> Any:
    from toolscore.judges.llm import make_judge
    from toolscore.types import GenerateConfig

    cache = None if no_cache else _judge_cache()
    config = GenerateConfig(temperature=temperature, max_tokens=512, seed=0)
    return make_judge(model, base_url=base_url, cache=cache, timeout=timeout,
                      max_concurrency=concurrency, config=config)


def _configured(judge: str | None, base_url: str | None, judge_config: Path | None,
                kinds: tuple[str, ...], temperature: float, timeout: float, no_cache: bool,
                concurrency: int, votes: int) -> tuple[Any, dict[str, Any] | None, int]:
    """(judge, its configuration's identity or None, votes) from --judge or --judge-config."""
    if judge_config is None:
        if not judge:
            raise ValueError("give --judge provider/model or --judge-config FILE")
        return _judge(judge, base_url, temperature, timeout, no_cache, concurrency), None, votes
    from toolscore.judges.registry import load_judge_config, make_llm_judge

    cfg = load_judge_config(judge_config).require(*kinds)
    j = make_llm_judge(cfg, cache=None if no_cache else _judge_cache(), timeout=timeout,
                       max_concurrency=concurrency, temperature=temperature)
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
    console.print(f"judge tokens: {usage.get('input_tokens', 0)} in, "
                  f"{usage.get('output_tokens', 0)} out; calls {usage.get('calls', 0)}, "
                  f"cached {usage.get('cached_calls', 0)}")


def _load(directory: Path, subset: list[str] | None, limit: int | None) -> list[Any]:
    from toolscore.benchmarks.tooleval.data import load_answers
    from toolscore.benchmarks.tooleval.from_runs import is_run_dir, load_run_report

    if is_run_dir(directory):  # a toolscore run: its transcripts as solution paths
        samples, notes = load_run_report(directory)
        if notes["skipped_errors"]:
            Console(stderr=True).print(f"{directory}: {len(notes['skipped_errors'])} sample(s) "
                                       "with infrastructure errors left out", highlight=False)
        return samples[:limit] if limit is not None else samples
    return load_answers(directory, subset or None, limit)


@tooleval_app.command("passrate")
def passrate(directory: Path = typer.Argument(..., help="Converted answers (one JSON per "
                                                        "subset) or raw answers directory."),
             judge: str | None = JUDGE, base_url: str | None = BASE_URL, votes: int = VOTES,
             judge_config: Path | None = JUDGE_CONFIG,
             seed: int = SEED, strict: bool = STRICT, subset: list[str] | None = SUBSET,
             limit: int | None = LIMIT, temperature: float = TEMPERATURE,
             max_concurrency: int = CONCURRENCY, timeout: float = TIMEOUT,
             no_cache: bool = NO_CACHE, out: Path | None = OUT,
             json_out: bool = JSON_OUT) -> None:
    """Pass rate of the answers in DIRECTORY (reference and stable rules).

    DIRECTORY may also be a toolscore run directory (run.json): its transcripts are judged.
    """
    from toolscore import cli
    from toolscore.benchmarks.tooleval.passrate import pass_rate

    try:
        samples = _load(directory, subset, limit)
        j, ident, votes = _configured(judge, base_url, judge_config, ("tooleval-pass",),
                                      temperature, timeout, no_cache, max_concurrency, votes)
        result = asyncio.run(pass_rate(j, samples, votes=votes, seed=seed, strict=strict,
                                       max_concurrency=max_concurrency))
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    _write(out, [{**r.to_dict(), "judge": j.name} for r in result.results])
    doc = result.report()
    if ident is not None:
        doc["judge_config"] = ident
    _print(doc, json_out, [
        ("queries", lambda r: r["queries"]), ("errors", lambda r: r["errors"]),
        ("pass rate", lambda r: r["pass_rate"]), ("stable mean", lambda r: r["stable"]["mean"]),
        ("stable std", lambda r: r["stable"]["std"])])


@tooleval_app.command("winrate")
def winrate(candidate: Path = typer.Argument(..., help="Candidate model's answers."),
            reference: Path = typer.Argument(..., help="Reference model's answers."),
            judge: str | None = JUDGE, base_url: str | None = BASE_URL, votes: int = VOTES,
            judge_config: Path | None = JUDGE_CONFIG,
            pref_votes: int = typer.Option(1, "--pref-votes",
                                           help="Votes per order for solved status and "
                                                "preference."),
            seed: int = SEED, strict: bool = STRICT, subset: list[str] | None = SUBSET,
            limit: int | None = LIMIT, temperature: float = TEMPERATURE,
            max_concurrency: int = CONCURRENCY, timeout: float = TIMEOUT,
            no_cache: bool = NO_CACHE, out: Path | None = OUT,
            json_out: bool = JSON_OUT) -> None:
    """Win rate of CANDIDATE against REFERENCE (both answer orders judged)."""
    from toolscore import cli
    from toolscore.benchmarks.tooleval.passrate import pass_rate
    from toolscore.benchmarks.tooleval.winrate import report, win_rate

    async def go(j: Any, cand: list[Any], ref: list[Any]) -> tuple[Any, Any, Any]:
        pc = await pass_rate(j, cand, votes=votes, seed=seed, strict=strict,
                             max_concurrency=max_concurrency)
        pr = await pass_rate(j, ref, votes=votes, seed=seed, strict=strict,
                             max_concurrency=max_concurrency)
        comps = await win_rate(j, cand, ref, pc.passed(), pr.passed(), votes=pref_votes,
                               max_concurrency=max_concurrency)
        return pc, pr, comps

    try:
        cand, ref = _load(candidate, subset, limit), _load(reference, subset, limit)
        j, ident, votes = _configured(judge, base_url, judge_config,
                                      ("tooleval-pref", "tooleval-pass"), temperature, timeout,
                                      no_cache, max_concurrency, votes)
        pc, pr, comps = asyncio.run(go(j, cand, ref))
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    _write(out, [{**c.to_dict(), "judge": j.name} for c in comps])
    doc = report(comps, j.name, pref_votes)
    if ident is not None:
        doc["judge_config"] = ident
    doc["pass_rate"] = {"candidate": pc.report()["overall"], "reference": pr.report()["overall"],
                        "votes": votes, "seed": seed}
    doc["usage"] = j.usage.to_dict()
    _print(doc, json_out, [
        ("queries", lambda r: r["queries"]), ("errors", lambda r: r["errors"]),
        ("wins", lambda r: r["wins"]), ("ties", lambda r: r["ties"]),
        ("losses", lambda r: r["losses"]), ("win rate", lambda r: r["win_rate"]),
        ("first-shown picks", lambda r: r["position_bias"]["first_shown_pick_rate"])])


def register(app: typer.Typer) -> None:
    app.add_typer(tooleval_app, name="tooleval")
