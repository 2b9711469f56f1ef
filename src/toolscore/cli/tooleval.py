"""``toolscore tooleval passrate|winrate``: ToolEval's LLM-judged metrics, written as runs.

Both are thin aliases over the pipeline every benchmark uses (:mod:`toolscore.runs.judging`):
``passrate`` evaluates the ``tooleval`` benchmark with the judge as the run's model,
``winrate`` the ``tooleval-winrate`` one. So each writes a run directory (``--out``, every
verdict with its raw judge output in samples.jsonl), resumes when pointed at its own directory
again, and can be reported, compared and exported; the tables printed are the ones these
commands have always printed. Parse, call, print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from toolscore.cli.common import UserErrors, emit_json, exit_if_incomplete, progress_wanted

tooleval_app = click.Group("tooleval", help="ToolEval: pass rate and win rate with an LLM judge.")


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _print(doc: dict[str, Any], json_out: bool, columns: list[tuple[str, Any]]) -> None:
    if json_out:
        emit_json(doc)
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
    console.print(f"mode: {doc.get('mode')}" + (f", seed {doc['seed']}" if "seed" in doc
                                                 else ""), highlight=False)
    if doc.get("prompts"):
        console.print(f"prompts: {doc['prompts']}", highlight=False)
    usage = doc.get("usage") or {}
    console.print(
        f"judge tokens: {usage.get('input_tokens', 0)} in, "
        f"{usage.get('output_tokens', 0)} out; calls {usage.get('calls', 0)}, "
        f"cached {usage.get('cached_calls', 0)}"
    )
    console.print(f"run directory: {doc['run_dir']}", highlight=False, soft_wrap=True)


def _document(run: Any) -> dict[str, Any]:
    doc = dict(run.metrics or {})
    doc["run_dir"] = str(run.path)  # errors are said after the table (exit_if_incomplete)
    return doc


def _judge_options(f: Any) -> Any:
    """The options both commands share (applied bottom-up, so listed in reverse)."""
    for decorator in reversed([
        click.option("--judge", "judge", default=None,
                     help="Judge model, provider/model (e.g. openai/gpt-4o-mini)."),
        click.option("--base-url", "base_url", default=None,
                     help="OpenAI-compatible endpoint of the judge."),
        click.option("--mode", "mode", type=click.Choice(["reference", "stable"]),
                     default="reference", show_default=True,
                     help="reference: as ToolEval's code (function-calling verdicts, its "
                          "aggregation); stable: toolscore's procedure (JSON verdicts, "
                          "StableToolBench score; win rate in both orders, ties half)."),
        click.option("--votes", "votes", type=int, default=4,
                     help="Pass-rate judgements per query (the reference's default 4)."),
        click.option("--judge-config", "judge_config", type=click.Path(path_type=Path),
                     default=None,
                     help="Judge configuration file (JSON/YAML: name, kind, model, base_url, "
                          "template, temperature, votes); its settings replace --judge, "
                          "--base-url, --temperature, --votes."),
        click.option("--seed", "seed", type=int, default=0,
                     help="Seed of the coin flips (unsure votes, ties, order)."),
        click.option("--test-ids", "test_ids", type=click.Path(path_type=Path), default=None,
                     help="ToolBench test-id files (a folder of <subset>.json): only queries "
                          "in both the answers and the list, as the reference."),
        click.option("--strict", "strict", is_flag=True,
                     help="A give-up answer fails (the reference lets it pass when the judge "
                          "calls the task unsolvable)."),
        click.option("--subset", "subset", multiple=True,
                     help="Only these subsets (repeatable), e.g. G1_tool."),
        click.option("--limit", "limit", type=int, default=None,
                     help="Only the first N queries of each subset."),
        click.option("--temperature", "temperature", type=float, default=None,
                     help="Judge sampling temperature (default 0.2 in the reference mode, "
                          "0.7 in the stable mode)."),
        click.option("--max-concurrency", "max_concurrency", type=int, default=8,
                     help="Queries judged at once."),
        click.option("--timeout", "timeout", type=float, default=120.0,
                     help="Seconds per judge call before retrying."),
        click.option("--no-cache", "no_cache", is_flag=True,
                     help="Do not cache judge responses."),
        click.option("--out", "out", type=click.Path(path_type=Path), default=None,
                     help="Run directory (default runs/<benchmark>-<judge>-<time>); an "
                          "existing one with the same settings is finished, not redone."),
        click.option("--json", "json_out", is_flag=True,
                     help="Print one JSON document on stdout."),
    ]):
        f = decorator(f)
    return f


def _settings(kw: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of :mod:`toolscore.runs.judging` from the shared options."""
    return {"base_url": kw["base_url"], "judge_config": kw["judge_config"], "out": kw["out"],
            "mode": kw["mode"], "votes": kw["votes"], "seed": kw["seed"],
            "strict": kw["strict"], "test_ids": kw["test_ids"],
            "subset": list(kw["subset"] or ()), "per_subset": kw["limit"],
            "temperature": kw["temperature"], "max_concurrency": kw["max_concurrency"],
            "timeout": kw["timeout"], "cache": None if kw["no_cache"] else "default",
            "progress": progress_wanted(kw["json_out"])}


@tooleval_app.command("passrate")
@click.argument("directory", type=click.Path(path_type=Path))
@_judge_options
def passrate(directory: Path, **kw: Any) -> None:
    """Pass rate of the answers in DIRECTORY (reference and stable rules), as a run of the
    tooleval benchmark (the same as `toolscore run tooleval --answers DIRECTORY`).

    DIRECTORY may also be a toolscore run directory (run.json): its transcripts are judged.
    """
    from toolscore.runs.judging import pass_rate

    with UserErrors():
        run = pass_rate(directory, kw["judge"], **_settings(kw))
    _print(_document(run), kw["json_out"], [
        ("queries", lambda r: r["queries"]),
        ("unanswered", lambda r: r.get("unanswered")),
        ("errors", lambda r: r["errors"]),
        ("pass rate", lambda r: r["pass_rate"]),
        ("stable mean", lambda r: r["stable"]["mean"]),
        ("stable std", lambda r: r["stable"]["std"]),
    ])
    exit_if_incomplete(run, "judgements", "the same command again retries exactly those")


@tooleval_app.command("winrate")
@click.argument("candidate", type=click.Path(path_type=Path))
@click.argument("reference", type=click.Path(path_type=Path))
@click.option("--pref-votes", "pref_votes", type=int, default=1,
              help="Stable mode: votes per order for solved status and preference.")
@click.option("--rounds", "rounds", type=int, default=2, show_default=True,
              help="Reference mode: rounds per query (the reference's evaluate_times).")
@click.option("--use-pass-rate", "use_pass_rate", is_flag=True,
              help="Reference mode: statuses from the pass-rate labels (the reference's "
                   "--use_pass_rate), not judged per round.")
@_judge_options
def winrate(candidate: Path, reference: Path, pref_votes: int, rounds: int,
            use_pass_rate: bool, **kw: Any) -> None:
    """Win rate of CANDIDATE against REFERENCE, as a run (reference mode: rounds, ties
    apart; stable mode: both answer orders judged, ties half).

    Each may be answer files, a toolscore run (its transcripts are judged) or a tooleval run
    (its stored pass labels and verdicts are reused, not judged again).
    """
    from toolscore.runs.judging import win_rate

    with UserErrors():
        run = win_rate(candidate, reference, kw["judge"], pref_votes=pref_votes,
                       rounds=rounds, use_pass_rate=use_pass_rate, **_settings(kw))
    _print(_document(run), kw["json_out"], [
        ("queries", lambda r: r["queries"]),
        ("errors", lambda r: r["errors"]),
        ("wins", lambda r: r["wins"]),
        ("ties", lambda r: r["ties"]),
        ("losses", lambda r: r["losses"]),
        ("win rate", lambda r: r["win_rate"]),
        ("tie rate", lambda r: r.get("tie_rate")),
        ("first-shown picks", lambda r: r["position_bias"]["first_shown_pick_rate"]),
    ])
    exit_if_incomplete(run, "comparisons", "the same command again retries exactly those")


COMMANDS = [tooleval_app]
