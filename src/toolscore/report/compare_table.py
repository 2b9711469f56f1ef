"""The terminal view of ``toolscore compare``: the headline and per-sample comparison tables,
the primary metric per split, the flipped samples and the warnings."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

MAX_FLIPS_SHOWN = 20


def num(value: Any, pct: bool, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if pct:
        return f"{100 * value:.{digits}f}%"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def p_text(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _diff_cell(m: dict[str, Any], pct: bool) -> str:
    if m["diff"] is None:
        return "-"
    return f"{num(m['diff'], pct)} [{num(m['ci_low'], pct)}, {num(m['ci_high'], pct)}]"


def _comparison_table(title: str, rows: list[dict[str, Any]], a: str, b: str,
                      with_definition: bool) -> Table:
    table = Table(title=escape(title), title_justify="left")
    columns = [("metric", "left"), ("A", "right"), ("B", "right"),
               ("diff [95% CI]", "right"), ("test", "left"), ("p", "right")]
    if with_definition:
        columns.append(("definition", "left"))
    for col, justify in columns:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for m in rows:
        pct = m["rate"]
        cells = [escape(str(m["metric"])), num(m[a], pct), num(m[b], pct), _diff_cell(m, pct),
                 m["test"] or "-", p_text(m["p_value"])]
        if with_definition:
            cells.append(escape(m.get("definition") or ""))
        table.add_row(*cells)
    return table


def print_comparison(console: Console, result: dict[str, Any]) -> None:
    a, b = result["run_a"], result["run_b"]
    title = (
        f"A = {a['model']} ({a['path']})  vs  B = {b['model']} ({b['path']}) · "
        f"{result['shared']} shared (sample, epoch) pairs · diff = B - A, 95% bootstrap CI "
        f"resampling {result['bootstrap'].get('resampled', '(sample, epoch) pairs')}"
    )
    console.print(escape(title), highlight=False, soft_wrap=True)
    if result.get("headline"):
        console.print(_comparison_table(
            "headline metrics, as the benchmark computes them (its micro averages where it "
            "sums counts)", result["headline"], "value_a", "value_b", True))
    if result.get("per_sample"):
        console.print(_comparison_table(
            "per-sample scores: mean over (sample, epoch) pairs (not the benchmark's "
            "aggregation where it sums counts)", result["per_sample"], "mean_a", "mean_b",
            False))
    for split, m in (result.get("by_split") or {}).items():
        if m["diff"] is None:
            continue
        pct = m["rate"]
        console.print(
            f"  {escape(split)}: {escape(m['metric'])} {num(m['mean_a'], pct)} -> "
            f"{num(m['mean_b'], pct)}, diff {num(m['diff'], pct)} "
            f"[{num(m['ci_low'], pct)}, {num(m['ci_high'], pct)}], "
            f"{m['test']} p {p_text(m['p_value'])} (n {m['n']})",
            highlight=False,
        )
    flips = result.get("flips")
    if flips:
        for key, label in (
            ("fail_a_pass_b", "fail in A, pass in B"),
            ("pass_a_fail_b", "pass in A, fail in B"),
        ):
            items = flips[key]
            names = ", ".join(f"{f['id']}#{f['epoch']}" for f in items[:MAX_FLIPS_SHOWN])
            more = (
                f" … and {len(items) - MAX_FLIPS_SHOWN} more"
                if len(items) > MAX_FLIPS_SHOWN
                else ""
            )
            console.print(
                f"{escape(flips['metric'])} {label}: {len(items)}"
                + (f" ({escape(names)}{more})" if items else ""),
                highlight=False,
            )
    if result.get("cost"):
        from toolscore.report.compare_cost import cost_comparison_table, cost_notes

        console.print(cost_comparison_table(result["cost"]))
        for line in cost_notes(result["cost"]):
            console.print(line, highlight=False)
    for w in result["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
