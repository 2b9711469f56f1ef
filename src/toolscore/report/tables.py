"""Terminal tables of a run's metrics. The columns are the benchmark's own
(``Benchmark.columns`` and ``headline_rows``), so no benchmark's keys are named here."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolscore.benchmarks.base import Column
from toolscore.text import printable


def fmt(value: Any, kind: str = "number") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if kind == "rate" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{100 * value:.1f}%"
    if kind == "count" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def headline(benchmark: str | None, metrics: dict[str, Any]
             ) -> tuple[list[Column], dict[str, dict[str, Any]]]:
    """(columns, rows) of a benchmark's headline table; a benchmark that is not installed
    gets every numeric metric of every group."""
    from toolscore.benchmarks.registry import benchmark_class

    try:
        cls = benchmark_class(str(benchmark))
        rows = cls.headline_rows(metrics)
        columns = list(cls.columns)
    except LookupError:
        rows, columns = {}, []
    if not columns:
        rows = rows or {k: v for k, v in metrics.items() if isinstance(v, dict)}
        keys = dict.fromkeys(k for v in rows.values() for k, x in v.items()
                             if isinstance(x, (int, float)) and not isinstance(x, bool))
        columns = [Column(k, k, "number") for k in keys]
    return columns, rows


def summary_lines(benchmark: str | None, metrics: dict[str, Any]) -> list[str]:
    from toolscore.benchmarks.registry import benchmark_class

    try:
        return benchmark_class(str(benchmark)).summary_lines(metrics)
    except LookupError:
        return []


def metrics_table(title: str, benchmark: str | None, metrics: dict[str, Any],
                  width: int = 80) -> Group:
    """The title, then one row per group (split) of ``scores.json`` and one column per
    benchmark column, or the transpose when only that fits in ``width`` (the terminal).
    Figures are never cut: a column is never narrower than its widest figure; only headers
    and group names may wrap."""
    columns, rows = headline(benchmark, metrics)
    return Group(Text(title), rows_table(columns, rows, width))


def rows_table(columns: list[Column], rows: dict[str, dict[str, Any]], width: int = 80,
               label: str = "group") -> Table:
    """One row per entry of ``rows`` (labelled in the ``label`` column), one column per
    ``columns``, or the transpose when only that fits in ``width``; see :func:`metrics_table`."""
    cells = {str(g): [fmt(m.get(c.key), c.kind) for c in columns] for g, m in rows.items()}
    titles = [c.title for c in columns]
    by_metric = [max([len(v[i]) for v in cells.values()] or [1]) for i in range(len(columns))]
    by_group = {g: max([len(x) for x in v] or [1]) for g, v in cells.items()}

    def natural(labels: list[str], heads: list[str], figures: list[int]) -> int:
        return (max([5, *map(len, labels)]) + 4
                + sum(max(len(h), f) + 3 for h, f in zip(heads, figures, strict=True)))

    normal = natural(list(cells), titles, by_metric)
    transposed = natural(titles, list(cells), list(by_group.values()))
    flip = normal > width and (transposed <= width or
                               sum(f + 3 for f in by_group.values()) < sum(by_metric) + 3 * len(
                                   by_metric))
    table = Table(title_justify="left")
    if not flip or not rows:
        table.add_column(label, overflow="fold")
        for c, figure in zip(columns, by_metric, strict=True):
            table.add_column(c.title, justify="right", overflow="fold", min_width=figure)
        for group, values in cells.items():
            table.add_row(escape(group), *values)
    else:
        table.add_column("metric", overflow="fold")
        for group, figure in by_group.items():
            table.add_column(escape(group), justify="right", overflow="fold", min_width=figure)
        for i, c in enumerate(columns):
            table.add_row(escape(c.title), *(values[i] for values in cells.values()))
    return table


def run_title(config: dict[str, Any]) -> str:
    """Who and what produced the numbers: benchmark, model, mode, embedder, judge, user."""
    from toolscore.report.view import run_view

    view = run_view(config)
    bench = config.get("benchmark_config") or {}
    parts = [str(config.get("benchmark")), f"model {config.get('model')}"]
    mode = view.mode()
    if mode:
        parts.append(f"{mode} mode")
    if bench.get("embedder_id") or bench.get("embedder"):
        parts.append(f"embedder {bench.get('embedder_id') or bench.get('embedder')}")
    parts += [f"{role} {who}" for role, who in view.roles().items() if who]
    return " · ".join(parts)


def _has_figures(columns: list[Column], rows: dict[str, dict[str, Any]]) -> bool:
    return any(isinstance(row.get(c.key), (int, float)) and not isinstance(row.get(c.key), bool)
               for row in rows.values() for c in columns)


def print_run_summary(console: Console, config: dict[str, Any], metrics: dict[str, Any],
                      summary: dict[str, Any] | None = None,
                      run_dir: str | Path | None = None) -> None:
    """The run's title, metrics table, the benchmark's summary lines and a usage line. When
    every sample ended in an infrastructure error there is nothing to tabulate: the title,
    then how many samples and why (their distinct error messages, read from ``run_dir``;
    without it, the count alone)."""
    from toolscore.report.errors import error_lines, run_errors

    benchmark = config.get("benchmark")
    columns, rows = headline(benchmark, metrics)
    errors = metrics.get("errors", 0)
    total, counts = (errors if isinstance(errors, int) else 0), None
    if run_dir is not None:
        try:
            total, counts = run_errors(run_dir)
        except Exception:  # noqa: BLE001 - the table below still says what it can
            counts = None
    failed = (bool(counts) and sum(n for _, n in counts) == total if counts is not None
              else bool(total) and not _has_figures(columns, rows))
    usage = "" if not summary else (
        f"model calls {summary.get('calls', 0)} (cached {summary.get('cached_calls', 0)})"
        f" · tokens {summary.get('tokens', 0)} · wall {summary.get('wall_s', 0):.1f}s")
    if failed:
        console.print(Text(run_title(config)))
        for line in error_lines(total, counts):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        if usage:
            console.print(usage, highlight=False, markup=False)
        return
    console.print(Group(Text(run_title(config)), rows_table(columns, rows, console.width)))
    for line in summary_lines(benchmark, metrics):
        console.print(line, highlight=False, markup=False)
    line = f"errors (excluded from scores): {errors}" + (f" · {usage}" if usage else "")
    console.print(line, highlight=False)


def print_file_scores(console: Console, doc: dict[str, Any]) -> bool:
    """Files in a method's own output format, scored one by one (``{"benchmark", "results":
    [{"name", ...}]}``, e.g. AutoDE's recorded runs): one row per file with the benchmark's
    headline columns and its first headline row (AutoDE: the published metric), so a folder
    of runs reads as the paper's table. False, and nothing printed, when ``doc`` holds no
    such results (the caller then prints the document as it is)."""
    benchmark = doc.get("benchmark")
    columns: list[Column] = []
    rows: dict[str, dict[str, Any]] = {}
    shown = ""
    for n, result in enumerate(doc.get("results") or [], start=1):
        if not isinstance(result, dict):
            continue
        cols, groups = headline(benchmark, result)
        if not groups:
            continue
        group, row = next(iter(groups.items()))
        columns, shown = columns or cols, shown or str(group)
        rows[printable(str(result.get("name") or f"file {n}"))] = row
    if not rows:
        return False
    files = f"{len(rows)} scored file{'s' if len(rows) != 1 else ''}"
    title = f"{benchmark} · {files} · {shown} scores (all figures: --json)"
    console.print(Group(Text(title), rows_table(columns, rows, console.width, label="file")))
    written = doc.get("out")
    if isinstance(written, list) and written:
        folder = Path(str(written[0])).parent
        console.print(f"scores of each file written to {folder}", highlight=False,
                      markup=False, soft_wrap=True)
    return True
