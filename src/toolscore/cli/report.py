"""``toolscore compare``, ``report`` and ``export``: reading finished runs, never running models.

Like the rest of the CLI: parse, call the library, print; ``--json`` prints exactly one
document; a user mistake is one line on stderr and exit code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolscore.cli.common import (
    FAIL_UNDER_HELP,
    JUNIT_HELP,
    USER_ERRORS,
    check_gate_options,
    emit_json,
    err,
    exit_on_gates,
    run_gates,
    say_gates,
)
from toolscore.cli.common import fail as _fail
from toolscore.records.paths import check_output_path
from toolscore.report.compare_table import num as _num
from toolscore.report.compare_table import print_comparison


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option(
    "--metric",
    "metric",
    multiple=True,
    help="Compare only this headline metric or per-sample score (repeatable).",
)
@click.option(
    "--test", "test", default="wilcoxon", help="Paired test for numeric scores: wilcoxon | sign."
)
@click.option(
    "--resamples",
    "resamples",
    type=int,
    default=2000,
    help="Bootstrap resamples for the intervals.",
)
@click.option("--seed", "seed", type=int, default=0, help="Bootstrap seed.")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--prices", "prices_file", type=click.Path(path_type=Path), default=None,
              help="Price file (JSON/YAML, per million tokens) over the pinned price table.")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when RUN_B is significantly worse than RUN_A (the base) on the "
                   "primary metric (each --metric if given): worse, with the paired test's p "
                   "below --alpha; one line per failed gate on stderr.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level of --fail-on-regression and of --junit's gates.")
@click.option("--junit", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Also write JUnit XML to FILE for CI: one testcase per regression gate.")
def compare(run_a: Path, run_b: Path, metric: list[str] | None, test: str, resamples: int,
            seed: int, json_out: bool, fail_on_regression: bool, alpha: float,
            junit: Path | None, prices_file: Path | None) -> None:
    """Paired comparison of two runs: the benchmark's headline metrics and the per-sample
    scores, with differences, CIs, tests, flipped samples and warnings."""
    from toolscore.models.prices import price_table
    from toolscore.report.compare import compare_runs
    from toolscore.report.gates import check_regression

    try:
        check_gate_options((), junit)
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"--alpha {alpha}: must be between 0 and 1 (e.g. 0.05)")
        prices = price_table(prices_file) if prices_file is not None else None
        result = compare_runs(run_a, run_b, metrics=metric or None, continuous_test=test,
                              n_resamples=resamples, seed=seed, prices=prices)
        gates = check_regression(result, alpha, metric) if fail_on_regression or junit else []
    except USER_ERRORS as e:
        _fail(str(e))
        return
    if fail_on_regression:
        result["gates"] = [g.to_dict() for g in gates]
    if junit is not None:
        from toolscore.report.junit import compare_junit, write_junit

        try:
            err.print(f"wrote {write_junit(compare_junit(result, gates), junit)}",
                      highlight=False, soft_wrap=True, markup=False)
        except OSError as e:
            _fail(f"--junit {junit}: cannot be written ({e})")
    if json_out:
        emit_json(result)
    else:
        print_comparison(Console(), result)
    if fail_on_regression:
        say_gates(gates)
        exit_on_gates(gates)


# -- report ----------------------------------------------------------------------------------
def _shown_ks(epochs: int) -> list[int]:
    return list(range(1, epochs + 1)) if epochs <= 4 else sorted({1, 2, epochs // 2, epochs})


def _repeats_table(repeats: dict[str, Any]) -> Table:
    splits = repeats["splits"]
    epochs = max(s["epochs"] for s in splits.values())
    ks = _shown_ks(epochs)
    table = Table(
        title=f"repeats of {repeats['metric']} ({epochs} epochs) · noise floor = "
        "smallest real difference between two runs at 95%",
        title_justify="left",
    )
    table.add_column("split")
    table.add_column("samples", justify="right")
    for k in ks:
        table.add_column(f"pass@{k}", justify="right")
    for k in ks[1:]:
        table.add_column(f"pass^{k}", justify="right")
    for col in (
        "flip rate",
        "noise floor (1 run)",
        f"noise floor ({epochs} epochs)",
        "empirical (1 run)",
    ):
        table.add_column(col, justify="right")
    order = [s for s in splits if s != "all"] + (["all"] if "all" in splits else [])
    for name in order:
        s = splits[name]
        table.add_row(
            name,
            str(s["samples"]),
            *(_num(s["pass_at_k"].get(str(k)), True) for k in ks),
            *(_num(s["pass_hat_k"].get(str(k)), True) for k in ks[1:]),
            _num(s["flip_rate"], True),
            _num(s["noise_floor"], True),
            _num(s["noise_floor_k_epochs"], True),
            _num(s["noise_floor_empirical"], True),
        )
    return table


def print_overview(console: Console, doc: dict[str, Any]) -> None:
    from toolscore.report.usage import reasoning_note

    parts = [str(doc["benchmark"]), f"model {doc['model']}"]
    if doc.get("mode"):
        parts.append(f"{doc['mode']} mode")
    for key in ("judge", "user", "embedder"):
        if doc.get(key):
            parts.append(f"{key} {doc[key]}")
    parts.append(f"epochs {doc['epochs']}")
    if doc["seeds"]:
        parts.append("seeds " + ", ".join(f"{k}={v}" for k, v in doc["seeds"].items()))
    title = " · ".join(parts)
    counts = doc["counts"].get("all", {"samples": 0, "records": 0, "errors": 0})
    if counts["records"] and counts["errors"] == counts["records"]:
        _print_failed_run(console, title, doc, counts["records"])
        return
    if doc["metrics"]:
        from toolscore.report.tables import metrics_table, summary_lines

        console.print(metrics_table(title, doc["benchmark"], doc["metrics"], console.width))
        for line in summary_lines(doc["benchmark"], doc["metrics"]):
            console.print(line, highlight=False, markup=False)
    else:
        console.print(escape(title) + " · no scores.json (run `toolscore score` on it)")
    if doc.get("note"):
        console.print(f"[yellow]note:[/yellow] {escape(doc['note'])}", highlight=False)
    intervals = (doc.get("intervals") or {}).get("splits") or {}
    if any(intervals.values()):
        console.print(_intervals_table(doc["intervals"]))
    console.print(
        f"samples {counts['samples']} · (sample, epoch) records {counts['records']} · "
        f"errors (excluded from scores) {counts['errors']}",
        highlight=False,
    )
    if doc["repeats"]:
        console.print(_repeats_table(doc["repeats"]))
    u = doc["usage"]
    console.print(
        f"tokens {u['tokens']} (in {u['input_tokens']}, out {u['output_tokens']}"
        f"{reasoning_note(u)}) · "
        f"tokens per run (epoch) {u['tokens_per_run']:.0f} · model calls {u['calls']} "
        f"(cached {u['cached_calls']})",
        highlight=False,
    )
    console.print(_usage_table(doc))
    for line in _cost_notes(doc.get("cost")):
        console.print(line, highlight=False)


def _print_failed_run(console: Console, title: str, doc: dict[str, Any], records: int) -> None:
    """Every record ended in an infrastructure error: no table has anything to show, so the
    title, then how many and why (the distinct error messages)."""
    from toolscore.report.errors import error_lines, run_errors

    console.print(title, highlight=False, markup=False)
    for line in error_lines(records, run_errors(doc["run_dir"])[1]):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    u = doc["usage"]
    console.print(f"tokens {u['tokens']} · model calls {u['calls']} (cached "
                  f"{u['cached_calls']})", highlight=False, markup=False)


def _intervals_table(intervals: dict[str, Any]) -> Table:
    """The benchmark's headline metrics (rows) per split (columns) with 95% intervals."""
    splits = intervals["splits"]
    labels = list(dict.fromkeys(m["label"] for rows in splits.values() for m in rows))
    what = "samples" if intervals["resampled"] == "samples" else "(sample, epoch) records"
    table = Table(title=f"headline metrics with 95% bootstrap intervals (resampling {what})",
                  title_justify="left")
    table.add_column("metric")
    for split in splits:
        table.add_column(escape(split), justify="right")
    for label in labels:
        cells = []
        for rows in splits.values():
            m = next((x for x in rows if x["label"] == label), None)
            pct = m is not None and m["kind"] == "rate"
            bounds = "-" if m is None else ", ".join(
                _num(m[k], pct).rstrip("%") for k in ("low", "high"))
            cells.append("-" if m is None else f"{_num(m['value'], pct)} [{bounds}]")
        table.add_row(escape(label), *cells)
    return table


def _usage_table(doc: dict[str, Any]) -> Table:
    """Tokens and cost per model role."""
    from toolscore.report.usage import format_cost, reasoning_note

    costs = (doc.get("cost") or {}).get("by_role")
    table = Table(title="tokens per model role (per run = per epoch)", title_justify="left")
    columns = ["role", "model", "calls", "cached", "input", "output", "tokens", "per run"]
    if costs is not None:
        columns += ["cost", "cost per run"]
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i < 2 else "right")
    for role, u in (doc.get("usage_by_role") or {}).items():
        row = [
            role,
            escape(str(u.get("model") or "-")),
            str(u["calls"]),
            str(u["cached_calls"]),
            str(u["input_tokens"]),
            str(u["output_tokens"]) + reasoning_note(u),
            str(u["tokens"]),
            f"{u['tokens_per_run']:.0f}",
        ]
        if costs is not None:
            c = costs.get(role) or {}
            partial = " (partial)" if c.get("partial") else ""
            row += [
                format_cost(c.get("cost")) + partial if c.get("priced") else "unpriced",
                format_cost(c.get("cost_per_run")) + partial if c.get("priced") else "-",
            ]
        table.add_row(*row)
    return table


def _cost_notes(cost: dict[str, Any] | None) -> list[str]:
    from toolscore.report.usage import cost_lines

    return [] if cost is None else cost_lines(cost, markup=True)


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--seed", "seed", type=int, default=0, help="Seed of the empirical noise-floor bootstrap."
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document on stdout.")
@click.option(
    "--html",
    "html_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write a self-contained HTML report here.",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Price file (JSON or YAML): {model: {input_per_mtok, output_per_mtok}}, over the "
    "pinned price table (`toolscore data prices`). Models in neither are listed as unpriced.",
)
@click.option("--fail-under", "fail_under", multiple=True, metavar="METRIC=VALUE",
              help=FAIL_UNDER_HELP)
@click.option("--junit", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help=JUNIT_HELP)
def report(run_dir: Path, seed: int, json_out: bool, html_out: Path | None,
           prices_file: Path | None, fail_under: tuple[str, ...], junit: Path | None) -> None:
    """Summarise a run: headline metrics per split, repeats (pass@k, pass^k, noise), tokens
    and cost per model role."""
    from toolscore.models.prices import price_table
    from toolscore.report.overview import run_overview

    try:
        check_output_path(html_out, "--html")
        floors = check_gate_options(fail_under, junit)
        prices = price_table(prices_file) if prices_file is not None else None
        if html_out is None:
            doc = run_overview(run_dir, seed=seed, prices=prices)
        else:  # the page's overview is the terminal report's: the run is read once
            from toolscore.report.html.page import write_report

            page, doc = write_report(run_dir, html_out, seed=seed, prices=prices)
            err.print(f"wrote {page}", highlight=False, soft_wrap=True)
        gates, problem = run_gates(run_dir, floors, junit, doc)
    except USER_ERRORS + (OSError,) as e:  # OSError: --html FILE cannot be written
        _fail(str(e))
        return
    if json_out:
        emit_json(doc)
    else:
        print_overview(Console(), doc)
    say_gates(gates, problem)
    exit_on_gates(gates)


COMMANDS = [compare, report]
