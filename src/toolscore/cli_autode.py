"""AutoDE's commands: ``run autode`` options, ``score autode --predictions``, ``agree`` and the
``autode`` group (``gap`` between two runs, ``generate-scripts`` for new APIs).

``register(app)`` adds ``agree`` and the group, and extends the generic ``run`` and ``score``
commands in place: their options and behaviour are unchanged for other benchmarks, and
``autode`` gets its own (``--mode``, ``--user-model``, ``--trials``, ``--apis``, ``--scripts``;
``--predictions FILE`` for released result files). Extending instead of redefining keeps one
``run`` command and keeps this code out of ``cli.py``. No evaluation logic here: parse, call
the library, print.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

# name -> (annotation, typer option) added to ``run``; all default to "not given"
RUN_OPTIONS: dict[str, tuple[Any, Any]] = {
    "mode": (str, typer.Option("dynamic", help="AutoDE: dynamic | static | human.")),
    "user_model": (str | None, typer.Option(
        None, "--user-model", help="AutoDE: model playing the user (default: the assistant's).")),
    "user_base_url": (str | None, typer.Option(
        None, "--user-base-url", help="AutoDE: OpenAI-compatible endpoint of the user model.")),
    "trials": (int | None, typer.Option(
        None, help="AutoDE: independent trials per user script (default: --epochs).")),
    "apis": (Path | None, typer.Option(
        None, "--apis", help="AutoDE: API documents (.xlsx, .json, .yaml) instead of the "
                             "released ones.")),
    "scripts": (Path | None, typer.Option(
        None, "--scripts", help="AutoDE: user scripts (JSONL, released shape) instead of the "
                                "released ones.")),
}
SCORE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "data_dir": (Path | None, typer.Option(None, "--data", help="AutoDE dataset folder.")),
}


def _extend(info: Any, extra: dict[str, tuple[Any, Any]],
            handler: Callable[[Callable[..., Any], dict[str, Any], dict[str, Any]], Any]) -> None:
    """Give a registered command extra options; ``handler(original, args, extra_args)`` runs."""
    original = info.callback
    sig = inspect.signature(original, eval_str=True)
    params = list(sig.parameters.values())
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                 annotation=annotation)
               for name, (annotation, option) in extra.items()]

    def command(**kwargs: Any) -> Any:
        added = {name: kwargs.pop(name) for name in extra}
        return handler(original, kwargs, added)

    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = original.__doc__
    command.__name__ = original.__name__
    info.callback = command


def register(app: typer.Typer) -> None:
    for info in app.registered_commands:
        name = info.name or getattr(info.callback, "__name__", "")
        if name == "run":
            _extend(info, RUN_OPTIONS, _run)
        elif name == "score":
            _extend(info, SCORE_OPTIONS, _score)
    app.command("agree")(agree)
    app.add_typer(autode_app, name="autode")


# -- run ---------------------------------------------------------------------------------------
def _run(original: Callable[..., Any], args: dict[str, Any], extra: dict[str, Any]) -> None:
    from toolscore import cli

    if args["benchmark"] != "autode":
        given = [f"--{k.replace('_', '-')}" for k, v in extra.items()
                 if v is not None and not (k == "mode" and v == "dynamic")]
        if given:
            cli._fail(f"{', '.join(given)}: AutoDE options; not used by {args['benchmark']!r}")
        original(**args)
        return
    from toolscore.runs.session import RunRequest, start_run

    mode = extra["mode"]
    human = mode == "human"
    cache = None if args["no_cache"] else str(args["cache"] or "default")
    options = {"mode": mode, "user_model": extra["user_model"],
               "user_base_url": extra["user_base_url"], "user_cache": cache,
               "tools": args["tools"]}
    for key in ("apis", "scripts"):
        if extra[key] is not None:
            options[key] = str(extra[key].resolve())
    request = RunRequest(
        benchmark="autode", model=args["model"], data=args["data"],
        epochs=extra["trials"] or args["epochs"], limit=args["limit"],
        max_concurrency=1 if human else args["max_concurrency"],
        cache=None if args["no_cache"] else (args["cache"] or "default"),
        base_url=args["base_url"], timeout=args["timeout"],
        progress=not human and not args["json_out"] and sys.stderr.isatty(), options=options)
    try:
        if args["resume"] is not None:
            result = start_run(request, args["resume"], resume=True)
        else:
            out = args["out"] or cli._default_run_dir(f"autode-{mode}", args["model"])
            result = start_run(request, out)
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    if args["json_out"]:
        cli._emit_json(result)
        return
    print_metrics(Console(), result["config"], result["metrics"], result.get("summary"))
    Console().print(f"run directory: {result['run_dir']}")


def _pm(exact: dict[str, Any]) -> str:
    std = exact.get("f1_std")
    return (f"P {exact['precision']:.2f} / R {exact['recall']:.2f} / F1 {exact['f1']:.2f}"
            + (f" ±{std:.2f}" if std is not None else ""))


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2%}"


def _questions(row: dict[str, Any]) -> str:
    rate, share = row.get("redundant_question_rate", row.get("redundant_rate")), row.get(
        "dialogues_with_redundant_questions", row.get("dialogues_with_redundant"))
    return (f"{row['redundant_questions']} of {row['questions']} questions"
            + ("" if rate is None else f" ({rate:.2%})")
            + ("" if share is None else f" · in {share:.2%} of dialogues"))


def print_metrics(console: Console, config: dict[str, Any], metrics: dict[str, Any],
                  summary: dict[str, Any] | None = None) -> None:
    bench = config.get("benchmark_config", {})
    console.print(f"autode · {bench.get('mode')} · assistant {config.get('model')}"
                  + (f" · user {bench['user_model']}" if bench.get("user_model") else ""))
    if "exact" not in metrics:
        console.print(f"no scored samples (errors: {metrics.get('errors', 0)})")
        return
    console.print(f"slot scores (published metric, x100): {_pm(metrics['exact'])}"
                  f"  [{metrics['n_cases']} cases x {metrics['n_trials']} trials]")
    sup, ana = metrics["supplementary"], metrics["analyses"]
    console.print(f"supplementary: normalised {_pm(sup['normalised'])} · exact match "
                  f"{sup['exact_match_rate']:.2%} · call rate {sup['call_rate']:.2%} · API "
                  f"accuracy {sup['api_accuracy']:.2%}")
    halluc = ana["hallucinated_parameter_rate_successful"]
    console.print(f"analyses: refusal rate {ana['refusal_rate']:.2%} · hallucinated "
                  f"parameters {'-' if halluc is None else f'{halluc:.2%}'} · mean dialogue "
                  f"length {ana['mean_dialogue_length']:.2f} · endings {metrics['endings']}")
    if ana.get("questions") is not None:
        console.print(f"redundant questions (asked for a value already given): "
                      f"{_questions(ana)}")
    line = f"errors (excluded from scores): {metrics.get('errors', 0)}"
    if summary:
        line += (f" · model calls {summary.get('calls', 0)} (cached "
                 f"{summary.get('cached_calls', 0)}) · tokens {summary.get('tokens', 0)}")
    console.print(line)


# -- score -------------------------------------------------------------------------------------
def _score(original: Callable[..., Any], args: dict[str, Any], extra: dict[str, Any]) -> None:
    from toolscore import cli

    target, predictions = args["target"], args["predictions"]
    if target != "autode" or predictions is None:
        run_json = Path(target) / "run.json"
        if predictions is None and run_json.is_file() and '"autode"' in run_json.read_text():
            _score_autode_run(Path(target), args["json_out"])
            return
        original(**args)
        return
    try:
        results = score_prediction_files(predictions, extra["data_dir"])
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    if args["json_out"]:
        cli._emit_json({"benchmark": "autode", "results": [m.to_dict() for m in results]})
        return
    table = Table(title="AutoDE slot scores (x100; ± = sample std over trials)",
                  title_justify="left")
    for col in ("file", "trials", "precision", "recall", "F1", "±", "redundant Q"):
        table.add_column(col, justify="left" if col == "file" else "right")
    for m in results:
        e = m.exact.to_dict()
        table.add_row(m.name, str(m.n_trials), f"{e['precision']:.2f}", f"{e['recall']:.2f}",
                      f"{e['f1']:.2f}", "-" if e["f1_std"] is None else f"{e['f1_std']:.2f}",
                      _rate((m.redundant_questions or {}).get("redundant_rate")))
    Console().print(table)


def _score_autode_run(run_dir: Path, json_out: bool) -> None:
    from toolscore import cli
    from toolscore.runs.session import rescore_run

    try:
        result = rescore_run(run_dir)
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    if json_out:
        cli._emit_json(result)
    else:
        print_metrics(Console(), result["config"], result["metrics"])


def _scripts(data_dir: Path | None) -> Any:
    from toolscore.benchmarks.autode import load_scripts
    from toolscore.data import find_dataset

    return load_scripts(find_dataset("autode", data_dir, download=False))


def score_prediction_files(predictions: Path, data_dir: Path | None) -> list[Any]:
    """Rescore a released result file, or every ``*.jsonl`` in a folder, against the gold."""
    from toolscore.benchmarks.autode import load_api_docs, score_results
    from toolscore.data import find_dataset

    root = find_dataset("autode", data_dir, download=False)
    files = sorted(predictions.glob("*.jsonl")) if predictions.is_dir() else [predictions]
    if not files:
        raise FileNotFoundError(f"{predictions}: no *.jsonl result files")
    scripts, docs = _scripts(data_dir), load_api_docs(root)
    return [score_results(f, scripts, docs) for f in files]


# -- agree -------------------------------------------------------------------------------------
def agree(
    runs: list[Path] = typer.Argument(..., help="AutoDE result files or run directories, one "
                                                "per assistant."),
    against: list[Path] = typer.Option(..., "--against", help="Reference runs (e.g. human), "
                                       "one per assistant, in the same order."),
    data_dir: Path | None = typer.Option(None, "--data", help="AutoDE dataset folder."),
    resamples: int = typer.Option(2000, help="Bootstrap resamples (over cases)."),
    confidence: float = typer.Option(0.95, help="Confidence level of the intervals."),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Agreement of one evaluation method with another (AutoDE): system-level Pearson r and
    ICC3 across assistants, sample-level per assistant, with bootstrap CIs over cases."""
    from toolscore import cli
    from toolscore.benchmarks.autode.compare import compare, load_case_scores

    try:
        scripts = _scripts(data_dir)
        result = compare([load_case_scores(p, scripts) for p in runs],
                         [load_case_scores(p, scripts) for p in against],
                         n_resamples=resamples, confidence=confidence, seed=seed)
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    if json_out:
        cli._emit_json(result)
        return
    console = Console()
    s = result["system"]

    def ci(row: dict[str, Any], key: str) -> str:
        low, high = row.get(f"{key}_ci", (None, None))
        return "" if low is None else f" [{low:.4f}, {high:.4f}]"

    console.print(f"system level ({s['n']} assistants, {result['n_cases']} cases, "
                  f"{confidence:.0%} bootstrap CI): Pearson r {s['pearson']:.4f}"
                  f"{ci(s, 'pearson')} · ICC3 {s['icc3']:.4f}{ci(s, 'icc3')}")
    table = Table(title="sample level (per-case F1)", title_justify="left")
    for col in ("run", "against", "Pearson r", "ICC3"):
        table.add_column(col)
    for row in result["sample"]:
        table.add_row(row["method"], row["reference"], f"{row['pearson']:.4f}{ci(row, 'pearson')}",
                      f"{row['icc3']:.4f}{ci(row, 'icc3')}")
    console.print(table)


# -- autode gap / generate-scripts -------------------------------------------------------------
autode_app = typer.Typer(no_args_is_help=True, help="AutoDE analyses and user-script tools.")


def _gold(runs: list[Path], data_dir: Path | None, scripts: Path | None,
          apis: Path | None) -> tuple[Any, Any]:
    """Scripts and API documents: as given, else a run directory's own, else the dataset's."""
    import json

    from toolscore.benchmarks.autode import load_api_docs, load_scripts
    from toolscore.data import find_dataset

    for run in runs:
        if (run / "run.json").is_file():
            saved = json.loads((run / "run.json").read_text()).get("request", {})
            scripts = scripts or saved.get("options", {}).get("scripts")
            apis = apis or saved.get("options", {}).get("apis")
            data_dir = data_dir or saved.get("data")
            break
    if scripts is None or apis is None:
        root = find_dataset("autode", data_dir, download=False)
    return (load_scripts(Path(scripts) if scripts else root),
            load_api_docs(Path(apis) if apis else root))


@autode_app.command("gap")
def gap_command(
    run_a: Path = typer.Argument(..., help="Run A: run directory or result file (e.g. static)."),
    run_b: Path = typer.Argument(..., help="Run B of the same assistant (e.g. dynamic)."),
    data_dir: Path | None = typer.Option(None, "--data", help="AutoDE dataset folder."),
    scripts: Path | None = typer.Option(None, "--scripts", help="User scripts (JSONL)."),
    apis: Path | None = typer.Option(None, "--apis", help="API documents."),
    top: int = typer.Option(10, help="Cases with the largest gaps to list."),
    resamples: int = typer.Option(2000, help="Bootstrap resamples (over cases)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """F1 gap between two runs of one assistant (A - B, per case and overall) and each run's
    redundant questions (asking for a value the user already gave)."""
    from toolscore import cli
    from toolscore.benchmarks.autode.analysis import gap, load_run_dialogues

    try:
        gold, docs = _gold([run_a, run_b], data_dir, scripts, apis)
        result = gap(load_run_dialogues(run_a, gold), load_run_dialogues(run_b, gold), gold,
                     docs, n_resamples=resamples)
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    if json_out:
        cli._emit_json(result)
        return
    console = Console()
    low, high = result["gap_ci"]
    ci = "" if low is None else f" [{low:.2f}, {high:.2f}]"
    for side in ("a", "b"):
        row = result[side]
        console.print(f"{side.upper()}: {row['label']} · F1 {row['f1']:.2f} · redundant "
                      f"questions {_questions(row)}", highlight=False)
    console.print(f"gap A - B over {result['n_cases']} cases: {result['gap']:+.2f} F1 points"
                  f"{ci} ({result['confidence']:.0%} bootstrap CI) · A better "
                  f"{result['a_better']} · B better {result['b_better']} · ties "
                  f"{result['ties']}", highlight=False)
    if top <= 0:
        return
    table = Table(title=f"largest gaps (top {top})", title_justify="left")
    for col in ("uuid", "api", "F1 A", "F1 B", "gap"):
        table.add_column(col, justify="left" if col in ("uuid", "api") else "right")
    for row in sorted(result["cases"], key=lambda r: -abs(r["gap"]))[:top]:
        table.add_row(row["uuid"], str(row["api"]), f"{row['f1_a']:.2f}", f"{row['f1_b']:.2f}",
                      f"{row['gap']:+.2f}")
    console.print(table)


@autode_app.command("generate-scripts")
def generate_scripts_command(
    apis: Path = typer.Option(..., "--apis", help="API documents (.xlsx, .json, .yaml)."),
    model: str = typer.Option(..., "--model", "-m", help="provider/model writing the scripts."),
    out: Path = typer.Option(..., "--out", help="Output JSONL file (released shape)."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
    per_api: int = typer.Option(1, "--per-api", min=1, help="Scripts to request per API."),
    temperature: float = typer.Option(0.7, help="Sampling temperature."),
    seed: int = typer.Option(0, help="Generation seed."),
    cache: Path | None = typer.Option(None, help="Response cache file (SQLite)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not cache model responses."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Write AutoDE user scripts for API documents with a model; every script is validated
    against its API, and rejected ones are counted and explained."""
    import asyncio

    from toolscore import cli
    from toolscore.benchmarks.autode import load_api_docs
    from toolscore.benchmarks.autode.generate import generate_scripts, write_scripts
    from toolscore.models import get_model
    from toolscore.models.client import ModelClient
    from toolscore.runs.session import _cache

    try:
        docs = load_api_docs(apis)
        client = ModelClient(get_model(model, **({"base_url": base_url} if base_url else {})),
                             cache=_cache(None if no_cache else (cache or "default")),
                             role="generator")
        report = asyncio.run(generate_scripts(client, docs, per_api=per_api,
                                              temperature=temperature, seed=seed))
    except cli.USER_ERRORS as e:
        cli._fail(str(e))
        return
    write_scripts(report.scripts, out)
    doc = {**report.to_dict(), "out": str(out), "model": model}
    if json_out:
        cli._emit_json(doc)
        return
    err = Console(stderr=True)
    for r in report.rejected:
        err.print(f"rejected: {r['message']}", highlight=False, markup=False)
    Console().print(f"{doc['valid']} of {doc['requested']} scripts valid, written to {out}; "
                    f"rejected {doc['rejected']} {doc['rejected_by_kind'] or ''}",
                    highlight=False, markup=False)
